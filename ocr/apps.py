from django.apps import AppConfig


class OcrConfig(AppConfig):
    name = "ocr"
    verbose_name = "Scans and OCR"
