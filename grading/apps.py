from django.apps import AppConfig


class GradingConfig(AppConfig):
    name = "grading"
    verbose_name = "Judges and meta-evaluation"
    export_section = "grading.exchange"  # its part of the full export (annotation.export.sections)
