"""The rules of a label: rubric groups, the score the marked checkpoints propose, and validation.

Pure functions over a question's rubric (no writes). The labelling page runs the same proposal
rule in JavaScript for instant feedback (its one copy: static/js/labelling/rubric.js, checked
against this one by tests/labelling/test_rubric_rule_browser.py); the server has the last word.

A question's checkpoints carry *cumulative* points (reaching ``------7 points`` with everything
before it correct earns 7 in total). Points are entered per sub-question, so each checkpoint is
also given its points *relative to its sub-question*: the cumulative points minus the cumulative
points reached before that sub-question began. When the markers restart the count per sub-question
(annotation/rubric.py decides, from the markers and the full score), each marker already is a
sub-question total. A step's *worth* is what it adds to the steps before it.
"""
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from ..models import Label, StepLabel
from ..quote_anchors import quote_selector, reanchor
from ..rubric import RESTART, reached_before_each

TOTAL = ""  # label of the single pseudo sub-question of a question without sub-questions
MAX_COMMENT = 5000
MAX_STEP_LABELS = 500
MARKS = set(Label.Mark.values)
VERDICTS = set(StepLabel.Verdict.values)


@dataclass
class RubricCheckpointInfo:
    id: int
    order: int
    cumulative: Decimal
    points: Decimal  # relative to the sub-question: what reaching it earns in its sub-question
    text: str
    worth: Decimal = Decimal(0)  # what this step adds to the steps before it
    reached: Decimal = Decimal(0)  # the marker's own value: points reached at this step ...
    out_of: Decimal | None = None  # ... of this many (the full score, or the sub-question's when markers restart)


@dataclass
class RubricGroup:
    label: str  # sub-question label, or TOTAL
    sub_question_id: int | None
    max_points: Decimal | None
    checkpoints: list = field(default_factory=list)


@dataclass
class Proposal:
    """Points the marks support: [low, high], `high` excluded when it comes from a 'partly' mark."""

    low: Decimal
    high: Decimal
    high_open: bool = False

    def admits(self, points):
        if points < self.low:
            return False
        if self.high_open:
            return points < self.high or points == self.low
        return points <= self.high


def rubric_groups(question):
    """The sub-questions of a question with their checkpoints, in text order.

    Expects `sub_questions` and `checkpoints` prefetched (or fetches them). A checkpoint without a
    sub-question joins the group before it (or the first group).
    """
    subs = sorted(question.sub_questions.all(), key=lambda s: (s.order, s.pk))
    checkpoints = sorted(question.checkpoints.all(), key=lambda c: (c.start, c.order))
    if subs:
        groups = [RubricGroup(s.label, s.pk, s.max_points) for s in subs]
    else:
        groups = [RubricGroup(TOTAL, None, question.full_score)]
    by_sub = {g.sub_question_id: g for g in groups}
    placed, current = [], groups[0]
    for checkpoint in checkpoints:
        current = by_sub.get(checkpoint.sub_question_id) or current
        placed.append((current, checkpoint))
    runs = []  # consecutive checkpoints of one group
    for group, checkpoint in placed:
        if not runs or runs[-1][0] is not group:
            runs.append((group, []))
        runs[-1][1].append(checkpoint)
    mode, starts = reached_before_each([[c.cumulative_points for c in run] for _, run in runs], question.full_score)
    for (group, run), reached_before in zip(runs, starts):
        previous = max([reached_before, *(c.cumulative for c in group.checkpoints)])
        for checkpoint in run:
            cumulative = checkpoint.cumulative_points
            group.checkpoints.append(
                RubricCheckpointInfo(
                    id=checkpoint.pk,
                    order=checkpoint.order,
                    cumulative=cumulative,
                    points=max(cumulative - reached_before, Decimal(0)),
                    text=checkpoint.text,
                    worth=max(cumulative - previous, Decimal(0)),
                    reached=cumulative,
                    out_of=group.max_points if mode == RESTART else question.full_score,
                )
            )
            previous = max(previous, cumulative)
    return groups


def propose(group, marks):
    """What the checkpoint marks of one group support, or None when none of them is marked.

    The reached prefix earns its cumulative points (`low`). A checkpoint marked reached after a
    gap, or marked partly, widens the range up to its points (excluded for 'partly').
    """
    states = [marks.get(str(c.id)) for c in group.checkpoints]
    if not any(states):
        return None
    low = Decimal(0)
    for checkpoint, state in zip(group.checkpoints, states):
        if state != Label.Mark.REACHED:
            break
        low = checkpoint.points
    high, high_open = low, False
    for checkpoint, state in zip(group.checkpoints, states):
        if state == Label.Mark.REACHED and checkpoint.points >= high:
            high, high_open = checkpoint.points, False
        elif state == Label.Mark.PARTLY and checkpoint.points > high:
            high, high_open = checkpoint.points, True
    return Proposal(low=low, high=max(high, low), high_open=high_open and high > low)


class LabelInvalid(ValueError):
    """A label that breaks the rules; `errors` maps a field to its messages."""

    def __init__(self, errors):
        self.errors = errors
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in errors.items()))


@dataclass
class CleanLabel:
    sub_scores: dict  # label -> Decimal or None (blank)
    total: Decimal | None
    checkpoint_marks: dict  # "id" -> mark
    override_reason: str
    comment: str
    step_labels: list  # dicts ready for StepLabel(**...)
    overrides: list  # labels whose points differ from the proposal

    def sub_scores_json(self):
        return {label: _json_number(v) for label, v in self.sub_scores.items() if v is not None}


def _json_number(value):
    return int(value) if value == value.to_integral_value() else float(value)


def _decimal(value):
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise InvalidOperation
    number = Decimal(str(value).strip())
    if not number.is_finite() or number != number.quantize(Decimal("0.01")):
        raise InvalidOperation
    return number


def clean_label(question, transcript, data, *, submitting):
    """Validate label input (a dict as sent by the page or the API) against a question's rubric.

    Saving accepts blanks; submitting needs every sub-question scored and a reason for points
    that differ from what the marked checkpoints propose. Raises LabelInvalid.
    """
    if not isinstance(data, dict):
        raise LabelInvalid({"label": ["Expected an object."]})
    errors = {}
    groups = rubric_groups(question)
    sub_scores = _clean_sub_scores(groups, data.get("sub_scores") or {}, errors, submitting)
    marks = _clean_marks(groups, data.get("checkpoint_marks") or {}, errors)
    total = _clean_total(question, groups, sub_scores, data.get("total"), errors, submitting)
    override_reason = _clean_text(data.get("override_reason"), "override_reason", errors)
    comment = _clean_text(data.get("comment"), "comment", errors)
    step_labels = _clean_step_labels(question, groups, transcript, data.get("step_labels") or [], errors)
    overrides = []
    for group in groups:
        points = total if group.label == TOTAL else sub_scores.get(group.label)
        proposal = propose(group, marks)
        if points is not None and proposal is not None and not proposal.admits(points):
            overrides.append(group.label or "total")
    if submitting and overrides and not override_reason.strip():
        errors.setdefault("override_reason", []).append(
            f"Points for {', '.join(overrides)} differ from what the marked checkpoints give: say why."
        )
    if errors:
        raise LabelInvalid(errors)
    return CleanLabel(sub_scores, total, marks, override_reason, comment, step_labels, overrides)


def _clean_sub_scores(groups, raw, errors, submitting):
    if not isinstance(raw, dict):
        errors["sub_scores"] = ["Expected {sub-question: points}."]
        return {}
    known = {g.label: g for g in groups if g.label != TOTAL}
    unknown = sorted(set(raw) - set(known))
    if unknown:
        errors.setdefault("sub_scores", []).append(f"Unknown sub-question(s): {', '.join(unknown)}.")
    cleaned = {}
    for label, group in known.items():
        try:
            points = _decimal(raw.get(label))
        except InvalidOperation:
            errors.setdefault("sub_scores", []).append(f"{label}: not a number with at most 2 decimals.")
            continue
        if points is not None and points < 0:
            errors.setdefault("sub_scores", []).append(f"{label}: points cannot be negative.")
        elif points is not None and group.max_points is not None and points > group.max_points:
            errors.setdefault("sub_scores", []).append(f"{label}: at most {group.max_points.normalize():f} points.")
        elif points is None and submitting:
            errors.setdefault("sub_scores", []).append(f"{label}: give the points before submitting.")
        cleaned[label] = points
    return cleaned


def _clean_marks(groups, raw, errors):
    if not isinstance(raw, dict):
        errors["checkpoint_marks"] = ["Expected {checkpoint id: mark}."]
        return {}
    ids = {str(c.id) for g in groups for c in g.checkpoints}
    cleaned = {}
    for key, mark in raw.items():
        if str(key) not in ids:
            errors.setdefault("checkpoint_marks", []).append(f"Checkpoint {key} is not in this question's rubric.")
        elif mark in (None, ""):
            continue
        elif mark not in MARKS:
            errors.setdefault("checkpoint_marks", []).append(f"{mark!r} is not one of {', '.join(sorted(MARKS))}.")
        else:
            cleaned[str(key)] = mark
    return cleaned


def _clean_total(question, groups, sub_scores, raw_total, errors, submitting):
    try:
        given = _decimal(raw_total)
    except InvalidOperation:
        errors.setdefault("total", []).append("Not a number with at most 2 decimals.")
        return None
    if groups[0].label == TOTAL:
        total = given
        if total is None and submitting:
            errors.setdefault("total", []).append("Give the points before submitting.")
    else:
        scored = [v for v in sub_scores.values() if v is not None]
        total = sum(scored, Decimal(0)) if scored else None
        if given is not None and total is not None and given != total:
            errors.setdefault("total", []).append(
                f"The total {given.normalize():f} is not the sum of the sub-question points ({total.normalize():f})."
            )
    if total is not None and not (0 <= total <= question.full_score):
        errors.setdefault("total", []).append(
            f"The total must lie between 0 and the full score {question.full_score.normalize():f}."
        )
    return total


def _clean_text(value, name, errors):
    if value in (None, ""):
        return ""
    if not isinstance(value, str):
        errors.setdefault(name, []).append("Expected text.")
        return ""
    if len(value) > MAX_COMMENT:
        errors.setdefault(name, []).append(f"At most {MAX_COMMENT} characters.")
    return value


def _clean_step_labels(question, groups, transcript, raw, errors):
    if not isinstance(raw, list):
        errors["step_labels"] = ["Expected a list."]
        return []
    if len(raw) > MAX_STEP_LABELS:
        errors["step_labels"] = [f"At most {MAX_STEP_LABELS} step labels."]
        return []
    sub_ids = {g.label: g.sub_question_id for g in groups if g.sub_question_id}
    checkpoint_ids = {c.id for g in groups for c in g.checkpoints}
    cleaned = []
    for index, item in enumerate(raw, start=1):
        problems = []
        if not isinstance(item, dict):
            errors.setdefault("step_labels", []).append(f"Step label {index}: expected an object.")
            continue
        start, end = _span_of(item, transcript, problems)
        if item.get("verdict") not in VERDICTS:
            problems.append(f"verdict must be one of {', '.join(sorted(VERDICTS))}")
        sub_label = item.get("sub_question") or ""
        if sub_label and sub_label not in sub_ids:
            problems.append(f"unknown sub-question {sub_label}")
        checkpoint = item.get("checkpoint")
        if checkpoint not in (None, "") and checkpoint not in checkpoint_ids:
            problems.append(f"checkpoint {checkpoint} is not in this question's rubric")
        comment = item.get("comment") or ""
        if not isinstance(comment, str) or len(comment) > MAX_COMMENT:
            problems.append(f"comment must be text of at most {MAX_COMMENT} characters")
        if problems:
            errors.setdefault("step_labels", []).append(f"Step label {index}: {'; '.join(problems)}.")
            continue
        cleaned.append(
            {
                "start": start,
                "end": end,
                **quote_selector(transcript, start, end),
                "needs_review": False,
                "verdict": item["verdict"],
                "comment": comment,
                "sub_question_id": sub_ids.get(sub_label),
                "checkpoint_id": checkpoint or None,
            }
        )
    return sorted(cleaned, key=lambda s: (s["start"], s["end"]))


def _span_of(item, transcript, problems):
    """The span of a step label in the current transcript: its offsets when its quote (if sent)
    is still there, else the one place its quote is found again with its prefix and suffix."""
    start, end = item.get("start"), item.get("end")
    if not (isinstance(start, int) and isinstance(end, int)) or isinstance(start, bool) or isinstance(end, bool):
        problems.append("start and end must be whole numbers")
        return None, None
    quote = item.get("quote")
    if quote in (None, ""):
        if not 0 <= start < end <= len(transcript):
            problems.append(f"span {start}–{end} lies outside the transcript (length {len(transcript)})")
        return start, end
    if not isinstance(quote, str):
        problems.append("quote must be text")
        return None, None
    if 0 <= start < end <= len(transcript) and transcript[start:end] == quote:
        return start, end
    prefix, suffix = item.get("prefix"), item.get("suffix")
    anchor = reanchor(
        transcript, quote, prefix if isinstance(prefix, str) else "", suffix if isinstance(suffix, str) else "", start
    )
    if anchor is None:
        where = "is no longer in" if quote not in transcript else "occurs several times in"
        problems.append(f"the quoted text {where} the corrected transcript: select the passage again")
        return None, None
    return anchor.start, anchor.end
