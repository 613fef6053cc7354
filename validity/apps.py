from django.apps import AppConfig
from django.utils.translation import gettext_lazy


class ValidityConfig(AppConfig):
    name = "validity"
    verbose_name = gettext_lazy("Validity")
    default_auto_field = "django.db.models.BigAutoField"
    export_section = "validity.exchange"  # its part of the full export (annotation.export.sections)
    report_section = "validity.report_section"  # its part of the methods report (grading.report.document)
    demo_section = "validity.demo"  # its part of manage.py load_demo (annotation.demo)
