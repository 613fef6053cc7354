"""What the Validity view writes: the random draws of answers sent to experts for golds.

A prediction-powered estimate is valid only when the answers with a gold are a random subset; each
draw is kept with its seed and the answers it picked, so the subset can be shown to be random and
drawn again (docs/validity.md)."""
from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy


class GoldDraw(models.Model):
    class Purpose(models.TextChoices):
        GOLDS = "golds", gettext_lazy("Golds for prediction-powered estimates")
        AAT = "aat", gettext_lazy("Third expert labels for the Alternative Annotator Test")
        DEFERRED = "deferred", gettext_lazy("Answers the judge may not grade alone")

    setting = models.ForeignKey("grading.JudgeSetting", on_delete=models.PROTECT, related_name="gold_draws")
    purpose = models.CharField(max_length=16, choices=Purpose.choices, default=Purpose.GOLDS)
    selection = models.JSONField(default=dict, help_text=gettext_lazy("Exam, question and source the draw was made from."))
    seed = models.BigIntegerField()
    response_ids = models.JSONField(default=list)
    labels_per_answer = models.PositiveSmallIntegerField(default=1)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self):
        return f"{self.get_purpose_display()}: {len(self.response_ids)} answers (seed {self.seed})"
