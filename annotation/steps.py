"""The atomic steps of an answer's text (pure Python, no Django): the one step splitter, used by
the step judges (grading.judges.strategies), the Validity view's first-wrong-step agreement and
the error-geometry study (studies.geometry).

Invariants:

- Nothing here rewrites text. A step is a slice of the text it was split from (`Step.start`/
  `Step.end` index that text); only whitespace lies between steps. So ``"".join(text.split())``
  equals the steps' non-whitespace characters in order (`covers`), whatever splitter made them.
- An LLM's split ("Step 1: ..." lines) is accepted only when every step it returns is found,
  in order, in the text with nothing but whitespace between (`align_steps`); otherwise the
  caller falls back to the rule-based split and counts the fallback.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_MATH = re.compile(r"\$\$.*?\$\$|\$(?:[^$\\]|\\.)+?\$|\\\[.*?\\\]|\\\(.*?\\\)", re.DOTALL)
# Where a new step may start inside a line: after a sentence end, or before a conclusion word.
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+(?=\S)|(?<=[。！？；])\s*(?=\S)")
_CONNECTIVE = re.compile(r"(?=∴|\\therefore\b|(?<![A-Za-z])(?:therefore|Therefore|THEREFORE)\b|所以|因此|故)")
_NUMBERED = re.compile(r"(?=(?<![A-Za-z0-9])(?:Step|step|STEP)\s*\d+\s*[:.：])|(?=第\s*[0-9一二三四五六七八九十]+\s*步)")
_STEP_LINE = re.compile(r"^\s*(?:\*\*)?\s*(?:Step|STEP|step)\s*(\d+)\s*(?:\*\*)?\s*[:.：)]\s*(?:\*\*)?\s?", re.MULTILINE)
MIN_STEP_CHARS = 4  # a piece with fewer non-space characters ("17.", "(2)") joins the next one


@dataclass(frozen=True)
class Step:
    start: int
    end: int
    text: str


def _protected(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in _MATH.finditer(text)]


def _inside(position: int, regions) -> bool:
    return any(start < position < end for start, end in regions)


def split_steps(text: str) -> list[Step]:
    """The rule-based split: line breaks, sentence ends, before ∴ / therefore / 所以 / 因此 / 故,
    and before numbered steps ("Step 2:", "第2步"); never inside a formula ($...$, \\[...\\],
    \\(...\\)). Pieces with fewer than MIN_STEP_CHARS non-space characters join the next piece."""
    regions = _protected(text)
    cuts = {0, len(text)}
    for match in re.finditer(r"\n", text):
        if not _inside(match.start(), regions):
            cuts.add(match.end())
    for pattern in (_SENTENCE_END, _CONNECTIVE, _NUMBERED):
        for match in pattern.finditer(text):
            position = match.end() if pattern is _SENTENCE_END else match.start()
            if not _inside(position, regions):
                cuts.add(position)
    bounds = sorted(cuts)
    pieces = []
    for start, end in zip(bounds, bounds[1:]):
        start, end = _trim(text, start, end)
        if start < end:
            pieces.append([start, end])
    merged = []
    for piece in pieces:
        if merged and _weight(text, merged[-1]) < MIN_STEP_CHARS:
            merged[-1][1] = piece[1]
        else:
            merged.append(piece)
    if len(merged) > 1 and _weight(text, merged[-1]) < MIN_STEP_CHARS:
        last = merged.pop()
        merged[-1][1] = last[1]
    return [Step(start, end, text[start:end]) for start, end in merged]


def _trim(text, start, end):
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _weight(text, piece):
    return sum(1 for ch in text[piece[0] : piece[1]] if not ch.isspace())


def parse_step_lines(output: str) -> list[str]:
    """The steps of an LLM's "Step 1: ... / Step 2: ..." answer (a step may run over several lines)."""
    marks = list(_STEP_LINE.finditer(output or ""))
    steps = []
    for index, mark in enumerate(marks):
        end = marks[index + 1].start() if index + 1 < len(marks) else len(output)
        piece = output[mark.end() : end].strip()
        if piece:
            steps.append(piece)
    return steps


def align_steps(text: str, steps: list[str]) -> list[Step] | None:
    """Place each proposed step in `text`, in order, with only whitespace between them.

    Inside a step a run of whitespace matches any run of whitespace (a model may join lines);
    every other character must be the same. Returns the steps as slices of `text`, or None
    when the proposal changes, drops, reorders or adds text.
    """
    if not steps:
        return None
    position, placed = 0, []
    for step in steps:
        words = step.split()
        if not words:
            return None
        pattern = re.compile(r"\s*(" + r"\s+".join(re.escape(word) for word in words) + r")")
        match = pattern.match(text, position)
        if match is None:
            return None
        placed.append(Step(match.start(1), match.end(1), match.group(1)))
        position = match.end()
    if text[position:].strip():
        return None
    return placed


def covers(text: str, steps: list[Step]) -> bool:
    """Whether the steps are slices of `text`, in order, covering all of its non-space characters."""
    position = 0
    for step in steps:
        if step.start < position or text[step.start : step.end] != step.text or text[position : step.start].strip():
            return False
        position = step.end
    return not text[position:].strip()
