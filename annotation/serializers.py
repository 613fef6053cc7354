"""Serializers of the dataset API (exams, questions, responses, imports); the labelling API's are
in annotation/labelling/serializers.py, beside its api.py."""
from rest_framework import serializers

from .importers.placement import ASK, OVERLAPS
from .models import Exam, ImportReport, Question, Response, RubricCheckpoint, SubQuestion


class ExamSerializer(serializers.ModelSerializer):
    class Meta:
        model = Exam
        fields = ["id", "name", "batch_date", "blind", "anchoring", "anchoring_seed", "anchoring_setting", "created"]


class SubQuestionSerializer(serializers.ModelSerializer):
    class Meta:
        model = SubQuestion
        fields = ["id", "label", "order", "max_points"]


class RubricCheckpointSerializer(serializers.ModelSerializer):
    class Meta:
        model = RubricCheckpoint
        fields = ["id", "order", "cumulative_points", "text", "start", "end", "sub_question"]


class QuestionSerializer(serializers.ModelSerializer):
    sub_questions = SubQuestionSerializer(many=True, read_only=True)
    checkpoints = RubricCheckpointSerializer(many=True, read_only=True)
    n_responses = serializers.IntegerField(read_only=True)

    class Meta:
        model = Question
        fields = [
            "id", "exam", "statement", "reference_solution", "full_score", "kind", "gold_answer", "location",
            "question_type", "level", "external_id", "choices", "sub_questions", "checkpoints", "n_responses",
            "rubric_version",
        ]
        read_only_fields = ["rubric_version"]


class ResponseSerializer(serializers.ModelSerializer):
    """A response. Where blind mode hides its scores (`scores_visible`, annotated by
    annotation.selectors.with_scores_visible) the gold fields are left out, and `updated` with
    them (an adjudication saves the response, so its time would tell that a gold was set), and
    the status is the one shown to blind annotators."""

    BLIND_FIELDS = ("gold_score", "gold_status", "updated")

    class Meta:
        model = Response
        fields = [
            "id", "question", "source", "student_id", "transcript", "generator_model", "generator_temperature",
            "status", "gold_score", "gold_status", "version", "created", "updated",
        ]

    def to_representation(self, instance):
        data = super().to_representation(instance)
        visible = getattr(instance, "scores_visible", False)
        data["status"] = instance.status_shown(visible)
        if not visible:
            for name in self.BLIND_FIELDS:
                data.pop(name, None)
        return data


class ImportReportSerializer(serializers.ModelSerializer):
    class Meta:
        model = ImportReport
        fields = ["id", "kind", "file_name", "file_sha256", "created", "counts", "warnings"]


class DatasetImportSerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=["realmath", "ineqmath"])
    file = serializers.FileField()
    exam = serializers.CharField(required=False, allow_blank=True, max_length=200)
    overlap = serializers.ChoiceField(
        choices=OVERLAPS, default=ASK,
        help_text="RealMath-Eval files: what to do with the file's questions already in another exam: ask (import "
                  "nothing and say where they are), join (import into that exam), move (move them, with their "
                  "answers, into this exam), keep (leave them there).")
