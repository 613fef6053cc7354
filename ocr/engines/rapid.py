"""RapidOCR (PP-OCR detection + recognition models on onnxruntime), offline.

The `rapidocr` wheel ships its default models (PP-OCRv6 small detector and recogniser, the
PP-OCR mobile direction classifier) in its `models/` folder. We name those files explicitly:
with `model_path` set, RapidOCR never takes its download path, so it runs without a network,
and a missing model is an error here rather than a download at run time.
"""
import os
import threading
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np
from django.conf import settings
from django.utils.translation import gettext_lazy

from .base import EngineUnavailable, OcrEngine, TextBuilder, needs_space

_ENGINE = None  # (process id, RapidOCR): one loaded engine per process, never inherited through fork
_LOCK = threading.Lock()  # RapidOCR keeps per-call options on the instance: one call at a time.

BUNDLED_MODELS = {
    "Det": "PP-OCRv6_det_small.onnx",
    "Rec": "PP-OCRv6_rec_small.onnx",
    "Cls": "ch_ppocr_mobile_v2.0_cls_mobile.onnx",
}


def models_dir():
    import rapidocr  # imported here: the engine loads onnxruntime; processes without OCR skip it

    return Path(rapidocr.__file__).resolve().parent / "models"


def bundled_model_paths():
    return {stage: models_dir() / filename for stage, filename in BUNDLED_MODELS.items()}


class RapidOcrEngine(OcrEngine):
    name = "rapidocr"
    label = gettext_lazy("RapidOCR (PP-OCRv6, offline)")
    input_kind = "gray"

    def availability(self):
        try:
            paths = bundled_model_paths()
        except ImportError:
            return "The rapidocr package is not installed (pip install -r requirements.txt)."
        missing = [str(path) for path in paths.values() if not path.exists()]
        if missing:
            return f"RapidOCR model files are missing: {', '.join(missing)}. Reinstall the rapidocr wheel."
        return None

    def version(self):
        try:
            return f"rapidocr {version('rapidocr')} (PP-OCRv6 small det/rec, onnxruntime {version('onnxruntime')})"
        except PackageNotFoundError:  # pragma: no cover
            return "rapidocr (unknown version)"

    def _engine(self):
        """The process's RapidOCR, loaded on first use (call with _LOCK held).

        A worker runs one process per core, each with OCR_ENGINE_THREADS onnxruntime threads
        (default 1) and as many OpenCV threads, so that processes x threads never exceeds the
        cores; more threads per process only make the processes fight over the cores.
        """
        global _ENGINE
        if _ENGINE is None or _ENGINE[0] != os.getpid():
            problem = self.availability()
            if problem:
                raise EngineUnavailable(problem)
            import cv2  # RapidOCR's image operations; loaded with the engine only
            from rapidocr import RapidOCR  # see models_dir

            threads = settings.OCR_ENGINE_THREADS
            cv2.setNumThreads(threads)
            params = {
                "Global.log_level": "error",
                "EngineConfig.onnxruntime.intra_op_num_threads": threads,
                "EngineConfig.onnxruntime.inter_op_num_threads": 1,
            }
            for stage, path in bundled_model_paths().items():
                params[f"{stage}.model_path"] = str(path)
            _ENGINE = (os.getpid(), RapidOCR(params=params))
        return _ENGINE[1]

    def recognise(self, image):
        array = np.asarray(image.convert("L"))
        with _LOCK:
            output = self._engine()(array, return_word_box=True, return_single_char_box=True)
        return build_text(output)

    def warm_up(self, image):
        """Load the models and run them once: onnxruntime's first run on a new session is several
        times slower than the next ones, and should not fall on a user's first page."""
        self.recognise(image)


def build_text(output):
    """Group detected text boxes into visual lines (top to bottom, left to right) with char boxes."""
    if output.txts is None or output.boxes is None:
        return TextBuilder().result()
    items = []
    for index, (text, score, quad) in enumerate(zip(output.txts, output.scores, output.boxes)):
        quad = np.asarray(quad, dtype=float)
        x0, y0 = quad.min(axis=0)
        x1, y1 = quad.max(axis=0)
        words = output.word_results[index] if output.word_results else ()
        items.append({"text": text, "score": float(score), "box": [x0, y0, x1, y1], "words": words})
    builder = TextBuilder()
    for line_number, line in enumerate(_visual_lines(items)):
        if line_number:
            builder.add("\n", token=False)
        previous = ""
        for item in line:
            if needs_space(previous, item["text"]):
                builder.add(" ", token=False)
            _add_item(builder, item)
            previous = item["text"]
    return builder.result()


def _visual_lines(items):
    lines = []
    for item in sorted(items, key=lambda it: (it["box"][1] + it["box"][3]) / 2):
        centre = (item["box"][1] + item["box"][3]) / 2
        height = item["box"][3] - item["box"][1]
        if lines:
            last = lines[-1]
            last_centre = sum((it["box"][1] + it["box"][3]) / 2 for it in last) / len(last)
            if abs(centre - last_centre) < height / 2:
                last.append(item)
                continue
        lines.append([item])
    return [sorted(line, key=lambda it: it["box"][0]) for line in lines]


def _add_item(builder, item):
    """Add one detected text box: per character where RapidOCR gave character boxes."""
    text, cursor = item["text"], 0
    for piece, score, quad in item["words"] or ():
        piece = piece or ""
        position = text.find(piece, cursor) if piece else -1
        if position < 0:
            continue
        _add_gap(builder, text[cursor:position], item)
        quad = np.asarray(quad, dtype=float)
        (x0, y0), (x1, y1) = quad.min(axis=0), quad.max(axis=0)
        builder.add(piece, float(score), [float(x0), float(y0), float(x1), float(y1)])
        cursor = position + len(piece)
    _add_gap(builder, text[cursor:], item)


def _add_gap(builder, text, item):
    """Text between character boxes: spaces carry no token, anything else gets the line's box."""
    builder.add(text, item["score"], [float(v) for v in item["box"]], token=bool(text.strip()))
