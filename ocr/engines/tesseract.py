"""Tesseract through pytesseract (LSTM, Chinese simplified + English by default)."""
import os
import shutil

from django.conf import settings
from django.utils.translation import gettext_lazy

from .base import EngineFailed, EngineUnavailable, OcrEngine, TextBuilder, needs_space

# Tesseract's OpenMP threads fight with Celery's worker processes on few cores; one thread
# per process is faster overall. The variable reaches the tesseract subprocess through the env.
os.environ.setdefault("OMP_THREAD_LIMIT", "1")


class TesseractEngine(OcrEngine):
    name = "tesseract"
    label = gettext_lazy("Tesseract (chi_sim + eng)")
    input_kind = "binary"
    config = "--oem 1 --psm 3"

    def __init__(self, lang=None):
        self.lang = lang or settings.OCR_TESSERACT_LANG

    def availability(self):
        if not shutil.which("tesseract"):
            return "The tesseract program is not installed (Debian: apt-get install tesseract-ocr tesseract-ocr-chi-sim)."
        try:
            import pytesseract  # imported here (~1 s), as in version and recognise: only OCR uses it

            installed = set(pytesseract.get_languages(config=""))
        except Exception as exc:  # noqa: BLE001 - report any failure to query the binary
            return f"tesseract does not answer: {exc}"
        missing = [lang for lang in self.lang.split("+") if lang not in installed]
        if missing:
            return f"tesseract lacks language data {', '.join(missing)} (Debian: tesseract-ocr-{missing[0].replace('_', '-')})."
        return None

    def version(self):
        import pytesseract

        return f"tesseract {pytesseract.get_tesseract_version()} ({self.lang}, {self.config})"

    def recognise(self, image):
        import pytesseract

        problem = self.availability()
        if problem:
            raise EngineUnavailable(problem)
        try:
            data = pytesseract.image_to_data(
                image,
                lang=self.lang,
                config=self.config,
                output_type=pytesseract.Output.DICT,
                timeout=settings.OCR_ENGINE_TIMEOUT,
            )
        except RuntimeError as exc:  # pytesseract's timeout
            raise EngineFailed(f"tesseract took longer than {settings.OCR_ENGINE_TIMEOUT} s") from exc
        except pytesseract.TesseractError as exc:
            raise EngineFailed(f"tesseract failed: {exc}") from exc
        return build_text(data)


def build_text(data):
    """Join tesseract's words into lines; CJK words are split into characters sharing the word's box."""
    builder = TextBuilder()
    previous_line, previous_word = None, ""
    for i, word in enumerate(data["text"]):
        word = (word or "").strip()
        if data["level"][i] != 5 or not word:
            continue
        line = (data["block_num"][i], data["par_num"][i], data["line_num"][i])
        if previous_line is not None and line != previous_line:
            builder.add("\n", token=False)
            previous_word = ""
        elif needs_space(previous_word, word):
            builder.add(" ", token=False)
        previous_line, previous_word = line, word
        confidence = max(0.0, float(data["conf"][i])) / 100.0
        left, top, width, height = (data[key][i] for key in ("left", "top", "width", "height"))
        step = width / len(word)
        for k, char in enumerate(word):
            box = [left + k * step, top, left + (k + 1) * step, top + height]
            builder.add(char, confidence, box)
    return builder.result()
