from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response as ApiResponse

from accounts.permissions import IsReviewer
from core.stored_files import stream_response

from ..models import ExportJob
from ..selectors import RESPONSE_FILTERS
from .services import create_export_job, download_name, open_export
from .writers import FORMATS


class ExportJobSerializer(serializers.ModelSerializer):
    percent = serializers.IntegerField(read_only=True)
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = ExportJob
        fields = ["id", "format", "filters", "status", "done", "total", "percent", "error", "file_size", "manifest",
                  "created_by", "created", "finished", "heartbeat"]
        read_only_fields = fields


class ExportRequestSerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=FORMATS)
    filters = serializers.DictField(child=serializers.CharField(allow_blank=True), required=False,
                                    help_text=f"Response-list filters: {', '.join(RESPONSE_FILTERS)}.")


class ExportJobViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Dataset exports (reviewers and admins): start one, poll it, download the zip when done."""

    queryset = ExportJob.objects.select_related("created_by")
    serializer_class = ExportJobSerializer
    permission_classes = [IsReviewer]
    filterset_fields = ["status", "format"]

    @extend_schema(request=ExportRequestSerializer, responses={202: ExportJobSerializer})
    def create(self, request):
        data = ExportRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            job = create_export_job(request.user, data.validated_data["format"], data.validated_data.get("filters", {}))
        except ValueError as exc:
            return ApiResponse({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        job.refresh_from_db()
        return ApiResponse(ExportJobSerializer(job).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(responses={(200, "application/zip"): bytes})
    @action(detail=True, methods=["get"])
    def download(self, request, pk=None):
        job = self.get_object()
        stream = open_export(job)
        if stream is None:
            raise Http404("This export has no file (not finished, failed, or removed).")
        return stream_response(stream, download_name(job))
