"""REST API of the judges: endpoints, settings (versioned), runs, results.

Reviewers and admins manage and run judges; only admins create or change endpoints (an
endpoint says which key is sent where). Annotators may read judge results, but only for
responses whose scores the blind rule lets them see.
"""
import django_filters
from django.core.exceptions import ValidationError
from django.utils.translation import gettext
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.response import Response as ApiResponse

from accounts.permissions import IsAnnotator, IsReviewer, ReadReviewerWriteAdmin
from core.ids import MAX_ID, id_param
from llm import access

from ..models import JudgeResult, JudgeRun, JudgeSetting, LlmEndpoint
from ..runs.api import RunActionsMixin
from . import prompts, selectors, services

ID = r"[0-9]{1,18}"  # ids in URLs: digits a database column can hold


def _id_filter(field_name):
    return django_filters.NumberFilter(field_name=field_name, min_value=1, max_value=MAX_ID)


class ResultFilter(django_filters.FilterSet):
    response = _id_filter("response_id")
    config = _id_filter("setting_id")
    setting = _id_filter("setting_id")  # the interface's name for `config` (issue 28: it was ignored silently)
    run = _id_filter("run_id")

    class Meta:
        model = JudgeResult
        fields = ["status"]


class RunFilter(django_filters.FilterSet):
    config = _id_filter("setting_id")
    setting = _id_filter("setting_id")  # the interface's name for `config`

    class Meta:
        model = JudgeRun
        fields = ["status"]


class IdRelatedField(serializers.PrimaryKeyRelatedField):
    """A primary key that must be a positive id a database column can hold (else a 400)."""

    def to_internal_value(self, data):
        pk = None if isinstance(data, bool) else id_param(data)
        if not pk:
            self.fail("incorrect_type", data_type=type(data).__name__)
        return super().to_internal_value(pk)


def _refusal(exc):
    detail = exc.message_dict if hasattr(exc, "message_dict") else {"detail": " ".join(exc.messages)}
    return ApiResponse(detail, status=status.HTTP_400_BAD_REQUEST)


class LlmEndpointSerializer(serializers.ModelSerializer):
    serializer_related_field = IdRelatedField
    warnings = serializers.SerializerMethodField(
        help_text="Why runs on this endpoint would be refused right now, e.g. its key variable is not set."
    )

    class Meta:
        model = LlmEndpoint
        fields = [
            "id", "name", "base_url", "api_key_env", "max_concurrency", "requests_per_minute", "tokens_per_minute",
            "timeout_seconds", "max_attempts", "created", "updated", "warnings",
        ]
        read_only_fields = ["created", "updated"]

    def get_warnings(self, endpoint) -> list[str]:
        return services.endpoint_warnings(endpoint)

    def validate_base_url(self, value):
        problem = access.url_problem(value) if value else ""
        if problem:
            raise serializers.ValidationError(problem)
        return value

    def validate_api_key_env(self, value):
        problem = access.key_name_problem(value)
        if problem:
            raise serializers.ValidationError(problem)
        return value


class JudgeSettingSerializer(serializers.ModelSerializer):
    serializer_related_field = IdRelatedField
    kind = serializers.ChoiceField(choices=[c for c in JudgeSetting.Kind.choices if c[0] != JudgeSetting.Kind.EXTERNAL])

    class Meta:
        model = JudgeSetting
        fields = [
            "id", "name", "version", "kind", "endpoint", "model", "temperature", "max_tokens", "reasoning_effort",
            "samples", "aggregate", "system_prompt", "prompt_template", "extra_body", "parse_retries",
            "price_input_per_1k", "price_output_per_1k", "notes", "answer_tolerance", "second_opinion", "approximate_answers", "previous", "created",
            # issue 27: the prompt strategy, few-shot calibration (chosen and recorded when saved), prompt set
            "strategy", "strategy_version", "few_shot_k", "split_rule", "few_shot_seed", "few_shot_comments",
            "few_shot_source", "calibration", "prompt_set",
            "step_report",  # issue 37: the rubric judge's first wrong step and checkpoints reached
        ]
        read_only_fields = ["version", "previous", "created", "strategy_version", "calibration"]
        validators = []  # versions share a name; the services check names

    def validate_prompt_template(self, value):
        unknown = prompts.unknown_placeholders(value)
        if unknown:
            raise serializers.ValidationError(gettext("Unknown placeholders: %(join)s.") % {"join": ', '.join(unknown)})
        return value


class JudgeSettingViewSet(mixins.CreateModelMixin, mixins.UpdateModelMixin, viewsets.ReadOnlyModelViewSet):
    """Judge settings. Changing a setting that has results creates and returns a new version."""

    serializer_class = JudgeSettingSerializer
    permission_classes = [IsReviewer]
    filterset_fields = ["name", "kind", "model"]
    lookup_value_regex = ID

    def get_queryset(self):
        return JudgeSetting.objects.select_related("endpoint").order_by("name", "-version")

    def perform_create(self, serializer):
        data = dict(serializer.validated_data)
        name = data.pop("name")
        serializer.instance = services.create_judge_setting(name=name, user=self.request.user, **data)

    def create(self, request, *args, **kwargs):
        try:
            return super().create(request, *args, **kwargs)
        except ValidationError as exc:
            return _refusal(exc)

    def update(self, request, *args, **kwargs):
        setting = self.get_object()
        serializer = self.get_serializer(setting, data=request.data, partial=kwargs.pop("partial", False))
        serializer.is_valid(raise_exception=True)
        fields = {k: v for k, v in serializer.validated_data.items() if k not in ("name", "kind")}
        try:
            saved = services.update_judge_setting(JudgeSetting.objects.get(pk=setting.pk), user=request.user, **fields)
        except ValidationError as exc:
            return _refusal(exc)
        code = status.HTTP_201_CREATED if saved.pk != setting.pk else status.HTTP_200_OK
        return ApiResponse(self.get_serializer(saved).data, status=code)


@extend_schema(exclude=True)
class JudgeSettingOldAddressViewSet(JudgeSettingViewSet):
    """The old address of judge settings, judge-configs/ (kept, out of the schema)."""


class LlmEndpointViewSet(mixins.CreateModelMixin, mixins.UpdateModelMixin, viewsets.ReadOnlyModelViewSet):
    """LLM endpoints: reviewers read them, admins create and change them. A key variable that is
    allowed but not set saves, with a warning in the answer."""

    serializer_class = LlmEndpointSerializer
    permission_classes = [ReadReviewerWriteAdmin]
    queryset = LlmEndpoint.objects.order_by("name")
    lookup_value_regex = ID

    def perform_create(self, serializer):
        serializer.instance = services.save_endpoint(None, **serializer.validated_data)

    def perform_update(self, serializer):
        serializer.instance = services.save_endpoint(serializer.instance, **serializer.validated_data)

    def create(self, request, *args, **kwargs):
        try:
            return super().create(request, *args, **kwargs)
        except ValidationError as exc:
            return _refusal(exc)

    def update(self, request, *args, **kwargs):
        try:
            return super().update(request, *args, **kwargs)
        except ValidationError as exc:
            return _refusal(exc)


class JudgeRunSerializer(serializers.ModelSerializer):
    serializer_related_field = IdRelatedField
    filters = serializers.DictField(child=serializers.CharField(), required=False, write_only=True,
                                    help_text="Response-list filters: source, level, question, exam, status, gold_status, score_min, score_max, q.")
    response_ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=MAX_ID), required=False, write_only=True, max_length=100000
    )
    config = IdRelatedField(source="setting", queryset=JudgeSetting.objects.all())  # the API's name for the setting

    class Meta:
        model = JudgeRun
        fields = ["id", "config", "selection", "status", "epoch", "n_items", "note", "created", "resumed", "finished",
                  "estimate", "filters", "response_ids", "mode", "batch_retry"]
        read_only_fields = ["selection", "status", "epoch", "n_items", "created", "resumed", "finished", "estimate"]
        extra_kwargs = {"estimate": {"help_text": "The cost estimate made when the run started (calls, input_tokens, "
                                                  "output_tokens, cost_live, cost_batch, and how they were made; "
                                                  "docs/judges.md). Compare with the progress's tokens and cost."}}


# ``create`` of a run viewset: the serializer's data given to its `start_run(data, user)`; a
# refusal (ValidationError) answers 400 and starts nothing. A comment, not a docstring: the
# schema would show it on every viewset without its own.
class StartRunMixin(mixins.CreateModelMixin):

    def create(self, request, *args, **kwargs):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            run = self.start_run(serializer.validated_data, request.user)
        except ValidationError as exc:
            return _refusal(exc)
        return ApiResponse(self.get_serializer(run).data, status=status.HTTP_201_CREATED)


class JudgeRunViewSet(RunActionsMixin, StartRunMixin, viewsets.ReadOnlyModelViewSet):
    """Judge runs: create one over a selection, follow its progress, cancel or resume it."""

    serializer_class = JudgeRunSerializer
    permission_classes = [IsReviewer]
    filterset_class = RunFilter
    lookup_value_regex = ID

    def get_queryset(self):
        return JudgeRun.objects.select_related("setting").order_by("-created")

    @staticmethod
    def start_run(data, user):
        return services.start_judge_run(
            data["setting"], params=data.get("filters") or {}, response_ids=data.get("response_ids"),
            user=user, note=data.get("note", ""), mode=data.get("mode", JudgeRun.Mode.LIVE),
            batch_retry=data.get("batch_retry", JudgeRun.BatchRetry.LIVE),
        )

    run_progress = staticmethod(selectors.run_progress)
    cancel_run = staticmethod(services.cancel_judge_run)
    resume_run = staticmethod(services.resume_judge_run)


class JudgeResultSerializer(serializers.ModelSerializer):
    serializer_related_field = IdRelatedField
    config = IdRelatedField(source="setting", queryset=JudgeSetting.objects.all())  # the API's name for the setting
    config_name = serializers.CharField(source="setting.name", read_only=True)
    config_version = serializers.IntegerField(source="setting.version", read_only=True)
    kind = serializers.CharField(source="setting.kind", read_only=True)
    model = serializers.CharField(source="setting.model", read_only=True)
    output_truncated = serializers.BooleanField(
        read_only=True, help_text="The model's answer exceeded REALMATH_LLM_MAX_OUTPUT_CHARS and was cut (see errors)."
    )

    class Meta:
        model = JudgeResult
        fields = [
            "id", "response", "config", "config_name", "config_version", "kind", "model", "run", "status", "score",
            "spread", "rationale", "raw_output", "parse_status", "step_verdicts", "samples", "prompt_tokens",
            "completion_tokens", "cost", "latency_ms", "attempts", "errors", "output_truncated", "cache_key",
            "copied_from", "provenance", "created", "finished", "rubric_version", "sub_scores",
        ]


class JudgeResultViewSet(viewsets.ReadOnlyModelViewSet):
    """Judge results. Annotators see only results of responses whose scores they may see."""

    serializer_class = JudgeResultSerializer
    permission_classes = [IsAnnotator]
    filterset_class = ResultFilter
    lookup_value_regex = ID

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # schema generation has no user
            return JudgeResult.objects.none()
        return selectors.visible_results(self.request.user).select_related("setting").order_by("id")


