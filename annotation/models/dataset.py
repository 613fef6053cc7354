"""The dataset core: exams, questions with their rubric, and the responses to grade."""
import hashlib

from django.db import models
from django.utils.translation import gettext_lazy
from simple_history.models import HistoricalRecords


def content_hash(text):
    """A stable fingerprint of a text (used to identify problems and to key judge results)."""
    normalised = "\n".join(line.rstrip() for line in (text or "").strip().splitlines())
    return hashlib.sha256(normalised.encode("utf-8")).hexdigest()


class Exam(models.Model):
    """A batch of questions, e.g. one exam sitting or one imported dataset."""

    name = models.CharField(max_length=200, unique=True)
    batch_date = models.DateField(null=True, blank=True)
    blind = models.BooleanField(
        default=True, help_text=gettext_lazy("Annotators see no other labels nor judge scores until they submit.")
    )
    # The anchoring experiment (annotation.labelling.experiment): the judge's pre-grade shown to a
    # seeded half of the (response, annotator) assignments, an exception to blind mode for that score only.
    anchoring = models.BooleanField(
        "anchoring experiment", default=False,
        help_text=gettext_lazy("Show the judge's pre-grade (the setting below) to a seeded random half of the assignments."),
    )
    anchoring_seed = models.PositiveIntegerField(
        default=0, help_text=gettext_lazy("Seed of the anchoring experiment's half: the same seed always picks the same half.")
    )
    anchoring_setting = models.CharField(
        max_length=100, blank=True,
        help_text=gettext_lazy("Name of the judge setting whose newest score is shown (any version of that name)."),
    )
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class Question(models.Model):
    class Kind(models.TextChoices):
        RUBRIC = "rubric", gettext_lazy("Rubric-scored")
        BOUND = "bound", gettext_lazy("Bound estimation")
        RELATION = "relation", gettext_lazy("Relation prediction")

    class Level(models.TextChoices):
        NONE = "", "—"
        LOW = "low", gettext_lazy("Low")
        HIGH = "high", gettext_lazy("High")

    exam = models.ForeignKey(Exam, on_delete=models.PROTECT, related_name="questions")
    statement = models.TextField()
    statement_hash = models.CharField(max_length=64, unique=True, editable=False)
    reference_solution = models.TextField(blank=True)
    full_score = models.DecimalField(max_digits=7, decimal_places=2, default=0)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.RUBRIC)
    gold_answer = models.TextField(blank=True)
    location = models.CharField(max_length=64, blank=True, help_text=gettext_lazy("Source label such as 3-17; not unique."))
    question_type = models.CharField(max_length=300, blank=True)
    level = models.CharField(max_length=8, choices=Level.choices, blank=True)
    task_description = models.TextField(blank=True)
    external_id = models.CharField(max_length=64, blank=True)
    choices = models.JSONField(default=list, blank=True)
    extra = models.JSONField(default=dict, blank=True)
    rubric_version = models.PositiveIntegerField(
        default=1, help_text=gettext_lazy("Raised by one on each rubric edit (annotation.services.edit_rubric).")
    )
    created = models.DateTimeField(auto_now_add=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["exam__name", "location", "id"]

    def __str__(self):
        label = self.location or self.external_id or f"#{self.pk}"
        return f"{label}: {self.statement[:60]}"


class SubQuestion(models.Model):
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="sub_questions")
    label = models.CharField(max_length=32)
    order = models.PositiveIntegerField(default=0)
    max_points = models.DecimalField(max_digits=7, decimal_places=2, null=True, blank=True)

    class Meta:
        ordering = ["question", "order"]
        constraints = [models.UniqueConstraint(fields=["question", "label"], name="unique_subquestion_label")]

    def __str__(self):
        return self.label


class RubricCheckpoint(models.Model):
    """A cumulative checkpoint: reaching it, with all before it correct, earns `cumulative_points`."""

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="checkpoints")
    sub_question = models.ForeignKey(
        SubQuestion, on_delete=models.SET_NULL, null=True, blank=True, related_name="checkpoints"
    )
    order = models.PositiveIntegerField()
    cumulative_points = models.DecimalField(max_digits=7, decimal_places=2)
    text = models.TextField(help_text=gettext_lazy("The part of the reference solution that ends at this checkpoint."))
    start = models.PositiveIntegerField(help_text=gettext_lazy("Offset of the segment in the reference solution."))
    end = models.PositiveIntegerField(help_text=gettext_lazy("Offset just past the points marker."))

    class Meta:
        ordering = ["question", "order"]

    def __str__(self):
        return f"{self.cumulative_points} points"


class RubricVersion(models.Model):
    """A question's rubric as it was at one version: the reference solution with its markers, the
    full score, the checkpoints and the sub-questions' maxima, frozen as plain JSON.

    Written by annotation.services.edit_rubric only (the version before an edit and the one it
    makes); a question never edited has no rows and is at version 1.
    """

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="rubric_versions")
    version = models.PositiveIntegerField()
    reference_solution = models.TextField(blank=True)
    full_score = models.DecimalField(max_digits=7, decimal_places=2)
    checkpoints = models.JSONField(default=list, help_text=gettext_lazy("[{order, cumulative_points, sub_question, text}]"))
    sub_questions = models.JSONField(default=list, help_text=gettext_lazy("[{label, order, max_points}]"))
    note = models.CharField(max_length=300, blank=True)
    created_by = models.ForeignKey("auth.User", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["question_id", "-version"]
        constraints = [models.UniqueConstraint(fields=["question", "version"], name="unique_rubric_version")]

    def __str__(self):
        return f"rubric v{self.version} of question {self.question_id}"


class Response(models.Model):
    class Source(models.TextChoices):
        HUMAN = "human", gettext_lazy("Human")
        SYNTHETIC = "synthetic", gettext_lazy("Synthetic")

    class Status(models.TextChoices):
        TRANSCRIBING = "transcribing", gettext_lazy("Transcribing")
        READY = "ready", gettext_lazy("Ready to label")
        LABELLED = "labelled", gettext_lazy("Labelled")
        ADJUDICATED = "adjudicated", gettext_lazy("Adjudicated")

    class GoldStatus(models.TextChoices):
        NONE = "none", gettext_lazy("No gold yet")
        IMPORTED = "imported", gettext_lazy("Imported")
        SINGLE = "single", gettext_lazy("Single annotator")
        AGREED = "agreed", gettext_lazy("Agreed")
        ADJUDICATED = "adjudicated", gettext_lazy("Adjudicated")

    # Statuses that tell of other people's labels: blind mode shows them as "ready".
    BLIND_MASKED_STATUSES = (Status.LABELLED, Status.ADJUDICATED)

    question = models.ForeignKey(Question, on_delete=models.PROTECT, related_name="responses")
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.HUMAN)
    student_id = models.CharField(max_length=200, help_text=gettext_lazy("Pseudonymous id, or <model>_t_<temp>_<n>."))
    transcript = models.TextField(blank=True)
    transcript_hash = models.CharField(max_length=64, editable=False, db_index=True)
    generator_model = models.CharField(max_length=200, blank=True)
    generator_temperature = models.FloatField(null=True, blank=True)
    generator_prompt = models.TextField(blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.READY, db_index=True)
    gold_score = models.DecimalField(max_digits=7, decimal_places=2, null=True, blank=True, db_index=True)
    gold_status = models.CharField(max_length=16, choices=GoldStatus.choices, default=GoldStatus.NONE)
    judge_query = models.TextField(blank=True, help_text=gettext_lazy("A filled judge prompt carried by an imported record."))
    extra = models.JSONField(default=dict, blank=True, help_text=gettext_lazy("Fields kept from the source record."))
    import_file = models.CharField(max_length=500, blank=True)
    import_index = models.IntegerField(null=True, blank=True)
    version = models.PositiveIntegerField(default=1)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["question_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["question", "student_id", "transcript_hash"], name="unique_response_per_student_text"
            )
        ]
        indexes = [models.Index(fields=["question", "source"])]

    def __str__(self):
        return f"{self.get_source_display()} {self.student_id[:12]} on {self.question_id}"

    def status_shown(self, scores_visible):
        """The status a person sees: under blind mode (scores hidden) "ready" where other people's
        labels made it "labelled" or "adjudicated"."""
        if not scores_visible and self.status in self.BLIND_MASKED_STATUSES:
            return self.Status.READY
        return self.status

    @property
    def status_shown_display(self):
        """The shown status's label, for a row annotated by annotation.selectors.with_scores_visible."""
        return self.Status(self.status_shown(getattr(self, "scores_visible", False))).label


class ImportReport(models.Model):
    """What one import did: counts created/skipped and the records that need a look."""

    kind = models.CharField(max_length=32)
    file_name = models.CharField(max_length=500)
    file_sha256 = models.CharField(max_length=64)
    created_by = models.ForeignKey("auth.User", on_delete=models.SET_NULL, null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    counts = models.JSONField(default=dict)
    warnings = models.JSONField(default=list, help_text=gettext_lazy("[{index, student_id, problem}] records kept as they are."))

    class Meta:
        ordering = ["-created"]

    def __str__(self):
        return f"{self.kind} import of {self.file_name}"
