"""Parse the cumulative rubric markers of a reference solution.

A RealMath-Eval reference solution is a worked answer with markers such as
``... f(a) = 1/2. ------3 points``: reaching that point with everything before it
correct earns 3 points in total. Markers are not always increasing in the text.
"""
import re
from dataclasses import dataclass
from decimal import Decimal

MARKER = re.compile(r"-{3,}\s*(\d+(?:\.\d+)?)\s*(?:points?|pts?|分)", re.IGNORECASE)
SUB_LABEL = re.compile(r"^\s*[（(]\s*([0-9]+|[ivxIVX]+)\s*[)）]")


@dataclass
class ParsedCheckpoint:
    order: int
    cumulative_points: Decimal
    text: str
    start: int
    end: int
    sub_label: str  # "(1)" style label of the sub-question this step belongs to, or ""


def parse_checkpoints(reference):
    """Return the checkpoints of a reference solution in text order."""
    checkpoints = []
    segment_start = 0
    current_label = ""
    for order, match in enumerate(MARKER.finditer(reference or "")):
        segment = reference[segment_start : match.start()]
        label = SUB_LABEL.match(segment.lstrip("\n"))
        if label:
            current_label = f"({label.group(1)})"
        checkpoints.append(
            ParsedCheckpoint(
                order=order,
                cumulative_points=Decimal(match.group(1)),
                text=segment.strip(),
                start=segment_start,
                end=match.end(),
                sub_label=current_label,
            )
        )
        segment_start = match.end()
    return checkpoints


def sub_question_label(key):
    """Canonical sub-question label of a score key: '3-17.(1)' and '(1)' both give '(1)'."""
    match = re.search(r"[（(]\s*([^()（）]+?)\s*[)）]\s*$", key)
    return f"({match.group(1)})" if match else key.strip()


def sub_question_maxima(checkpoints):
    """Maximum points per sub-question label, when the cumulative markers increase.

    Returns {} when markers are not increasing: the maxima cannot be read off then.
    """
    points = [c.cumulative_points for c in checkpoints]
    if not points or any(b < a for a, b in zip(points, points[1:])):
        return {}
    if any(not c.sub_label for c in checkpoints):
        return {}
    maxima, previous_total = {}, Decimal(0)
    for checkpoint in checkpoints:
        increment = checkpoint.cumulative_points - previous_total
        maxima[checkpoint.sub_label] = maxima.get(checkpoint.sub_label, Decimal(0)) + increment
        previous_total = checkpoint.cumulative_points
    return maxima
