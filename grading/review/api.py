"""REST API of the judge-vs-human review (reviewers and admins only): metrics, the disagreement
queue, meta-evaluation labels, meta-evaluation runs (the LLM proposes categories), category counts and step-judge validation."""
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers, status, viewsets
from rest_framework.exceptions import NotFound
from rest_framework.exceptions import ValidationError as ApiValidationError
from rest_framework.response import Response as ApiResponse
from rest_framework.views import APIView

from accounts.permissions import IsReviewer
from annotation.models import Response
from core.ids import MAX_ID, id_param

from ..judges.services import RunRefused
from ..models import JudgeResult, LlmEndpoint, MetaEvalRun, MetaEvaluation
from ..runs.api import RunActionsMixin
from . import selectors, services
from .meta_eval import CATEGORIES

SCOPE_PARAMETERS = [
    OpenApiParameter("setting", OpenApiTypes.INT, description="Judge setting version id (default: the latest used)."),
    OpenApiParameter("run", OpenApiTypes.INT, description="A judge run id (instead of a setting)."),
]
QUEUE_PARAMETERS = SCOPE_PARAMETERS + [
    OpenApiParameter("threshold", OpenApiTypes.NUMBER, description="Minimum |judge − gold| in points (default 2)."),
    OpenApiParameter("source", OpenApiTypes.STR, enum=Response.Source.values),
    OpenApiParameter("question", OpenApiTypes.INT),
    OpenApiParameter("exam", OpenApiTypes.INT),
    OpenApiParameter("level", OpenApiTypes.STR, enum=["low", "high"]),
    OpenApiParameter("direction", OpenApiTypes.STR, enum=["over", "under"]),
    OpenApiParameter("category", OpenApiTypes.STR, enum=list(CATEGORIES)),
    OpenApiParameter("state", OpenApiTypes.STR, enum=list(selectors.QUEUE_STATES)),
    OpenApiParameter("attribution", OpenApiTypes.STR, enum=["ocr", "judge", "both", "none"],
                     description="OCR-vs-judge attribution tag (none: the raw OCR text was not judged)."),
]
def _path_id(name):
    return OpenApiParameter(name, OpenApiTypes.INT, OpenApiParameter.PATH)


def _scope(params):
    try:
        return selectors.resolve_scope(params)
    except selectors.ScopeError as exc:
        raise NotFound(str(exc)) from exc


def _id(value):
    """A path id, or 404 (paths take any text so that the role check answers first)."""
    pk = id_param(value)
    if pk is None:
        raise NotFound("No such object.")
    return pk


def _threshold(params):
    threshold = selectors.parse_threshold(params.get("threshold"))
    if threshold is None:
        raise ApiValidationError({"threshold": "A number of points ≥ 0."})
    return threshold


class DisagreementSerializer(serializers.Serializer):
    result = serializers.IntegerField(source="pk")
    response = serializers.IntegerField(source="response_id")
    question = serializers.IntegerField(source="response.question_id")
    question_location = serializers.CharField(source="response.question.location")
    source = serializers.CharField(source="response.source")
    student_id = serializers.CharField(source="response.student_id")
    setting = serializers.CharField(source="setting.__str__")
    gold = serializers.FloatField()
    judge_score = serializers.FloatField(source="score")
    delta = serializers.FloatField()
    direction = serializers.SerializerMethodField()
    category = serializers.SerializerMethodField()
    proposed_by = serializers.SerializerMethodField()
    ocr_attribution = serializers.CharField(source="ocr_tag", help_text="ocr, judge, both, or empty (studies).")
    ocr_raw_score = serializers.FloatField(allow_null=True, help_text="The same setting's score on the raw OCR text.")

    def get_direction(self, obj) -> str:
        return "over" if obj.delta > 0 else "under"

    def _meta(self, obj):
        return getattr(obj, "meta_evaluation", None) if hasattr(obj, "meta_evaluation") else None

    def get_category(self, obj) -> str:
        meta = self._meta(obj)
        return meta.category if meta else ""

    def get_proposed_by(self, obj) -> str:
        meta = self._meta(obj)
        return meta.proposed_by if meta and meta.category else ""


class MetaEvaluationSerializer(serializers.ModelSerializer):
    confirmed_by = serializers.CharField(source="confirmed_by.username", default=None, read_only=True)
    proposal_category = serializers.CharField(source="proposal.category", default=None, read_only=True)

    class Meta:
        model = MetaEvaluation
        fields = [
            "result", "category", "analysis", "is_ood", "direction", "judge_score", "gold_score", "proposed_by",
            "proposal_category", "kept_proposal", "confirmed_by", "confirmed_at", "provenance", "version",
        ]
        read_only_fields = fields


class ConfirmSerializer(serializers.Serializer):
    category = serializers.CharField(max_length=1, help_text="A, B, C, D or E (either case).")
    analysis = serializers.CharField(required=False, allow_blank=True, max_length=20000, default="")
    is_ood = serializers.BooleanField(required=False, default=False)
    version = serializers.IntegerField(required=False, min_value=0, allow_null=True, default=None,
                                       help_text="The version you saw; a newer one on the server answers 409.")


class MetaEvalRunSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    status = serializers.CharField(read_only=True)
    model = serializers.CharField(max_length=200)
    n_items = serializers.IntegerField(read_only=True)
    done = serializers.IntegerField(read_only=True)
    ok = serializers.IntegerField(read_only=True)
    invalid = serializers.IntegerField(read_only=True)
    error = serializers.IntegerField(read_only=True)
    fraction = serializers.FloatField(read_only=True)
    epoch = serializers.IntegerField(read_only=True)
    stalled = serializers.BooleanField(read_only=True)
    can_resume = serializers.BooleanField(read_only=True)


class StartMetaEvalRunSerializer(serializers.Serializer):
    endpoint = serializers.IntegerField(min_value=1, max_value=MAX_ID)
    model = serializers.CharField(max_length=200)
    setting = serializers.IntegerField(required=False, min_value=1, max_value=MAX_ID)
    run = serializers.IntegerField(required=False, min_value=1, max_value=MAX_ID)
    threshold = serializers.FloatField(required=False, min_value=0, max_value=1e6, default=selectors.DEFAULT_THRESHOLD)
    include_done = serializers.BooleanField(required=False, default=False,
                                            help_text="Also cases already proposed or classified.")


class ValidationMarksSerializer(serializers.Serializer):
    marks = serializers.DictField(
        child=serializers.BooleanField(allow_null=True),
        help_text="{judge result id: true (verdict right) | false (wrong) | null (withdraw)}",
    )
    notes = serializers.DictField(child=serializers.CharField(allow_blank=True, max_length=5000), required=False)


class ReviewMetricsView(APIView):
    """Every figure of the metrics page for a setting version or a run."""

    permission_classes = [IsReviewer]

    @extend_schema(parameters=SCOPE_PARAMETERS, responses=OpenApiTypes.OBJECT)
    def get(self, request):
        return ApiResponse(selectors.metrics_report(_scope(request.query_params)))


class DisagreementListView(generics.ListAPIView):
    """The disagreement queue: results with |judge − gold| ≥ threshold."""

    permission_classes = [IsReviewer]
    serializer_class = DisagreementSerializer
    filter_backends = []

    @extend_schema(parameters=QUEUE_PARAMETERS)
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        params = self.request.query_params
        scope, threshold = _scope(params), _threshold(params)
        if errors := selectors.queue_filter_errors(params):
            raise ApiValidationError(errors)
        queue = selectors.disagreement_queue(scope, threshold, params)
        return selectors.queue_page_rows(queue)


class MetaEvaluationView(APIView):
    """The meta-evaluation of one judge result: read it, or confirm a category (POST)."""

    permission_classes = [IsReviewer]

    @extend_schema(parameters=[_path_id("result_id")], responses=MetaEvaluationSerializer)
    def get(self, request, result_id):
        result = get_object_or_404(JudgeResult, pk=_id(result_id))
        meta = MetaEvaluation.objects.filter(result=result).select_related("confirmed_by", "proposal").first()
        if meta is None:
            raise NotFound("This judge result has no meta-evaluation yet.")
        return ApiResponse(MetaEvaluationSerializer(meta).data)

    @extend_schema(parameters=[_path_id("result_id")], request=ConfirmSerializer,
                   responses={200: MetaEvaluationSerializer, 409: OpenApiTypes.OBJECT})
    def post(self, request, result_id):
        result = get_object_or_404(JudgeResult.objects.select_related("response"), pk=_id(result_id))
        form = ConfirmSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        try:
            meta = services.confirm_meta_evaluation(
                result, user=request.user, category=data["category"], analysis=data["analysis"],
                is_ood=data["is_ood"], base_version=data["version"],
            )
        except services.StaleMetaEvaluation as exc:
            return ApiResponse({"detail": str(exc), "version": exc.meta.version}, status=status.HTTP_409_CONFLICT)
        except ValidationError as exc:
            raise ApiValidationError(exc.message_dict) from exc
        return ApiResponse(MetaEvaluationSerializer(meta).data)


class CategorySummaryView(APIView):
    """Counts of confirmed categories by judge, source, question and direction; pre-label kept rate."""

    permission_classes = [IsReviewer]

    @extend_schema(parameters=[SCOPE_PARAMETERS[0]], responses=OpenApiTypes.OBJECT)
    def get(self, request):
        return ApiResponse(selectors.category_summary({"setting": request.query_params.get("setting", "")}))


class MetaEvalRunViewSet(RunActionsMixin, viewsets.GenericViewSet):
    """LLM meta-evaluator runs: list the recent ones, start one over a disagreement queue,
    follow its progress, cancel or resume it."""

    permission_classes = [IsReviewer]
    serializer_class = MetaEvalRunSerializer
    queryset = MetaEvalRun.objects.all()
    pagination_class = None
    filter_backends = []

    run_progress = staticmethod(selectors.meta_eval_run_progress)
    cancel_run = staticmethod(services.cancel_meta_eval_run)
    resume_run = staticmethod(services.resume_meta_eval_run)

    def run_data(self, run):
        return selectors.meta_eval_run_progress(run)

    def get_object(self):
        return get_object_or_404(MetaEvalRun, pk=_id(self.kwargs["pk"]))

    @extend_schema(responses=MetaEvalRunSerializer(many=True))
    def list(self, request):
        return ApiResponse([selectors.meta_eval_run_progress(run) for run in selectors.recent_meta_eval_runs(50)])

    @extend_schema(request=StartMetaEvalRunSerializer, responses={201: MetaEvalRunSerializer})
    def create(self, request):
        form = StartMetaEvalRunSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        endpoint = LlmEndpoint.objects.filter(pk=data["endpoint"]).first()
        if endpoint is None:
            raise ApiValidationError({"endpoint": "No such endpoint."})
        scope = _scope({"setting": data.get("setting") or "", "run": data.get("run") or ""})
        try:
            run = services.start_meta_eval_run(
                endpoint=endpoint, model=data["model"], scope=scope, threshold=data["threshold"],
                user=request.user, only_open=not data["include_done"],
            )
        except RunRefused as exc:
            raise ApiValidationError({"detail": exc.messages}) from exc
        return ApiResponse(selectors.meta_eval_run_progress(run), status=status.HTTP_201_CREATED)

    @extend_schema(parameters=[_path_id("pk")], responses=MetaEvalRunSerializer)
    def retrieve(self, request, pk=None):
        return ApiResponse(self.run_data(self.get_object()))


@extend_schema(exclude=True)
class PrelabelRunViewSet(MetaEvalRunViewSet):
    """The old address, review/prelabel-runs/ (out of the schema)."""


class ValidationMarksView(APIView):
    """Mark step-judge verdicts on one response right or wrong."""

    permission_classes = [IsReviewer]

    @extend_schema(parameters=[_path_id("response_id")], request=ValidationMarksSerializer, responses=OpenApiTypes.OBJECT)
    def post(self, request, response_id):
        response = get_object_or_404(Response, pk=_id(response_id))
        form = ValidationMarksSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        marks = {}
        for key, value in form.validated_data["marks"].items():
            if id_param(key) is None:
                raise ApiValidationError({"marks": f"{key!r} is not a judge result id."})
            marks[id_param(key)] = value
        notes = {id_param(k): v for k, v in form.validated_data.get("notes", {}).items() if id_param(k)}
        try:
            saved = services.save_step_validations(response, marks, user=request.user, notes=notes)
        except ValidationError as exc:
            raise ApiValidationError({"marks": exc.messages}) from exc
        return ApiResponse({"saved": saved})


class ValidationReportView(APIView):
    """Per judge: confusion matrix and accuracy/precision/recall/F1 against the experts; per model:
    Answer Acc, Step Acc per judge, Overall Acc."""

    permission_classes = [IsReviewer]

    @extend_schema(
        parameters=[OpenApiParameter("positive", OpenApiTypes.STR, enum=list(selectors.POSITIVE_CLASSES))]
        + [OpenApiParameter(f"judge_{slot}", OpenApiTypes.STR, description=f"{label}: setting id or 'none'")
           for slot, label, _ in selectors.JUDGE_SLOTS],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request):
        judges = selectors.validation_judges(request.query_params)
        positive = request.query_params.get("positive", "flaw")
        if positive not in selectors.POSITIVE_CLASSES:
            raise ApiValidationError({"positive": f"One of {', '.join(selectors.POSITIVE_CLASSES)}."})
        report = selectors.validation_report(judges["chosen"], positive)
        for judge in report["judges"]:
            setting = judge.pop("config")
            judge["setting"] = {"id": setting.pk, "name": setting.name, "version": setting.version}
        return ApiResponse(report)
