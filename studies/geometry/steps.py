"""Error segments of an answer's text (pure Python, no Django): a sub-question's span, and where a
probe changed a text. A segment is a slice of the transcript; its steps are split by the one step
splitter, annotation.steps.
"""
from __future__ import annotations

import re

# Sub-question markers in a student's text: "(1)", "（2）", "(II)", optionally after the
# question number ("17. (1)") or a word ("For (1),", "Part (2)").
_MARKER_HEAD = r"(?:^|(?<=\n))[^\S\n]*(?:[#*>][#*>\s]*)?(?:\d+[^\S\n]*[.、．][^\S\n]*)?"
_MARKER_WORD = r"(?:for|part|question|sub-?question|problem)"


def sub_question_spans(text: str, labels: list[str]) -> dict[str, tuple[int, int]]:
    """{label: (start, end)} of each sub-question found in `text`, in the order of `labels`.

    A sub-question runs from its marker to the next found marker (or the end). Labels are
    canonical ("(1)"); the text may write them with full-width brackets or spaces. A label not
    found after the previous one is left out.
    """
    found, position = [], 0
    for label in labels:
        inner = label.strip().strip("()（）").strip()
        if not inner:
            continue
        pattern = re.compile(_MARKER_HEAD + _marker(_spellings(inner)), re.IGNORECASE)
        match = pattern.search(text, position)
        if match is None:
            continue
        start = match.start() + len(match.group(0)) - len(match.group(0).lstrip())
        found.append((label, start))
        position = match.end()
    spans = {}
    for index, (label, start) in enumerate(found):
        end = found[index + 1][1] if index + 1 < len(found) else len(text)
        spans[label] = (start, end)
    return spans


_ROMAN = ["I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X"]
_UNICODE_ROMAN = "ⅠⅡⅢⅣⅤⅥⅦⅧⅨⅩ"


def _spellings(inner: str) -> str:
    """A label's number as students write it: "2", "II" ("ii" matches too: the pattern ignores
    case) or "Ⅱ", whichever spelling the rubric's label used (the release's scores say "(2)" where
    the question and its answers say "(Ⅱ)")."""
    upper = inner.upper()
    number = int(inner) if inner.isascii() and inner.isdigit() else (
        _ROMAN.index(upper) + 1 if upper in _ROMAN else _UNICODE_ROMAN.find(inner) + 1)
    if not 1 <= number <= len(_ROMAN):
        return re.escape(inner)
    return "(?:" + "|".join([str(number), _ROMAN[number - 1], _UNICODE_ROMAN[number - 1]]) + ")"


def _marker(inner: str) -> str:
    """A sub-question marker: "(1)", "Part (1)", "Sub-question (1)", or "Part 1" before ":" / "." / ")"."""
    bracketed = rf"(?:{_MARKER_WORD}[^\S\n]*)?[（(][^\S\n]*{inner}[^\S\n]*[)）]"
    bare = rf"{_MARKER_WORD}[^\S\n]*{inner}(?=[^\S\n]*[:：.)])"
    return rf"(?P<marker>{bracketed}|{bare})"


# --- probe-derived segments -----------------------------------------------------------------

def change_point(original: str, derived: str) -> int:
    """Where a probe changed the text: the length of the longest common prefix of the original
    and the derived text (a slipped number's first digit, or where a line was removed)."""
    limit = min(len(original), len(derived))
    index = 0
    while index < limit and original[index] == derived[index]:
        index += 1
    return index


def span_at(spans: dict[str, tuple[int, int]], point: int) -> str | None:
    """The label of the span holding character `point` (a change at a span's very end, e.g. a
    removed last line, belongs to that span); None when it lies before every span."""
    chosen = None
    for label, (start, end) in sorted(spans.items(), key=lambda item: item[1][0]):
        if start <= point <= end:
            chosen = label
    return chosen


def line_at(text: str, point: int) -> tuple[int, int]:
    """(start, end) of the line holding character `point`."""
    point = max(0, min(point, len(text)))
    start = text.rfind("\n", 0, point) + 1
    end = text.find("\n", point)
    return start, len(text) if end < 0 else end
