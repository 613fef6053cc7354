"""Settings of the ocr app, each with a default; override any of them in config/settings.py.

Limits guard the upload path against hostile files; the vision engine reads its endpoint and
the *name* of the environment variable that holds its key (the key itself never reaches the
database).
"""
import os

from django.conf import settings

DEFAULTS = {
    # Uploads
    "OCR_MAX_UPLOAD_BYTES": int(os.environ.get("OCR_MAX_UPLOAD_BYTES", 40 * 1024 * 1024)),
    "OCR_MAX_PIXELS": int(os.environ.get("OCR_MAX_PIXELS", 64_000_000)),
    "OCR_MAX_SIDE": int(os.environ.get("OCR_MAX_SIDE", 20_000)),
    "OCR_MIN_SIDE": 32,
    "OCR_MAX_PDF_PAGES": int(os.environ.get("OCR_MAX_PDF_PAGES", 50)),
    "OCR_MAX_FILES_PER_BATCH": 200,
    # A class's PDF (all packets in one file, cut by a roster and a template) may be larger.
    "OCR_MAX_CLASS_PDF_PAGES": int(os.environ.get("OCR_MAX_CLASS_PDF_PAGES", 1000)),
    "OCR_MAX_CLASS_PDF_BYTES": int(os.environ.get("OCR_MAX_CLASS_PDF_BYTES", 200 * 1024 * 1024)),
    "OCR_PDF_DPI": 200,
    # Image processing
    "OCR_WORK_MAX_SIDE": 2400,
    "OCR_WEB_MAX_SIDE": 1600,
    "OCR_THUMB_MAX_SIDE": 240,
    # Celery queue of the page tasks ("" = Celery's default queue); lets OCR have its own workers.
    "OCR_QUEUE": os.environ.get("OCR_QUEUE", ""),
    # Engines
    "OCR_DEFAULT_ENGINE": os.environ.get("OCR_DEFAULT_ENGINE", "rapidocr"),
    "OCR_ENGINE_THREADS": int(os.environ.get("OCR_ENGINE_THREADS", 1)),
    # Each worker process loads and runs the default engine once when it starts, not on its first page.
    "OCR_WARM_UP": os.environ.get("OCR_WARM_UP", "1").strip().lower() in {"1", "true", "yes", "on"},
    "OCR_ENGINE_TIMEOUT": 180,
    "OCR_TESSERACT_LANG": "chi_sim+eng",
    "OCR_LOW_CONFIDENCE": 0.80,
    "OCR_VISION_BASE_URL": os.environ.get("OCR_VISION_BASE_URL", ""),
    "OCR_VISION_API_KEY_ENV": os.environ.get("OCR_VISION_API_KEY_ENV", "OPENAI_API_KEY"),
    "OCR_VISION_MODEL": os.environ.get("OCR_VISION_MODEL", ""),
    "OCR_VISION_MAX_TOKENS": 4096,
    "OCR_VISION_MAX_RETRIES": 2,
}


def get(name):
    """The value of an ocr setting: config/settings.py first, then the default above."""
    if name == "OCR_VISION_BASE_URL":
        return getattr(settings, name, "") or DEFAULTS[name] or getattr(settings, "OPENAI_BASE_URL", "")
    return getattr(settings, name, DEFAULTS[name])
