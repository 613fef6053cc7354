"""Serializers of the labelling API (labels, drafts, assignments, adjudications), beside its api.py."""
from django.contrib.auth import get_user_model
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from rest_framework import serializers

from core.numbers import MAX_INT32

from ..models import Adjudication, Assignment, Exam, Label, LabelDraft, Question, Response, StepLabel
from . import selectors

User = get_user_model()

# One answer for a draft's label id that is missing, of another response or not the user's to
# edit: which of the three it was would tell a blind annotator which labels exist where.
NO_EDITABLE_LABEL = _("No label of this response that you may edit has this id.")


class LabelStepSerializer(serializers.ModelSerializer):
    sub_question = serializers.SlugRelatedField(slug_field="label", read_only=True)

    class Meta:
        model = StepLabel
        fields = [
            "id", "start", "end", "quote", "prefix", "suffix", "needs_review", "verdict", "comment", "sub_question",
            "checkpoint",
        ]


class LabelSerializer(serializers.ModelSerializer):
    """A label with its step labels, as the labelling page and the API show it."""

    rater = serializers.CharField(read_only=True, source="rater_name")
    annotator = serializers.SlugRelatedField(slug_field="username", read_only=True)
    updated_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    step_labels = LabelStepSerializer(many=True, read_only=True)

    class Meta:
        model = Label
        fields = [
            "id", "response", "rater", "annotator", "sub_scores", "total", "checkpoint_marks", "override_reason",
            "comment", "step_labels", "submitted", "submitted_at", "is_imported", "provenance", "version",
            "updated_by", "updated", "transcript_hash", "active_seconds",
        ]
        read_only_fields = fields


class LabelWriteSerializer(serializers.Serializer):
    """The shape of a label save; the rubric rules are checked by annotation.labelling.rules."""

    # The range of the label's version column, as the draft route's (a model field) has: 2**63 was a 500.
    base_version = serializers.IntegerField(min_value=0, max_value=MAX_INT32,
                                            help_text="Version the edit started from; 0 for a new label.")
    submit = serializers.BooleanField(default=False)
    sub_scores = serializers.DictField(required=False, default=dict, help_text="{sub-question label: points or null}")
    total = serializers.JSONField(required=False, allow_null=True, help_text="Only for questions without sub-questions.")
    checkpoint_marks = serializers.DictField(required=False, default=dict, help_text="{checkpoint id: reached | partly | not_reached}")
    override_reason = serializers.CharField(required=False, allow_blank=True, default="", trim_whitespace=False)
    comment = serializers.CharField(required=False, allow_blank=True, default="", trim_whitespace=False)
    step_labels = serializers.ListField(child=serializers.DictField(), required=False, default=list)
    active_seconds_delta = serializers.IntegerField(
        min_value=0, max_value=86400, required=False, default=0,
        help_text="Active seconds (page focused, input in the last minute) since the last draft or save.",
    )

    def label_data(self):
        data = dict(self.validated_data)
        data.pop("base_version")
        data.pop("submit")
        data.pop("active_seconds_delta", None)
        return data


class LabelDraftSerializer(serializers.ModelSerializer):
    # The JSON keeps the name `annotation` (the API contract predates the model's rename to Label).
    annotation = serializers.PrimaryKeyRelatedField(
        source="label", queryset=Label.objects.all(), required=False, allow_null=True,
        help_text=LabelDraft._meta.get_field("label").help_text,
        error_messages={"does_not_exist": NO_EDITABLE_LABEL, "incorrect_type": NO_EDITABLE_LABEL},
    )
    active_seconds_delta = serializers.IntegerField(
        min_value=0, max_value=86400, required=False, default=0, write_only=True,
        help_text="Active seconds (page focused, input in the last minute) since the last draft or save.",
    )

    class Meta:
        model = LabelDraft
        fields = ["response", "annotation", "base_version", "payload", "updated", "active_seconds",
                  "active_seconds_delta"]
        read_only_fields = ["response", "updated", "active_seconds"]
        # The column's range on every database (SQLite's own would take any 64-bit number).
        extra_kwargs = {"payload": {"required": True},
                        "base_version": {"required": True, "min_value": 0, "max_value": MAX_INT32}}

    def validate_payload(self, value):
        if not isinstance(value, dict):
            raise serializers.ValidationError(gettext("The draft must be a JSON object."))
        return value

    def validate_annotation(self, label):
        """A label of another response, or one the user may not edit, is refused exactly as a
        missing id (blind mode: the answer must not tell which labels exist where)."""
        response, user = self.context.get("response"), self.context.get("user")
        if label is not None and response is not None and (
            label.response_id != response.pk or not selectors.can_edit_label(user, label)
        ):
            raise serializers.ValidationError(NO_EDITABLE_LABEL)
        return label


class AssignmentSerializer(serializers.ModelSerializer):
    annotator = serializers.SlugRelatedField(slug_field="username", read_only=True)
    lock_holder = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = Assignment
        fields = ["id", "response", "annotator", "strategy", "created", "lock_holder", "lock_expires", "completed_at"]
        read_only_fields = fields


class AssignRequestSerializer(serializers.Serializer):
    question = serializers.PrimaryKeyRelatedField(queryset=Question.objects.all(), required=False, allow_null=True)
    exam = serializers.PrimaryKeyRelatedField(queryset=Exam.objects.all(), required=False, allow_null=True)
    source = serializers.ChoiceField(choices=Response.Source.choices, required=False, allow_blank=True)
    annotators = serializers.SlugRelatedField(
        slug_field="username", many=True, required=False, queryset=User.objects.filter(is_active=True)
    )
    per_response = serializers.IntegerField(min_value=1, max_value=20, default=2)
    strategy = serializers.ChoiceField(choices=Assignment.Strategy.choices, default=Assignment.Strategy.ROUND_ROBIN)

    def validate(self, attrs):
        if not attrs.get("question") and not attrs.get("exam"):
            raise serializers.ValidationError(gettext("Choose a question or an exam."))
        return attrs


class AdjudicationSerializer(serializers.ModelSerializer):
    reviewer = serializers.SlugRelatedField(slug_field="username", read_only=True)
    # The JSON keeps the name `chosen_annotation` (the API contract predates the rename to Label).
    chosen_annotation = serializers.PrimaryKeyRelatedField(source="chosen_label", read_only=True, allow_null=True)

    class Meta:
        model = Adjudication
        fields = [
            "id", "response", "reviewer", "gold_score", "reason", "chosen_annotation", "previous_gold_score",
            "previous_gold_status", "label_totals", "sub_scores", "created",
        ]
        read_only_fields = fields


class AdjudicateRequestSerializer(serializers.Serializer):
    response = serializers.PrimaryKeyRelatedField(queryset=Response.objects.select_related("question"))
    chosen_annotation = serializers.PrimaryKeyRelatedField(
        source="chosen_label", queryset=Label.objects.all(), required=False, allow_null=True
    )
    gold_score = serializers.DecimalField(max_digits=7, decimal_places=2, required=False, allow_null=True)
    reason = serializers.CharField(required=False, allow_blank=True, default="")
    sub_scores = serializers.DictField(
        child=serializers.CharField(allow_blank=True), required=False, default=dict,
        help_text="{sub-question label: points}, the reviewer's own; their sum is the gold score.",
    )
    expected_gold_score = serializers.DecimalField(max_digits=7, decimal_places=2, required=False, allow_null=True)
    expected_gold_status = serializers.CharField(
        required=False, max_length=16, help_text="The gold status seen when deciding (none, imported, single, agreed, adjudicated)."
    )

    def validate_expected_gold_status(self, value):
        if value not in Response.GoldStatus.values:
            raise serializers.ValidationError(gettext("One of %(join)s.") % {"join": ', '.join(Response.GoldStatus.values)})
        return value


class AdjudicationQueueSerializer(serializers.ModelSerializer):
    n_labels = serializers.IntegerField()
    high = serializers.DecimalField(max_digits=7, decimal_places=2)
    low = serializers.DecimalField(max_digits=7, decimal_places=2)
    spread = serializers.DecimalField(max_digits=7, decimal_places=2)

    class Meta:
        model = Response
        fields = ["id", "question", "source", "student_id", "gold_score", "gold_status", "n_labels", "high", "low", "spread"]
