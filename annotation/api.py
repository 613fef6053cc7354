from django.db.models import Count
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.response import Response as ApiResponse
from rest_framework.views import APIView

from accounts.permissions import IsReviewer, ReadAnnotatorWriteReviewer
from accounts.roles import is_reviewer

from . import selectors
from .importers import ImportFormatError, import_ineqmath, import_realmath
from .models import Exam, ImportReport, Question, Response
from .serializers import (
    DatasetImportSerializer,
    ExamSerializer,
    ImportReportSerializer,
    QuestionSerializer,
    ResponseSerializer,
)


class ExamViewSet(viewsets.ModelViewSet):
    queryset = Exam.objects.all()
    serializer_class = ExamSerializer
    permission_classes = [ReadAnnotatorWriteReviewer]


class QuestionViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = QuestionSerializer
    filterset_fields = ["exam", "kind", "level", "location"]

    def get_queryset(self):
        return (
            Question.objects.select_related("exam")
            .prefetch_related("sub_questions", "checkpoints")
            .annotate(n_responses=Count("responses"))
            .order_by("id")
        )


class ResponseViewSet(viewsets.ReadOnlyModelViewSet):
    """Responses, filtered like the response list (source, level, question, exam, status, score range)."""

    serializer_class = ResponseSerializer

    def get_queryset(self):
        return selectors.filter_responses(
            Response.objects.select_related("question__exam").order_by("id"), self.request.query_params
        )

    def get_serializer_context(self):
        context = super().get_serializer_context()
        user = self.request.user
        if not is_reviewer(user):
            submitted = set(
                user.annotations.filter(submitted=True).values_list("response_id", flat=True)
            ) if user.is_authenticated else set()
            context["labels_visible"] = lambda r: (not r.question.exam.blind) or r.pk in submitted
        return context


class ImportReportViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    queryset = ImportReport.objects.all()
    serializer_class = ImportReportSerializer
    permission_classes = [IsReviewer]


class DatasetImportView(APIView):
    """Import a RealMath-Eval or IneqMath file (multipart upload). Reviewers and admins only."""

    permission_classes = [IsReviewer]
    importers = {"realmath": import_realmath, "ineqmath": import_ineqmath}

    @extend_schema(request={"multipart/form-data": DatasetImportSerializer}, responses=ImportReportSerializer)
    def post(self, request):
        serializer = DatasetImportSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        upload = serializer.validated_data["file"]
        exam = serializer.validated_data.get("exam")
        kwargs = {"exam_name": exam} if exam else {}
        try:
            result = self.importers[serializer.validated_data["format"]](
                upload.read(), upload.name, user=request.user, **kwargs
            )
        except ImportFormatError as exc:
            return ApiResponse({"detail": f"Nothing was imported. {exc}"}, status=status.HTTP_400_BAD_REQUEST)
        report = ImportReport.objects.get(pk=result.report_id)
        return ApiResponse(ImportReportSerializer(report).data, status=status.HTTP_201_CREATED)
