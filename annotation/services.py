"""Writes to the dataset core that are not imports: editing a question's rubric.

Invariants:
- A question's rubric is its reference solution (with the points markers), its full score, its
  checkpoints (parsed from the markers) and its sub-questions' maxima. Every change to any of them
  goes through `edit_rubric`, which raises `Question.rubric_version` by exactly one; nothing is
  done in save() or signals.
- The rubric before an edit and the one it makes are both kept as `RubricVersion` snapshots, so
  every version a judge result names stays readable (version 1 is snapshotted at the first edit).
- Checkpoint rows are updated in place by position (their ids, which labels' checkpoint marks and
  step labels point to, survive); extra ones are created and surplus ones removed. Sub-questions
  are never removed (labels refer to them by label); new labels found in the markers are added.
"""
from decimal import Decimal, InvalidOperation

from django.core.exceptions import ValidationError
from django.db import transaction

from .models import Question, RubricCheckpoint, RubricVersion, SubQuestion
from .rubric import read_rubric

MAX_POINTS = Decimal("99999.99")


class _Unchanged(Exception):
    """The edit gives the rubric the question already has: roll back, keep the version."""


def rubric_snapshot(question):
    """The question's rubric as plain JSON-ready values (as stored in RubricVersion)."""
    checkpoints = [
        {
            "order": c.order,
            "cumulative_points": str(c.cumulative_points),
            "sub_question": c.sub_question.label if c.sub_question_id else "",
            "text": c.text,
        }
        for c in question.checkpoints.select_related("sub_question").order_by("order", "id")
    ]
    subs = [
        {"label": s.label, "order": s.order, "max_points": None if s.max_points is None else str(s.max_points)}
        for s in question.sub_questions.order_by("order", "id")
    ]
    return {
        "reference_solution": question.reference_solution,
        "full_score": question.full_score,
        "checkpoints": checkpoints,
        "sub_questions": subs,
    }


def _keep_current_version(question):
    """Snapshot the version about to be replaced, unless an earlier edit already did."""
    if not RubricVersion.objects.filter(question=question, version=question.rubric_version).exists():
        RubricVersion.objects.create(question=question, version=question.rubric_version, **rubric_snapshot(question))


def _points(value, what):
    if value in (None, ""):
        return None
    try:
        number = Decimal(str(value).strip())
    except (InvalidOperation, ValueError) as exc:
        raise ValidationError({what: f"Give a number, not {value!r}."}) from exc
    if not number.is_finite() or number < 0 or number > MAX_POINTS:
        raise ValidationError({what: f"Give a number from 0 to {MAX_POINTS}."})
    return number.quantize(Decimal("0.01"))


def edit_rubric(question, *, reference_solution, full_score=None, sub_question_max_points=None, user=None, note=""):
    """Change a question's rubric and raise its rubric version by one; return the question.

    `sub_question_max_points` maps sub-question labels to maxima (None or "" clears one); labels
    not given keep theirs, or take the maximum the increasing markers imply when they had none.
    Nothing changes (and the version stays) when the values equal the current ones. Bad input
    raises ValidationError naming the field; nothing is written then.
    """
    reference_solution = (reference_solution or "").replace("\r\n", "\n")
    full = question.full_score if full_score in (None, "") else _points(full_score, "full_score")
    if full is None or full <= 0:
        raise ValidationError({"full_score": "The full score must be more than 0."})
    wanted = {
        str(label): _points(value, f"max_points {label}") for label, value in (sub_question_max_points or {}).items()
    }
    over = [c for c in read_rubric(reference_solution).checkpoints if c.cumulative_points > full]
    if over:
        raise ValidationError({
            "reference_solution": f"A marker gives {over[0].cumulative_points} points, more than the full score {full}."
        })
    try:
        with transaction.atomic():
            question = Question.objects.select_for_update().get(pk=question.pk)
            before = rubric_snapshot(question)
            existing = {s.label: s for s in question.sub_questions.all()}
            reading = read_rubric(reference_solution, list(existing), full, new_labels=True)
            parsed = reading.checkpoints
            unknown = sorted(set(wanted) - set(existing) - {c.sub_label for c in parsed})
            if unknown:
                raise ValidationError({"sub_questions": f"No sub-question labelled {', '.join(unknown)}."})
            _keep_current_version(question)
            question.reference_solution = reference_solution
            question.full_score = full
            subs = _sync_sub_questions(question, existing, reading, wanted)
            _sync_checkpoints(question, parsed, subs)
            if rubric_snapshot(question) == before:
                raise _Unchanged
            question.rubric_version += 1
            question.save(update_fields=["reference_solution", "full_score", "rubric_version"])
            RubricVersion.objects.create(
                question=question, version=question.rubric_version, note=(note or "")[:300], created_by=user,
                **rubric_snapshot(question),
            )
    except _Unchanged:  # everything written above was rolled back
        return Question.objects.get(pk=question.pk)
    return question


def _sync_sub_questions(question, existing, reading, wanted):
    implied = reading.maxima
    subs = dict(existing)
    for label in reading.labels:
        if label not in subs:
            subs[label] = SubQuestion.objects.create(
                question=question, label=label, order=len(subs), max_points=implied.get(label)
            )
    for label, sub in subs.items():
        if label in wanted:
            value = wanted[label]
        elif sub.max_points is None and label in implied:
            value = implied[label]
        else:
            continue
        if sub.max_points != value:
            sub.max_points = value
            sub.save(update_fields=["max_points"])
    return subs


def _sync_checkpoints(question, parsed, subs):
    rows = list(question.checkpoints.order_by("order", "id"))
    changed = []
    for row, c in zip(rows, parsed):
        values = {
            "order": c.order, "cumulative_points": c.cumulative_points, "text": c.text, "start": c.start,
            "end": c.end, "sub_question_id": subs[c.sub_label].pk if c.sub_label in subs else None,
        }
        if any(getattr(row, name) != value for name, value in values.items()):
            for name, value in values.items():
                setattr(row, name, value)
            changed.append(row)
    if changed:
        RubricCheckpoint.objects.bulk_update(
            changed, ["order", "cumulative_points", "text", "start", "end", "sub_question_id"]
        )
    RubricCheckpoint.objects.bulk_create(
        RubricCheckpoint(
            question=question, sub_question=subs.get(c.sub_label), order=c.order,
            cumulative_points=c.cumulative_points, text=c.text, start=c.start, end=c.end,
        )
        for c in parsed[len(rows):]
    )
    surplus = [row.pk for row in rows[len(parsed):]]
    if surplus:
        RubricCheckpoint.objects.filter(pk__in=surplus).delete()
