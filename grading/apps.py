from django.apps import AppConfig


class GradingConfig(AppConfig):
    name = "grading"
    verbose_name = "Judges and meta-evaluation"

    def ready(self):
        # The equivalence library reads no settings itself: hand it ours once, at start.
        from django.conf import settings

        import equivalence

        equivalence.configure(workers=settings.EQUIVALENCE_WORKERS, memory_mb=settings.EQUIVALENCE_MEMORY_MB,
                              warmup=settings.EQUIVALENCE_WARMUP, debug=settings.EQUIVALENCE_DEBUG)
