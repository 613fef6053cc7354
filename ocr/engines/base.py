"""The one interface every OCR engine offers."""
from dataclasses import dataclass, field


class EngineUnavailable(Exception):
    """The engine cannot run here (missing binary, model or endpoint); the message says what to do."""


class EngineFailed(Exception):
    """The engine ran but gave no usable result for this page."""


@dataclass
class Token:
    """A piece of recognised text: its place in the raw text, confidence (0..1) and box.

    The box is [x0, y0, x1, y1] in pixels of the image the engine was given, or None when the
    engine gives no positions (a vision model).
    """

    offset: int
    length: int
    confidence: float | None
    box: list | None = None

    def scaled(self, factor):
        box = None if self.box is None else [round(v * factor, 1) for v in self.box]
        confidence = None if self.confidence is None else round(float(self.confidence), 4)
        return {"o": self.offset, "n": self.length, "c": confidence, "b": box}


@dataclass
class EngineResult:
    text: str
    tokens: list = field(default_factory=list)


class OcrEngine:
    """Base class. `input_kind` names the prepared image an engine reads best:

    - "binary": flattened, thresholded, deskewed page (classic engines such as tesseract);
    - "gray": flattened, deskewed grayscale page (learned detectors and recognisers);
    - "display": the deskewed colour rendition people see (vision models).
    """

    name = ""
    label = ""
    input_kind = "gray"

    def availability(self):
        """None when the engine can run, else a sentence saying why not."""
        return None

    def version(self):
        raise NotImplementedError

    def recognise(self, image):
        """Read a PIL image; return an EngineResult with boxes in that image's pixels."""
        raise NotImplementedError

    def warm_up(self, image):
        """Get ready to read pages fast (load models); engines with nothing to load do nothing."""
        return None


class TextBuilder:
    """Builds raw text piece by piece while recording each piece's offset as a Token."""

    def __init__(self):
        self.parts, self.tokens, self.length = [], [], 0

    def add(self, text, confidence=None, box=None, *, token=True):
        if not text:
            return
        if token:
            self.tokens.append(Token(self.length, len(text), confidence, box))
        self.parts.append(text)
        self.length += len(text)

    def result(self):
        return EngineResult("".join(self.parts), self.tokens)


def is_cjk(char):
    code = ord(char)
    return (
        0x3000 <= code <= 0x303F
        or 0x3400 <= code <= 0x4DBF
        or 0x4E00 <= code <= 0x9FFF
        or 0xF900 <= code <= 0xFAFF
        or 0xFF00 <= code <= 0xFFEF
    )


def needs_space(left, right):
    """Whether two words on one line are joined by a space: not between CJK characters."""
    if not left or not right:
        return False
    return not (is_cjk(left[-1]) or is_cjk(right[0]))
