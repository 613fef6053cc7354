from django.apps import AppConfig


class GradingConfig(AppConfig):
    name = "grading"
    verbose_name = "Judges and meta-evaluation"
    export_section = "grading.exchange"  # its part of the full export (annotation.export.sections)
    demo_section = "grading.demo"  # its part of manage.py load_demo (annotation.demo)
    release_import_option = "grading.judges.prompt_set_option"  # import_realmath --prompt-set

    def ready(self):
        # The libraries read no settings themselves: hand them ours once, at start (imported
        # here: an app config module is imported before the settings may be read).
        from django.conf import settings

        import equivalence  # in ready(): settings are loaded
        from core import llm_settings  # in ready(): settings are loaded

        llm_settings.install()
        equivalence.configure(workers=settings.EQUIVALENCE_WORKERS, memory_mb=settings.EQUIVALENCE_MEMORY_MB,
                              warmup=settings.EQUIVALENCE_WARMUP, debug=settings.EQUIVALENCE_DEBUG)
