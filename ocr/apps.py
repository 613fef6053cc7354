from django.apps import AppConfig


class OcrConfig(AppConfig):
    name = "ocr"
    verbose_name = "Scans and OCR"
    export_section = "ocr.exchange"  # its part of the full export (annotation.export.sections)

    def ready(self):
        # The vision engine calls through the `llm` transport, which reads no settings itself
        # (imported here: an app config module is imported before the settings may be read).
        from config import llm as llm_config

        llm_config.install()
