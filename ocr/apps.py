from django.apps import AppConfig


class OcrConfig(AppConfig):
    name = "ocr"
    verbose_name = "Scans and OCR"
    export_section = "ocr.exchange"  # its part of the full export (annotation.export.sections)
    scan_panel = "ocr.panels"  # scans beside labels, batches to assign (annotation.labelling.scans)

    def ready(self):
        # The vision engine calls through the `llm` transport, which reads no settings itself
        # (imported here: an app config module is imported before the settings may be read).
        from core import llm_settings

        llm_settings.install()
