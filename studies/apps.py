from django.apps import AppConfig
from django.utils.translation import gettext_lazy


class StudiesConfig(AppConfig):
    """The judge studies (perturbation probes, OCR attribution, the style ablation, error geometry
    and step surprisal). Its models keep the app label `grading` (their tables and migrations stay
    in grading/migrations): Django registers them under that label, this app owns their code.
    grading does not import it: the studies reach grading's report, queue and run watchdog through
    the hooks below."""

    name = "studies"
    label = "studies"
    verbose_name = gettext_lazy("Judge studies")
    default_auto_field = "django.db.models.BigAutoField"
    report_section = "studies.report_section"  # its part of the methods report (grading.report.document)
    queue_attribution = "studies.selectors"  # OCR attribution of the disagreement queue's rows (with_attribution)
    run_engines = ("studies.services.PROBE_RUNS", "studies.geometry.services.GEOMETRY_RUNS")  # grading.runs.engine.engine_paths
