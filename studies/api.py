"""REST API of the probe runs (reviewers and admins): start one, list them, follow a run's
progress, cancel or resume it (the same actions as every run: grading/runs/api.py)."""
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.response import Response as ApiResponse

from accounts.permissions import IsReviewer
from core.ids import MAX_ID
from grading.models import JudgeSetting
from grading.runs.api import RunActionsMixin

from . import selectors, services
from .models import ProbeRun


class ProbeRunSerializer(serializers.ModelSerializer):
    class Meta:
        model = ProbeRun
        fields = ["id", "setting", "probes", "selection", "seed", "skipped", "status", "epoch", "n_items",
                  "created", "resumed", "finished"]
        read_only_fields = fields


class StartProbeRunSerializer(serializers.Serializer):
    setting = serializers.IntegerField(min_value=1, max_value=MAX_ID, help_text="Judge setting version id.")
    probes = serializers.ListField(child=serializers.CharField(max_length=40), max_length=20,
                                   help_text='Probe names, "raw-ocr", or ["all"].')
    exam = serializers.IntegerField(required=False, min_value=1, max_value=MAX_ID)
    question = serializers.IntegerField(required=False, min_value=1, max_value=MAX_ID)
    limit = serializers.IntegerField(required=False, min_value=1, max_value=100_000)
    seed = serializers.IntegerField(required=False, min_value=0, max_value=2**31 - 1, default=0)


class ProbeRunViewSet(RunActionsMixin, mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    """Probe runs: start one (derived answers judged beside their originals with one setting),
    follow its progress, cancel or resume it."""

    serializer_class = ProbeRunSerializer
    permission_classes = [IsReviewer]
    lookup_value_regex = r"[0-9]{1,18}"
    queryset = ProbeRun.objects.order_by("-created", "-id")

    run_progress = staticmethod(selectors.run_progress)
    cancel_run = staticmethod(services.cancel_probe_run)
    resume_run = staticmethod(services.resume_probe_run)

    def get_serializer_class(self):
        return StartProbeRunSerializer if self.action == "create" else ProbeRunSerializer

    @extend_schema(request=StartProbeRunSerializer, responses={201: ProbeRunSerializer})
    def create(self, request, *args, **kwargs):
        form = StartProbeRunSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        setting = get_object_or_404(JudgeSetting, pk=data["setting"])
        try:
            run = services.start_probe_run(
                setting, probe_names=data["probes"], exam=data.get("exam"), question=data.get("question"),
                limit=data.get("limit"), seed=data["seed"], user=request.user,
            )
        except ValidationError as exc:
            return ApiResponse({"detail": exc.messages}, status=status.HTTP_400_BAD_REQUEST)
        return ApiResponse(ProbeRunSerializer(run).data, status=status.HTTP_201_CREATED)

    def run_data(self, run):
        return ProbeRunSerializer(run).data
