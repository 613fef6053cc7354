"""Quote anchors of step labels: a label found again in the transcript by quote and context, not by offsets alone
(not to be confused with the anchoring-bias experiment, annotation/labelling/experiment.py).

The model is the W3C Web Annotation data model's two selectors used together:
a TextQuoteSelector (`exact`, `prefix`, `suffix`) and a TextPositionSelector (`start`, `end`,
Unicode code points of the raw text). After a transcript changes, a span is found again by
`reanchor`: the old position if the quote is still there and its context fits best, else the one
occurrence of the quote whose surrounding text matches the stored prefix and suffix best. A quote
that is gone, or that occurs several times with no context telling them apart, is not guessed:
`reanchor` returns None and the label is marked for review.

Pure functions, no Django: the labelling services and rules call them.
"""
from __future__ import annotations

from dataclasses import dataclass
from os.path import commonprefix

CONTEXT_CHARS = 32


@dataclass(frozen=True)
class Anchor:
    start: int
    end: int


def quote_selector(text: str, start: int, end: int, context: int = CONTEXT_CHARS) -> dict:
    """The quote selector of text[start:end]: the quote and up to `context` characters either side."""
    return {
        "quote": text[start:end],
        "prefix": text[max(0, start - context):start],
        "suffix": text[end:end + context],
    }


def occurrences(text: str, exact: str) -> list[int]:
    """Start offsets of every (possibly overlapping) occurrence of `exact` in `text`."""
    found, at = [], text.find(exact)
    while exact and at >= 0:
        found.append(at)
        at = text.find(exact, at + 1)
    return found


def _context_score(text: str, at: int, exact: str, prefix: str, suffix: str) -> int:
    """How many characters of the stored prefix and suffix still surround the occurrence at `at`."""
    before = text[max(0, at - len(prefix)):at]
    after = text[at + len(exact):at + len(exact) + len(suffix)]
    return len(commonprefix([prefix[::-1], before[::-1]])) + len(commonprefix([suffix, after]))


def reanchor(text: str, exact: str, prefix: str = "", suffix: str = "", start: int | None = None) -> Anchor | None:
    """Where the quote `exact` lies in `text` now, or None when it is gone or ambiguous.

    The old position wins when the quote is still there and no other occurrence has more of its
    context; otherwise the single occurrence with the most context wins. Ties between
    occurrences other than the old position are ambiguous.
    """
    candidates = occurrences(text, exact)
    if not candidates:
        return None
    if len(candidates) == 1:
        return Anchor(candidates[0], candidates[0] + len(exact))
    scores = {at: _context_score(text, at, exact, prefix, suffix) for at in candidates}
    best = max(scores.values())
    winners = [at for at, score in scores.items() if score == best]
    if start in winners:
        return Anchor(start, start + len(exact))
    if len(winners) == 1 and best > 0:
        return Anchor(winners[0], winners[0] + len(exact))
    return None
