"""REST API of the ocr app under /api/ocr/ (reviewers and admins)."""
from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response as ApiResponse

from accounts.permissions import IsReviewer
from annotation.models import Exam
from core.api_parsers import JSONParser

from . import selectors, services
from .engines import OCR_ENGINES
from .models import OcrRun, Page, ScanBatch, ScanFile, Transcript, TranscriptRevision


class ScanFileSerializer(serializers.ModelSerializer):
    class Meta:
        model = ScanFile
        fields = ["id", "original_name", "declared_type", "detected_format", "size", "sha256", "status", "message"]


class ScanBatchSerializer(serializers.ModelSerializer):
    class Meta:
        model = ScanBatch
        fields = ["id", "name", "exam", "engine", "created_by", "created"]
        read_only_fields = ["created_by", "created"]


class BatchUploadSerializer(serializers.Serializer):
    exam = serializers.PrimaryKeyRelatedField(queryset=Exam.objects.all())
    engine = serializers.ChoiceField(choices=list(OCR_ENGINES), default=settings.OCR_DEFAULT_ENGINE)
    name = serializers.CharField(required=False, allow_blank=True, max_length=200)
    files = serializers.ListField(child=serializers.FileField(allow_empty_file=True), allow_empty=False)


class BatchUploadResultSerializer(serializers.Serializer):
    batch = ScanBatchSerializer()
    files = ScanFileSerializer(many=True)


class ProgressSerializer(serializers.Serializer):
    total = serializers.IntegerField()
    queued = serializers.IntegerField()
    running = serializers.IntegerField()
    done = serializers.IntegerField()
    failed = serializers.IntegerField()
    finished = serializers.IntegerField()
    percent = serializers.IntegerField()
    complete = serializers.BooleanField()


class OcrRunSerializer(serializers.ModelSerializer):
    cer = serializers.FloatField(read_only=True)

    class Meta:
        model = OcrRun
        fields = ["id", "engine", "engine_version", "status", "raw_text", "tokens", "seconds", "error", "cer"]


class TranscriptSerializer(serializers.ModelSerializer):
    class Meta:
        model = Transcript
        fields = ["text", "version", "status", "verified_text", "verified_at", "updated"]


class PageSerializer(serializers.ModelSerializer):
    transcript = TranscriptSerializer(read_only=True)
    ocr_runs = OcrRunSerializer(many=True, read_only=True)

    class Meta:
        model = Page
        fields = [
            "id", "batch", "student_id", "question", "page_number", "assignment_note", "status", "width", "height",
            "web_width", "web_height", "skew_degrees", "response", "transcript", "ocr_runs",
        ]


class TranscriptSaveSerializer(serializers.Serializer):
    text = serializers.CharField(allow_blank=True, trim_whitespace=False, max_length=200_000)
    base_version = serializers.IntegerField(min_value=0)
    action = serializers.ChoiceField(choices=["save", "autosave", "verify"], default="save")


class TranscriptSaveResultSerializer(serializers.Serializer):
    version = serializers.IntegerField()
    status = serializers.CharField()
    saved = serializers.DateTimeField()
    response = serializers.IntegerField(allow_null=True)
    response_version = serializers.IntegerField(allow_null=True)


class ScanBatchViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Scan batches. POST a multipart form (exam, engine, name, files[]) to upload a new batch."""

    queryset = ScanBatch.objects.order_by("-id")
    serializer_class = ScanBatchSerializer
    lookup_value_regex = "[^/]+"  # a malformed id reaches the view: 401/403 before any 404
    permission_classes = [IsReviewer]
    parser_classes = [MultiPartParser, FormParser, JSONParser]

    @extend_schema(request={"multipart/form-data": BatchUploadSerializer}, responses={201: BatchUploadResultSerializer})
    def create(self, request):
        serializer = BatchUploadSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            batch, scan_files = services.ingest_new_batch(
                exam=data["exam"], engine=data["engine"], uploads=services.uploads_from(data["files"]),
                user=request.user, name=data.get("name", ""),
            )
        except services.BatchError as exc:
            return ApiResponse({"files": [str(exc)]}, status=status.HTTP_400_BAD_REQUEST)
        result = {"batch": ScanBatchSerializer(batch).data, "files": ScanFileSerializer(scan_files, many=True).data}
        return ApiResponse(result, status=status.HTTP_201_CREATED)

    @extend_schema(responses=ProgressSerializer)
    @action(detail=True)
    def progress(self, request, pk=None):
        return ApiResponse(selectors.batch_progress(self.get_object()))

    @extend_schema(responses=ScanFileSerializer(many=True))
    @action(detail=True)
    def files(self, request, pk=None):
        return ApiResponse(ScanFileSerializer(self.get_object().files.order_by("id"), many=True).data)


class PageViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Pages with their transcript and OCR runs (raw text, boxes in screen pixels, confidences)."""

    serializer_class = PageSerializer
    permission_classes = [IsReviewer]
    lookup_value_regex = "[^/]+"
    filterset_fields = ["batch", "student_id", "question"]

    def get_queryset(self):
        return Page.objects.select_related("transcript").prefetch_related("ocr_runs").order_by("id")

    @extend_schema(request=TranscriptSaveSerializer, responses={200: TranscriptSaveResultSerializer})
    @action(detail=True, methods=["post"])
    def transcript(self, request, pk=None):
        """Save (or autosave, or verify) a transcript. A save from a stale version is refused with 409."""
        page = self.get_object()
        serializer = TranscriptSaveSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        response = None
        try:
            if data["action"] == "verify":
                transcript, response = services.verify_transcript(
                    page, text=data["text"], base_version=data["base_version"], user=request.user
                )
            else:
                transcript = services.save_transcript(
                    page, text=data["text"], base_version=data["base_version"], user=request.user,
                    kind=TranscriptRevision.Kind(data["action"]),
                )
        except services.StaleTranscript as exc:
            current = exc.transcript
            return ApiResponse(
                {"detail": str(exc), "stale": True, "version": current.version, "status": current.status},
                status=status.HTTP_409_CONFLICT,
            )
        except services.TranscriptError as exc:
            return ApiResponse({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        page.refresh_from_db(fields=["response"])
        return ApiResponse({
            "version": transcript.version,
            "status": transcript.status,
            "saved": transcript.updated,
            "response": page.response_id,
            "response_version": response.version if response else None,
        })
