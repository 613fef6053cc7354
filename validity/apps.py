from django.apps import AppConfig
from django.utils.translation import gettext_lazy


class ValidityConfig(AppConfig):
    name = "validity"
    verbose_name = gettext_lazy("Validity")
    default_auto_field = "django.db.models.BigAutoField"
    report_section = "validity.report_section"  # its part of the methods report (grading.report.document)
