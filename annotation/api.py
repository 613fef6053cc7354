import django_filters
from django import forms
from django.db.models import Count
from django.utils.translation import gettext
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import mixins, status, viewsets
from rest_framework.response import Response as ApiResponse
from rest_framework.views import APIView

from accounts.permissions import IsReviewer, ReadAnnotatorWriteReviewer
from core.ids import id_param

from . import selectors
from .importers import ImportFormatError, import_ineqmath, import_realmath
from .importers.placement import OVERLAPS, ExamOverlap
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


class IdField(forms.IntegerField):
    """A database id: ASCII digits ("²" and "٣" are digits to int(), not ids), at most MAX_ID."""

    def to_python(self, value):
        if value not in self.empty_values and not id_param(value):
            raise forms.ValidationError(gettext("A database id: digits 0-9, from 1 to 2**63 - 1."), code="invalid")
        return super().to_python(value)


class IdFilter(django_filters.NumberFilter):
    field_class = IdField


extend_schema_field(OpenApiTypes.INT)(IdFilter)


class ResponseFilter(django_filters.FilterSet):
    """The response-list filters of annotation.selectors.filter_responses, checked first: a
    malformed value ("²", "NaN", "Infinity") answers 400. The gold filters follow blind mode."""

    source = django_filters.ChoiceFilter(choices=Response.Source.choices)
    level = django_filters.ChoiceFilter(choices=[("low", "low"), ("high", "high")])
    question = IdFilter()
    exam = IdFilter()
    status = django_filters.ChoiceFilter(choices=Response.Status.choices)
    gold_status = django_filters.ChoiceFilter(choices=Response.GoldStatus.choices)
    score_min = django_filters.NumberFilter(label="Gold score at least")
    score_max = django_filters.NumberFilter(label="Gold score at most")
    q = django_filters.CharFilter(label="Student id or transcript contains")

    class Meta:
        model = Response
        fields = []

    def filter_queryset(self, queryset):
        params = {name: str(value) for name, value in self.form.cleaned_data.items() if value not in (None, "")}
        return selectors.filter_responses(queryset, params, viewer=self.request.user)


class ResponseViewSet(viewsets.ReadOnlyModelViewSet):
    """Responses, filtered like the response list. Under blind mode the gold fields of a response
    are left out, and the gold filters match only responses whose scores you may see."""

    serializer_class = ResponseSerializer
    filterset_class = ResponseFilter

    def get_queryset(self):
        queryset = Response.objects.select_related("question__exam").order_by("id")
        if getattr(self, "swagger_fake_view", False):  # schema generation has no user
            return queryset
        return selectors.with_scores_visible(queryset, self.request.user)


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
        exam, fmt = serializer.validated_data.get("exam"), serializer.validated_data["format"]
        kwargs = {"exam_name": exam} if exam else {}
        if fmt == "realmath":  # what to do with questions already in another exam (importers/placement.py)
            kwargs["overlap"] = serializer.validated_data["overlap"]
        try:
            result = self.importers[fmt](upload.read(), upload.name, user=request.user, **kwargs)
        except ExamOverlap as exc:
            return ApiResponse({
                "detail": gettext("Nothing was imported. %(exc)s") % {"exc": exc},
                "overlap": {"exam": exc.exam_name, "questions": exc.questions, "choices": OVERLAPS,
                            "held_by": [{"id": e.pk, "name": e.name, "questions": n} for e, n in exc.holders]},
            }, status=status.HTTP_400_BAD_REQUEST)
        except ImportFormatError as exc:
            return ApiResponse({"detail": gettext("Nothing was imported. %(exc)s") % {"exc": exc}}, status=status.HTTP_400_BAD_REQUEST)
        report = ImportReport.objects.get(pk=result.report_id)
        return ApiResponse(ImportReportSerializer(report).data, status=status.HTTP_201_CREATED)
