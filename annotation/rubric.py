"""Read the step-wise rubric of a reference solution: checkpoints, sub-questions, full points.

A RealMath-Eval reference solution is a worked answer with markers such as
``... f(a) = 1/2. ------3 points``: reaching that point with everything before it correct earns 3
points. `read_rubric` reads, from the text alone (no Django, no database):

- the **checkpoints**: every marker, in text order, with the step text that ends at it; a marker
  that states the question's total ("(This subquestion total ------13 points)") is not a step;
- the **sub-question of each step**: labels such as "(1)", "（2）", "19. (1)", "Part (2)", "(I)"
  or "(Ⅱ)", wherever a line opens with one (after a question number, "Solution:", "【详解】", ...),
  or mid-line after a sentence when it is the next label in sequence. One numbering scheme is the
  sub-questions' (arabic, upper roman or lower roman): the one that covers the labels the scores
  use (the release's ``sub_question_scores`` keys, given as `keys`), else the first in the text;
  the other schemes, circled numbers ①② and references such as "from (1) we get" are not
  sub-questions. A step belongs to the last sub-question label before its marker; a step before
  any label belongs to the first sub-question; labels never go back (a "(1)" inside "(2)" is an
  inner case of (2));
- the **full points per sub-question**: the markers are cumulative over the question (the last
  one is the full score) or restart in each sub-question (they add up to the full score); the
  full score decides which, and what fits neither is reported, never guessed. Markers need not
  increase in text order: a sub-question's points run from the most reached before it to the
  most reached at its end.

What cannot be read is returned as `problems` (codes with values, worded by `describe`), so the
import report, the question page and the rubric editor can show it.
"""
import re
from dataclasses import dataclass, field
from decimal import Decimal

from django.utils.translation import gettext

MARKER = re.compile(r"-{3,}\s*(\d+(?:\.\d+)?)\s*(?:points?|pts?|分)", re.IGNORECASE)
# A marker on a line that states the question's total is not a checkpoint.
TOTAL_WORDS = re.compile(r"\btotal\b|\bworth\b|共\s*\d|满分|总分|本题|本小题", re.IGNORECASE)

ROMAN = {"i": 1, "ii": 2, "iii": 3, "iv": 4, "v": 5, "vi": 6, "vii": 7, "viii": 8, "ix": 9, "x": 10}
UNICODE_ROMAN = dict(zip("ⅠⅡⅢⅣⅤⅥⅦⅧⅨⅩ", range(1, 11)))
LABEL_BODY = r"[（(]\s*(?P<label>\d{1,2}|[ivxIVX]{1,4}|[ⅠⅡⅢⅣⅤⅥⅦⅧⅨⅩ])\s*[)）]"
# What may stand before a sub-question label at the start of a line: a question number ("19."),
# a heading ("Solution:", "【详解】", "解："), "Part" or "第".
LINE_PREFIX = (
    r"(?:[ \t\u3000]*(?:\d{1,3}\s*[.．、]|【[^】\n]{0,20}】|"
    r"(?:solution|answers?|proof|detailed solution|analysis|解析?|证明|答|详解)\s*[:：]))*"
    r"[ \t\u3000]*(?:part\s*|第\s*)?"
)
LINE_LABEL = re.compile(r"(?m)^" + LINE_PREFIX + LABEL_BODY, re.IGNORECASE)
MID_LABEL = re.compile(r"(?:(?<=[.。;；!?！？])|(?<=points)|(?<=pts)|(?<=分))[ \t\u3000]+" + LABEL_BODY)
HEADING = re.compile(r"【[^】\n]{0,20}】|(?:solution|answers?|proof|detailed solution|analysis|解析?|证明|答|详解)\s*[:：]",
                     re.IGNORECASE)
KEY_LABEL = re.compile(r"[（(]\s*([^()（）]+?)\s*[)）]\s*$")

CUMULATIVE, RESTART = "cumulative", "per-sub-question"


@dataclass
class ParsedCheckpoint:
    order: int
    cumulative_points: Decimal
    text: str
    start: int
    end: int
    sub_label: str  # canonical label ("(1)") of the sub-question this step belongs to, or ""


@dataclass(frozen=True)
class Problem:
    code: str
    values: tuple = ()

    def __str__(self):
        return describe(self)


@dataclass
class RubricReading:
    checkpoints: list
    labels: list  # the sub-questions' labels, in order
    maxima: dict  # full points per label, where read
    mode: str = ""  # CUMULATIVE or RESTART, "" when no points could be read
    scheme: str = ""  # "arabic", "upper roman" or "lower roman": how the text numbers sub-questions
    problems: list = field(default_factory=list)

    @property
    def complete(self):
        """Every sub-question has its full points and nothing was left unread."""
        return not self.problems and all(label in self.maxima for label in self.labels)


@dataclass(frozen=True)
class _Candidate:
    position: int  # where the label's line (or sentence) starts
    scheme: str
    ordinal: int
    line_start: bool
    after_heading: bool = False  # opens a new pass through the sub-questions ("Analysis:", "Choose ①③:")


def ordinal_of(text):
    """The number of a label's body: '2' -> 2, 'II' / 'ii' / 'Ⅱ' -> 2; None for anything else."""
    text = text.strip()
    if text.isascii() and text.isdigit():
        return int(text)
    if text in UNICODE_ROMAN:
        return UNICODE_ROMAN[text]
    return ROMAN.get(text.lower())


def _scheme(body):
    if body.isascii() and body.isdigit():
        return "arabic"
    if body in UNICODE_ROMAN or body.isupper():
        return "upper roman"
    return "lower roman"


def sub_question_label(key):
    """Canonical sub-question label of a score key: '3-17.(1)' and '(1)' both give '(1)'."""
    match = KEY_LABEL.search(key)
    return f"({match.group(1)})" if match else key.strip()


def _markers(reference):
    """(match, is_total) for each points marker."""
    found = []
    for match in MARKER.finditer(reference):
        line_start = reference.rfind("\n", 0, match.start()) + 1
        found.append((match, bool(TOTAL_WORDS.search(reference[line_start : match.start()]))))
    return found


def _candidates(reference):
    found = []
    for match in LINE_LABEL.finditer(reference):
        ordinal = ordinal_of(match["label"])
        if ordinal:
            heading = bool(HEADING.search(reference[match.start() : match.start("label")]))
            found.append(_Candidate(match.start(), _scheme(match["label"]), ordinal, True,
                                    heading or _heading_before(reference, match.start())))
    for match in MID_LABEL.finditer(reference):
        ordinal = ordinal_of(match["label"])
        if ordinal:
            found.append(_Candidate(match.start("label") - 1, _scheme(match["label"]), ordinal, False))
    return sorted(found, key=lambda c: c.position)


def _heading_before(reference, position):
    """The last non-blank line before `position` introduces what follows ("Analysis:", "Choose ①③:",
    "【详解】") and is not itself a sub-question's line (a "(2) Two cases:" opens inner cases)."""
    before = reference[:position].rstrip()
    line = before[before.rfind("\n") + 1 :].strip()
    if not line or LINE_LABEL.match(line):
        return False
    return line.endswith((":", "：")) or bool(re.fullmatch(r"【[^】]{0,20}】", line))


def _choose_scheme(candidates, key_ordinals):
    """The numbering of the sub-questions: the first (in text order) that covers the keys."""
    first_seen = {}
    ordinals = {}
    for candidate in candidates:
        if candidate.line_start:
            first_seen.setdefault(candidate.scheme, candidate.position)
            ordinals.setdefault(candidate.scheme, set()).add(candidate.ordinal)
    wanted = set(key_ordinals) or {1}
    covering = [s for s in ordinals if wanted <= ordinals[s]]
    if not covering and not key_ordinals:
        covering = list(ordinals)
    if not covering:  # no scheme holds every key: the one holding most of them
        covering = [max(ordinals, key=lambda s: len(wanted & ordinals[s]))] if ordinals else []
    return min(covering, key=lambda s: first_seen[s]) if covering else ""


def _labels_from_keys(keys):
    """{ordinal: label} of the score keys (their own spelling), and the keys no ordinal reads."""
    by_ordinal, unreadable = {}, []
    for key in keys:
        label = sub_question_label(key)
        ordinal = ordinal_of(label[1:-1]) if label.startswith("(") else None
        if ordinal is None:
            unreadable.append(label)
        else:
            by_ordinal.setdefault(ordinal, label)
    return by_ordinal, unreadable


def _step_ordinals(checkpoints_at, candidates, scheme, allowed):
    """The sub-question ordinal of each checkpoint (given as (segment_start, marker_start)), and
    where its step text starts (the label's line when the segment opens a sub-question)."""
    result, current = [], None
    expected_next = 1
    pending = [c for c in candidates if c.scheme == scheme and c.ordinal in allowed]
    index = 0
    for seg_start, marker_start in checkpoints_at:
        text_start, last = seg_start, None
        while index < len(pending) and pending[index].position < marker_start:
            candidate = pending[index]
            index += 1
            if not candidate.line_start and candidate.ordinal != expected_next:
                continue  # mid-line: only the next label in sequence opens a sub-question
            running = last.ordinal if last is not None else current
            if running is not None and candidate.ordinal < running and not candidate.after_heading:
                continue  # an inner case ("(2) Two cases: (1) ... (2) ...")
            last = candidate
            expected_next = candidate.ordinal + 1
        if last is not None and last.ordinal != current:
            current = last.ordinal
            text_start = max(seg_start, last.position)
        result.append((current, text_start))
    return result


def _read_points(checkpoints, labels, full_score):
    """(mode, maxima, problems) from the checkpoints' markers and their sub-questions."""
    groups = {}
    for checkpoint in checkpoints:
        if checkpoint.sub_label:
            groups.setdefault(checkpoint.sub_label, []).append(checkpoint.cumulative_points)
    if not groups:
        return "", {}, []
    order = [label for label in labels if label in groups]
    cumulative, reached = {}, Decimal(0)
    for label in order:
        top = max(reached, *groups[label])
        cumulative[label] = top - reached
        reached = top
    restart = {label: max(groups[label]) for label in order}
    cumulative_total, restart_total = reached, sum(restart.values())
    starts_lower = any(groups[b][0] < max(groups[a]) for a, b in zip(order, order[1:]))
    if full_score is None:
        return (RESTART, restart, []) if starts_lower else (CUMULATIVE, cumulative, [])
    if cumulative_total == full_score and not (starts_lower and restart_total == full_score):
        return CUMULATIVE, cumulative, []
    if restart_total == full_score and len(order) > 1:
        return RESTART, restart, []
    return "", {}, [Problem("points_do_not_add_up", (_num(cumulative_total), _num(restart_total), _num(full_score)))]


def reached_before_each(groups, full_score=None):
    """How the markers count, for checkpoints grouped by sub-question in text order.

    `groups` is a list of lists of cumulative marker values, one list per sub-question. Returns
    (mode, starts): RESTART or CUMULATIVE (as `read_rubric` reads them) and the points already
    reached when each group begins (0 for every group when the markers restart per sub-question).
    """
    labels = [str(n) for n in range(len(groups))]
    checkpoints = [ParsedCheckpoint(0, Decimal(v), "", 0, 0, label) for label, values in zip(labels, groups)
                   for v in values]
    full = None if full_score is None else Decimal(str(full_score))
    mode = _read_points(checkpoints, labels, full)[0]
    starts, reached = [], Decimal(0)
    for values in groups:
        starts.append(Decimal(0) if mode == RESTART else reached)
        reached = max([reached, *map(Decimal, values)])
    return mode, starts


def _num(value):
    return format(value.normalize(), "f") if isinstance(value, Decimal) else str(value)


def read_rubric(reference, keys=(), full_score=None, *, new_labels=False):
    """Read a reference solution's rubric; `keys` are the labels the scores use (the authority on
    which sub-questions exist), `full_score` the question's full score (decides how markers count).

    With `new_labels` (an edit of the rubric) the text may add sub-questions to the keys: a label of
    the keys' scheme that no key has becomes a new sub-question.
    """
    reference = reference or ""
    full = None if full_score is None else Decimal(str(full_score))
    key_labels, unreadable_keys = _labels_from_keys(keys)
    candidates = _candidates(reference)
    scheme = _choose_scheme(candidates, key_labels)
    problems = [Problem("unreadable_key", (label,)) for label in unreadable_keys]
    if key_labels:
        allowed = set(key_labels)
        label_of = dict(key_labels)
        if new_labels:
            for candidate in candidates:
                if candidate.scheme == scheme and candidate.line_start and candidate.ordinal not in allowed:
                    allowed.add(candidate.ordinal)
                    label_of[candidate.ordinal] = f"({candidate.ordinal})"
    else:
        allowed = {c.ordinal for c in candidates if c.scheme == scheme}
        label_of = {n: f"({n})" for n in allowed}

    markers, spans, segment_start = _markers(reference), [], 0
    for match, is_total in markers:
        if is_total:
            segment_start = match.end()
            continue
        spans.append((segment_start, match))
        segment_start = match.end()
    steps = _step_ordinals([(s, m.start()) for s, m in spans], candidates, scheme, allowed)
    first = min(allowed) if allowed else None
    checkpoints = []
    for order, ((_segment_start, match), (ordinal, text_start)) in enumerate(zip(spans, steps)):
        ordinal = ordinal if ordinal is not None else first
        checkpoints.append(ParsedCheckpoint(
            order=order, cumulative_points=Decimal(match.group(1)), text=reference[text_start : match.start()].strip(),
            start=text_start, end=match.end(), sub_label=label_of.get(ordinal, "") if ordinal else "",
        ))
    labels = [label_of[n] for n in sorted(label_of)]
    mode, maxima, point_problems = _read_points(checkpoints, labels, full)
    problems += point_problems
    if checkpoints and mode:
        problems += [Problem("no_step", (label,)) for label in labels if label not in maxima]
    if not checkpoints and reference.strip():
        problems.append(Problem("no_markers"))
    return RubricReading(checkpoints, labels, maxima, mode, scheme, problems)


def data_problems(reading, observed_maxima):
    """Problems of the data against a reading: an answer above its sub-question's full points.

    `observed_maxima` maps a label to the most points any answer has on it.
    """
    return [
        Problem("answer_above_full_points", (label, _num(Decimal(str(points))), _num(reading.maxima[label])))
        for label, points in observed_maxima.items()
        if label in reading.maxima and Decimal(str(points)) > reading.maxima[label]
    ]


def describe(problem):
    """A problem in words, in the active language."""
    values = problem.values
    if problem.code == "points_do_not_add_up":
        return gettext(
            "The points markers fit neither reading: counted over the question they reach %(cumulative)s, "
            "counted per sub-question they add up to %(restart)s, and the full score is %(full)s."
        ) % {"cumulative": values[0], "restart": values[1], "full": values[2]}
    if problem.code == "no_step":
        return gettext("No step of the reference solution is marked for sub-question %(label)s: "
                       "its full points cannot be read.") % {"label": values[0]}
    if problem.code == "unreadable_key":
        return gettext("The score key %(label)s is not a numbered sub-question label.") % {"label": values[0]}
    if problem.code == "answer_above_full_points":
        return gettext("An answer has %(points)s points on sub-question %(label)s, more than the %(full)s "
                       "its markers give.") % {"label": values[0], "points": values[1], "full": values[2]}
    if problem.code == "no_markers":
        return gettext("The reference solution has no points markers (such as \"------3 points\").")
    return problem.code


def parse_checkpoints(reference, keys=()):
    """The checkpoints of a reference solution in text order."""
    return read_rubric(reference, keys).checkpoints
