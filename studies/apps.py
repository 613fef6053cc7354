from django.apps import AppConfig
from django.utils.translation import gettext_lazy


class StudiesConfig(AppConfig):
    """The judge studies (perturbation probes, OCR attribution, the style ablation, error geometry
    and step surprisal). Its models keep the app label `grading` (their tables and migrations stay
    in grading/migrations): Django registers them under that label, this app owns their code."""

    name = "studies"
    label = "studies"
    verbose_name = gettext_lazy("Judge studies")
    default_auto_field = "django.db.models.BigAutoField"
