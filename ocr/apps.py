from django.apps import AppConfig


class OcrConfig(AppConfig):
    name = "ocr"
    verbose_name = "Scans and OCR"
    export_section = "ocr.exchange"  # its part of the full export (annotation.export.sections)
