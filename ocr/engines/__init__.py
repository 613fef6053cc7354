"""OCR engines behind one interface (see base.OcrEngine), chosen per batch by name."""
from django.utils.translation import gettext

from .base import EngineFailed, EngineResult, EngineUnavailable, OcrEngine, Token
from .rapid import RapidOcrEngine
from .tesseract import TesseractEngine
from .vision import VisionEngine

OCR_ENGINES = {engine.name: engine for engine in (RapidOcrEngine, TesseractEngine, VisionEngine)}


def get_engine(name):
    """An engine instance by name; KeyError names the known ones."""
    try:
        return OCR_ENGINES[name]()
    except KeyError:
        raise KeyError(f"Unknown OCR engine {name!r}; known: {', '.join(OCR_ENGINES)}") from None


def engine_choices():
    """(name, label) pairs of every engine, with the reason when one cannot run here."""
    choices = []
    for name, cls in OCR_ENGINES.items():
        problem = cls().availability()
        choices.append((name, cls.label if not problem else gettext("%(engine)s (unavailable: %(problem)s)") % {
            "engine": cls.label, "problem": problem}))
    return choices


def available_engines():
    return [name for name, cls in OCR_ENGINES.items() if cls().availability() is None]


__all__ = [
    "OCR_ENGINES",
    "EngineFailed",
    "EngineResult",
    "EngineUnavailable",
    "OcrEngine",
    "Token",
    "available_engines",
    "engine_choices",
    "get_engine",
]
