from rest_framework import serializers

from .models import Annotation, Exam, ImportReport, Question, Response, RubricCheckpoint, StepLabel, SubQuestion


class ExamSerializer(serializers.ModelSerializer):
    class Meta:
        model = Exam
        fields = ["id", "name", "batch_date", "blind", "created"]


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
        ]


class StepLabelSerializer(serializers.ModelSerializer):
    class Meta:
        model = StepLabel
        fields = ["id", "checkpoint", "sub_question", "start", "end", "quote", "verdict", "awarded_points", "comment"]


class AnnotationSerializer(serializers.ModelSerializer):
    step_labels = StepLabelSerializer(many=True, read_only=True)
    annotator = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = Annotation
        fields = [
            "id", "response", "annotator", "sub_scores", "total", "comment", "submitted", "submitted_at",
            "is_imported", "provenance", "version", "step_labels",
        ]


class ResponseSerializer(serializers.ModelSerializer):
    """A response. Gold score and gold status are hidden from blind annotators."""

    BLIND_FIELDS = ("gold_score", "gold_status")

    class Meta:
        model = Response
        fields = [
            "id", "question", "source", "student_id", "transcript", "generator_model", "generator_temperature",
            "status", "gold_score", "gold_status", "version", "created", "updated",
        ]

    def to_representation(self, instance):
        data = super().to_representation(instance)
        visible = self.context.get("labels_visible")
        if visible is not None and not visible(instance):
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
