"""Labelling writes: labels with conflict checks, drafts, assignments and locks, gold scores.

Concurrency rules (the same code on SQLite and PostgreSQL):

- A label save claims its version with one atomic ``UPDATE ... SET version = base + 1 WHERE
  version = base`` as the first statement of its transaction. Of two saves from the same base
  exactly one updates a row; the other finds none and is refused. The winner then holds the row
  (PostgreSQL row lock; SQLite's single writer lock) while it writes the rest.
- Handing out the next open slot is a conditional ``UPDATE ... WHERE lock is free``; on
  PostgreSQL the candidates are first picked with ``SELECT ... FOR UPDATE SKIP LOCKED``.
- Gold scores are recomputed with the response row locked, so two submissions at once cannot
  leave a gold computed from one label only. Adjudication compares and swaps the gold it saw.

SQLite answers "database is locked" instead of waiting in a few cases (shared-cache test
databases, a reader upgrading to a writer); such operations are retried whole, which is safe
because each one either commits entirely or not at all.
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal, InvalidOperation

from django.conf import settings
from django.db import IntegrityError, OperationalError, connection, transaction
from django.db.models import Count, Exists, F, OuterRef, Q
from django.utils import timezone
from django.utils.translation import gettext
from simple_history.utils import bulk_create_with_history

from accounts.roles import is_reviewer

from ..models import (
    Adjudication,
    Assignment,
    Exam,
    Label,
    LabelDraft,
    LabelSaveAttempt,
    LabelSummary,
    Response,
    StepLabel,
)
from ..quote_anchors import quote_selector, reanchor
from . import selectors
from .rules import TOTAL, LabelInvalid, _json_number, clean_label, rubric_groups

LOCK_TTL = timedelta(minutes=settings.REALMATH_LABEL_LOCK_MINUTES)
ADJUDICATION_THRESHOLD = Decimal(str(settings.REALMATH_ADJUDICATION_THRESHOLD))
MAX_DRAFT_CHARS = 200_000
# Active time arrives from the browser as increments with each draft and save. One increment
# counts for at most the wall time since this person's previous draft or save of the label (plus
# a little slack for clocks and the request), and never more than the cap.
ACTIVE_IDLE_SECONDS = 60  # the browser stops counting this long after the last key, click or scroll
ACTIVE_INCREMENT_CAP_SECONDS = 1800
ACTIVE_SLACK_SECONDS = 5


class LabelConflict(Exception):
    """A save based on a version that is no longer the current one. `current` is the label now."""

    def __init__(self, current, base_version):
        self.current = current
        self.base_version = base_version
        who = current.updated_by.username if current and current.updated_by else "someone"
        super().__init__(
            f"This label was saved by {who} (version {current.version if current else '?'}) after you "
            f"loaded version {base_version}. Nothing was overwritten: compare both and save again."
        )


class GoldConflict(Exception):
    """The gold score changed between the reviewer loading it and deciding."""

    def __init__(self, response):
        self.response = response
        super().__init__(
            f"The gold score of response {response.pk} changed meanwhile (now {response.gold_score} "
            f"{response.get_gold_status_display().lower()}). Reload and decide again."
        )


class NotAllowed(Exception):
    pass


def _retrying(operation, timeout=15.0):
    """Run an all-or-nothing database operation, again if SQLite reports a lock instead of waiting."""
    deadline = time.monotonic() + timeout
    delay = 0.01
    while True:
        try:
            return operation()
        except OperationalError as exc:
            if "locked" not in str(exc).lower() or connection.in_atomic_block or time.monotonic() + delay > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.5)


def _locked_response(response_id):
    """The response row, locked until the transaction ends (a no-op on SQLite: it has one writer)."""
    return Response.objects.select_for_update(of=("self",)).select_related("question").get(pk=response_id)


# --- labels -------------------------------------------------------------------------------


@dataclass
class SaveResult:
    label: Label
    created: bool


def save_label(*, response, user, data, base_version, submit=False, label=None, active_seconds_delta=0):
    """Save (and with `submit`, submit) a label of `response`.

    `label` is the label being edited; without it, the user's own label (created on the
    first save, from base version 0). Raises NotAllowed, LabelInvalid (field errors) or
    LabelConflict (stale base version). Every attempt, accepted or refused, is logged.
    `active_seconds_delta` is the active time measured in the browser since the last draft or
    save; with the draft's gathered time it is added (bounded) to the annotator's own label.
    """
    return _retrying(
        lambda: _save_label(response, user, data, base_version, submit, label, active_seconds_delta)
    )


def bounded_increment(seconds, since, now=None):
    """An active-time increment as counted: at most the wall time since `since` (+ slack), at most the cap."""
    try:
        seconds = max(0, int(seconds or 0))
    except (TypeError, ValueError):
        return 0
    limit = ACTIVE_INCREMENT_CAP_SECONDS
    if since is not None:
        elapsed = ((now or timezone.now()) - since).total_seconds()
        limit = min(limit, max(0, int(elapsed)) + ACTIVE_SLACK_SECONDS)
    return min(seconds, limit)


def _active_time(response, user, label, delta):
    """Seconds to add to `label` on a save by `user`: the draft's gathered time and the
    bounded increment; nothing for someone else's label (it records its annotator's time)."""
    if label is not None and label.annotator_id not in (None, user.pk):
        return 0
    draft = LabelDraft.objects.filter(response=response, user=user).only("active_seconds", "updated").first()
    since = draft.updated if draft else (label.updated if label is not None else None)
    return (draft.active_seconds if draft else 0) + bounded_increment(delta, since)


def _save_label(response, user, data, base_version, submit, label, active_seconds_delta=0):
    if label is not None:
        label = Label.objects.select_related("response__question__exam").get(pk=label.pk)
    else:
        label = Label.objects.filter(response=response, annotator=user).first()
    if label is None and not selectors.can_label(user, response):
        raise NotAllowed(gettext("This response is not assigned to you."))
    if label is not None and not selectors.can_edit_label(user, label):
        _log_attempt(response, label, user, submit, base_version, "forbidden", "Not allowed to edit.", data)
        raise NotAllowed(
            "Submitted labels on a blind exam can only be changed by a reviewer."
            if label.annotator_id == user.pk
            else "You may not edit this label."
        )
    try:
        clean = clean_label(response.question, response.transcript, data, submitting=submit)
    except LabelInvalid as exc:
        _log_attempt(response, label, user, submit, base_version, "invalid", str(exc), data)
        raise
    active = _active_time(response, user, label, active_seconds_delta)
    if label is None:
        return _create_label(response, user, clean, base_version, submit, data, active)
    return _update_label(response, label.pk, user, clean, base_version, submit, data, active)


def _create_label(response, user, clean, base_version, submit, data, active=0):
    if base_version != 0:
        current = Label.objects.filter(response=response, annotator=user).first()
        _log_attempt(response, current, user, submit, base_version, "conflict", "No such version.", data)
        raise LabelConflict(current, base_version)
    try:
        with transaction.atomic():
            label = Label(response=response, annotator=user, version=1, active_seconds=active)
            _apply(label, response, user, clean, submit)
            label.save()
            _replace_step_labels(label, clean.step_labels, user)
            _after_save(response, label, user, submit, base_version, data)
            return SaveResult(label, created=True)
    except IntegrityError:
        # The same person created it a moment ago (another tab): a conflict like any other.
        current = Label.objects.select_related("updated_by").get(response=response, annotator=user)
        _log_attempt(response, current, user, submit, base_version, "conflict", "Created meanwhile.", data)
        raise LabelConflict(current, base_version) from None


def _update_label(response, label_id, user, clean, base_version, submit, data, active=0):
    with transaction.atomic():
        claimed = Label.objects.filter(pk=label_id, version=base_version).update(
            version=base_version + 1, active_seconds=F("active_seconds") + active
        )
        if claimed:
            label = Label.objects.get(pk=label_id)
            _apply(label, response, user, clean, submit)
            label.save()
            _replace_step_labels(label, clean.step_labels, user)
            _after_save(response, label, user, submit, base_version, data)
            return SaveResult(label, created=False)
    current = Label.objects.select_related("updated_by").get(pk=label_id)
    _log_attempt(response, current, user, submit, base_version, "conflict", f"Found version {current.version}.", data)
    raise LabelConflict(current, base_version)


def _apply(label, response, user, clean, submit):
    label.sub_scores = clean.sub_scores_json()
    label.total = clean.total
    label.checkpoint_marks = clean.checkpoint_marks
    label.override_reason = clean.override_reason
    label.comment = clean.comment
    label.transcript_hash = response.transcript_hash
    label.updated_by = user
    if submit and not label.submitted:
        label.submitted = True
        label.submitted_at = timezone.now()
        # The anchoring experiment: what this assignment was shown (or would have been), as of submission.
        label.anchoring = selectors.anchor_for(label.annotator, response) or {}
    label._history_user = user


def _step_key(step):
    return (
        step["start"], step["end"], step["quote"], step["needs_review"], step["verdict"], step["comment"],
        step["sub_question_id"], step["checkpoint_id"],
    )


def _replace_step_labels(label, steps, user):
    existing = list(label.step_labels.all()) if label.pk else []
    old = sorted(
        (s.start, s.end, s.quote, s.needs_review, s.verdict, s.comment, s.sub_question_id, s.checkpoint_id)
        for s in existing
    )
    if old == sorted(_step_key(s) for s in steps):
        return
    for step in existing:
        step._history_user = user
        step.delete()
    bulk_create_with_history(
        [StepLabel(label=label, **step) for step in steps], StepLabel, default_user=user
    )


@dataclass
class ReanchorResult:
    moved: int = 0
    kept: int = 0
    needs_review: int = 0


def reanchor_step_labels(response, old_text, *, user=None) -> ReanchorResult:
    """Find every step label of `response` again in its new transcript (after a correction).

    Each label keeps its place when its quote is still there, moves to the one place its quote
    and context are found again, or, when the quote is gone or ambiguous, keeps its old offsets
    and is marked `needs_review` so the label page shows it beside the new text. Nothing is
    deleted. Call it inside the transaction that changes the transcript.
    """
    result = ReanchorResult()
    text = response.transcript
    steps = StepLabel.objects.select_for_update().filter(label__response=response).order_by("pk")
    for step in steps:
        old_start, old_end = step.start, step.end
        if step.start is None or step.end is None:
            continue
        if not step.quote:
            step.quote = old_text[step.start:step.end]
        if not step.prefix and not step.suffix:
            context = quote_selector(old_text, step.start, step.end)
            step.prefix, step.suffix = context["prefix"], context["suffix"]
        anchor = reanchor(text, step.quote, step.prefix, step.suffix, step.start) if step.quote else None
        if anchor is None:
            step.needs_review = True
            result.needs_review += 1
        else:
            step.start, step.end, step.needs_review = anchor.start, anchor.end, False
            context = quote_selector(text, anchor.start, anchor.end)
            step.prefix, step.suffix = context["prefix"], context["suffix"]
            if (anchor.start, anchor.end) == (old_start, old_end):
                result.kept += 1
            else:
                result.moved += 1
        step._history_user = user
        step._change_reason = "Re-anchored after a transcript correction"
        step.save()
    _reanchor_drafts(response, old_text)
    return result


def _reanchor_drafts(response, old_text):
    """Move the step spans of unsaved drafts the same way, so a draft restored later is on its text."""
    text = response.transcript
    for draft in LabelDraft.objects.select_for_update().filter(response=response):
        steps = draft.payload.get("step_labels") if isinstance(draft.payload, dict) else None
        if not isinstance(steps, list):
            continue
        for step in steps:
            start, end = (step.get("start"), step.get("end")) if isinstance(step, dict) else (None, None)
            if not (isinstance(start, int) and isinstance(end, int)):
                continue
            quote = step.get("quote") or old_text[start:end]
            context = quote_selector(old_text, start, end)
            prefix = step.get("prefix") if isinstance(step.get("prefix"), str) else context["prefix"]
            suffix = step.get("suffix") if isinstance(step.get("suffix"), str) else context["suffix"]
            anchor = reanchor(text, quote, prefix, suffix, start) if isinstance(quote, str) and quote else None
            step.update(quote=quote, prefix=prefix, suffix=suffix, needs_review=anchor is None)
            if anchor is not None:
                step.update(start=anchor.start, end=anchor.end)
        draft.save(update_fields=["payload"])


def _after_save(response, label, user, submit, base_version, data):
    LabelSaveAttempt.objects.create(
        response=response, label=label, user=user, submit=submit, base_version=base_version,
        found_version=base_version, new_version=label.version, outcome=LabelSaveAttempt.Outcome.SAVED,
        payload=_payload(data),
    )
    LabelDraft.objects.filter(response=response, user=user).delete()
    if label.annotator_id == user.pk:
        _take_slot(response, user, complete=label.submitted)
    if label.submitted:
        refresh_gold(response.pk, user=user)


def _log_attempt(response, label, user, submit, base_version, outcome, detail, data):
    return LabelSaveAttempt.objects.create(
        response=response, label=label, user=user, submit=submit, base_version=base_version,
        found_version=label.version if label else None, outcome=outcome, detail=detail[:2000],
        payload=_payload(data),
    )


def _payload(data):
    return data if isinstance(data, dict) and len(str(data)) < MAX_DRAFT_CHARS else {"note": "too large to log"}


# --- drafts -------------------------------------------------------------------------------


def save_draft(*, response, user, payload, base_version, label=None, active_seconds_delta=0):
    """Keep unsaved work server-side (autosave). Needs the right to label or edit. The active
    time measured since the last draft or save is gathered on the draft (bounded)."""
    return _retrying(lambda: _save_draft(response, user, payload, base_version, label, active_seconds_delta))


def _save_draft(response, user, payload, base_version, label, active_seconds_delta=0):
    if label is not None and not selectors.can_edit_label(user, label):
        raise NotAllowed(gettext("You may not edit this label."))
    if label is None and not selectors.can_label(user, response):
        raise NotAllowed(gettext("This response is not assigned to you."))
    if not isinstance(payload, dict) or len(str(payload)) > MAX_DRAFT_CHARS:
        raise LabelInvalid({"draft": ["Expected an object of reasonable size."]})

    with transaction.atomic():
        previous = LabelDraft.objects.filter(response=response, user=user).only("active_seconds", "updated").first()
        if previous is not None:
            since = previous.updated
        else:
            own = label if label is not None else Label.objects.filter(response=response, annotator=user).first()
            since = own.updated if own is not None else None
        gathered = (previous.active_seconds if previous else 0) + bounded_increment(active_seconds_delta, since)
        draft, _ = LabelDraft.objects.update_or_create(
            response=response, user=user,
            defaults={"payload": payload, "base_version": base_version, "label": label,
                      "active_seconds": gathered},
        )
        if label is None or label.annotator_id == user.pk:
            _take_slot(response, user, complete=False)
        return draft


def discard_draft(*, response: Response, user) -> None:
    LabelDraft.objects.filter(response=response, user=user).delete()


# --- gold ---------------------------------------------------------------------------------


def gold_from_totals(imported, expert, threshold: Decimal = ADJUDICATION_THRESHOLD):
    """(gold score, gold status) from submitted totals; adjudication is decided elsewhere.

    One expert label: single. Several labels (an imported gold counts as one) closer than the
    threshold: agreed, on the imported gold if there is one, else the experts' median. Labels
    that disagree by the threshold or more keep the imported gold (or none) until adjudicated.
    """
    imported = [t for t in imported if t is not None]
    expert = [t for t in expert if t is not None]
    everyone = imported + expert
    if not expert:
        return (imported[0], Response.GoldStatus.IMPORTED) if imported else (None, Response.GoldStatus.NONE)
    if len(everyone) == 1:
        return expert[0], Response.GoldStatus.SINGLE
    if max(everyone) - min(everyone) < threshold:
        score = imported[0] if imported else Decimal(statistics.median(expert)).quantize(Decimal("0.01"))
        return score, Response.GoldStatus.AGREED
    return (imported[0], Response.GoldStatus.IMPORTED) if imported else (None, Response.GoldStatus.NONE)


def refresh_gold(response_id: int, *, user=None):
    """Recompute a response's gold score and status from its submitted labels (history kept)."""
    with transaction.atomic():
        response = _locked_response(response_id)
        rows = list(response.labels.filter(submitted=True).values_list("is_imported", "total"))
        _summarise(response, [t for _, t in rows if t is not None])
        if response.gold_status == Response.GoldStatus.ADJUDICATED:
            return response
        score, status = gold_from_totals([t for imp, t in rows if imp], [t for imp, t in rows if not imp])
        new_state = response.status
        if any(not imp for imp, _ in rows) and response.status == Response.Status.READY:
            new_state = Response.Status.LABELLED
        if (response.gold_score, response.gold_status, response.status) != (score, status, new_state):
            response.gold_score, response.gold_status, response.status = score, status, new_state
            response._history_user = user
            response.save(update_fields=["gold_score", "gold_status", "status", "updated"])
        return response


def _summarise(response, totals):
    low, high = (min(totals), max(totals)) if totals else (None, None)
    LabelSummary.objects.update_or_create(
        response=response,
        defaults={
            "n_labels": len(totals), "low": low, "high": high, "spread": (high - low) if totals else 0,
            "adjudicated": response.gold_status == Response.GoldStatus.ADJUDICATED,
        },
    )


def adjudicate(*, response, reviewer, reason="", gold_score=None, chosen_label=None, expected=None, sub_scores=None):
    """Set the gold score of a response: pick one label, or enter a score with a reason.

    `sub_scores` ({sub-question label: points}) gives the reviewer's own points per sub-question;
    their sum is the gold score (a `gold_score` given too must equal it). Without them, a picked
    label's breakdown is kept when its total is taken. `expected` is the (gold score, gold status)
    the reviewer saw; when the gold changed meanwhile the decision is refused with GoldConflict.
    Raises LabelInvalid on bad input.
    """
    return _retrying(lambda: _adjudicate(response, reviewer, reason, gold_score, chosen_label, expected, sub_scores))


def _adjudicate(response, reviewer, reason, gold_score, chosen_label, expected, sub_scores=None):
    if not is_reviewer(reviewer):
        raise NotAllowed(gettext("Adjudication needs the reviewer role."))
    own_points = _adjudicated_sub_scores(response, sub_scores)
    if own_points and gold_score in (None, ""):
        gold_score = sum(own_points.values(), Decimal(0))
    score = _adjudicated_score(response, gold_score, chosen_label, reason)
    if own_points and sum(own_points.values(), Decimal(0)) != score:
        total = sum(own_points.values(), Decimal(0))
        raise LabelInvalid({"sub_scores": [
            gettext("The points per sub-question add up to %(sum)s, not to the gold score %(score)s.")
            % {"sum": f"{total.normalize():f}", "score": f"{score.normalize():f}"}
        ]})
    if own_points:
        breakdown = {label: _json_number(points) for label, points in own_points.items()}
    elif chosen_label is not None and score == chosen_label.total:
        breakdown = dict(chosen_label.sub_scores or {})
    else:
        breakdown = {}
    seen_score, seen_status = expected if expected is not None else (response.gold_score, response.gold_status)
    totals = {a.rater_name: str(a.total) for a in selectors.submitted_labels(response)}

    with transaction.atomic():
        same_gold = Q(gold_score__isnull=True) if seen_score is None else Q(gold_score=seen_score)
        claimed = Response.objects.filter(same_gold, pk=response.pk, gold_status=seen_status).update(
            gold_score=score, gold_status=Response.GoldStatus.ADJUDICATED
        )
        if claimed:
            current = Response.objects.get(pk=response.pk)
            current.status = Response.Status.ADJUDICATED
            current._history_user = reviewer
            current.save(update_fields=["status", "gold_score", "gold_status", "updated"])
            LabelSummary.objects.filter(response=current).update(adjudicated=True)
            return Adjudication.objects.create(
                response=current, reviewer=reviewer, gold_score=score, reason=reason.strip(),
                chosen_label=chosen_label, previous_gold_score=seen_score,
                previous_gold_status=seen_status, label_totals=totals, sub_scores=breakdown,
            )
    raise GoldConflict(Response.objects.get(pk=response.pk))


def _adjudicated_sub_scores(response, raw):
    """The reviewer's points per sub-question as Decimals (empty when none were given)."""
    if not raw:
        return {}
    if not isinstance(raw, dict):
        raise LabelInvalid({"sub_scores": [gettext("Expected {sub-question: points}.")]})
    groups = {g.label: g for g in rubric_groups(response.question) if g.label != TOTAL}
    errors, cleaned = [], {}
    for label, value in raw.items():
        if value in (None, ""):
            continue
        group = groups.get(label)
        try:
            points = Decimal(str(value))
        except InvalidOperation:
            points = None
        if group is None:
            errors.append(gettext("%(label)s is not a sub-question of this question.") % {"label": label})
        elif points is None or not points.is_finite() or points != points.quantize(Decimal("0.01")):
            errors.append(gettext("%(label)s: not a number with at most 2 decimals.") % {"label": label})
        elif points < 0 or (group.max_points is not None and points > group.max_points):
            errors.append(gettext("%(label)s: between 0 and %(max)s points.")
                          % {"label": label, "max": f"{group.max_points.normalize():f}"})
        else:
            cleaned[label] = points
    if cleaned and not errors and set(cleaned) != set(groups):
        missing = ", ".join(label for label in groups if label not in cleaned)
        errors.append(gettext("Give the points of every sub-question (missing: %(labels)s).") % {"labels": missing})
    if errors:
        raise LabelInvalid({"sub_scores": errors})
    return cleaned


def check_adjudicated_score(response, gold_score, chosen_label, reason):
    """The gold score an adjudication would set, or LabelInvalid with every reason it would not."""
    return _adjudicated_score(response, gold_score, chosen_label, reason)


def _adjudicated_score(response, gold_score, chosen_label, reason):
    errors = {}
    if chosen_label is not None and (chosen_label.response_id != response.pk or not chosen_label.submitted):
        errors["chosen_annotation"] = ["Pick a submitted label of this response."]
    try:
        score = Decimal(str(gold_score)) if gold_score not in (None, "") else None
    except InvalidOperation:
        score, errors["gold_score"] = None, ["Not a number."]
    if score is None and chosen_label is not None and not errors:
        score = chosen_label.total
    if score is None and not errors:
        errors["gold_score"] = ["Pick a label or enter a gold score."]
    elif score is not None and (not score.is_finite() or not 0 <= score <= response.question.full_score):
        errors["gold_score"] = [f"The gold score must lie between 0 and {response.question.full_score.normalize():f}."]
    elif score is not None and score != score.quantize(Decimal("0.01")):
        errors["gold_score"] = ["At most two decimals."]
    custom = chosen_label is None or (score is not None and score != chosen_label.total)
    if custom and not (reason or "").strip() and "gold_score" not in errors:
        errors["reason"] = ["Say why when entering a gold score of your own."]
    if errors:
        raise LabelInvalid(errors)
    return score


# --- assignments and the queue --------------------------------------------------------------


@dataclass
class AssignResult:
    created: int = 0
    responses: int = 0
    already_covered: int = 0
    short_of_annotators: int = 0
    per_annotator: dict = field(default_factory=dict)

    def summary(self):
        """In words, as the Assign page, a batch's "Assign these" and `assign_labels` report it."""
        text = f"Created {self.created} assignment(s) over {self.responses} response(s)"
        if self.per_annotator:
            text += " (" + ", ".join(f"{k}: {v}" for k, v in sorted(self.per_annotator.items())) + ")"
        return text + f"; {self.already_covered} already had enough."


def assign_responses(*, responses, annotators, per_response: int, strategy: str, assigned_by=None) -> AssignResult:
    """Ask for `per_response` labels of every response in a queryset.

    Labels already asked for (assignments, open slots) or given (labels by anyone who was not
    assigned) count. Round-robin walks the annotators in turn; least-loaded gives each slot to
    the annotator with the fewest unfinished assignments; open leaves slots for "next" to hand
    out. A response never gets the same annotator twice.
    """
    if per_response < 1:
        raise LabelInvalid({"per_response": ["Ask for at least one label per response."]})
    annotators = sorted(annotators, key=lambda u: u.username)
    if strategy != Assignment.Strategy.OPEN and not annotators:
        raise LabelInvalid({"annotators": ["Choose at least one annotator."]})
    have = {}
    for response_id, annotator_id in Assignment.objects.filter(response__in=responses).values_list(
        "response_id", "annotator_id"
    ):
        have.setdefault(response_id, []).append(annotator_id)
    for response_id, annotator_id in Label.objects.filter(
        response__in=responses, annotator__isnull=False
    ).values_list("response_id", "annotator_id"):
        if annotator_id not in have.get(response_id, []):
            have.setdefault(response_id, []).append(annotator_id)
    loads = dict(
        Assignment.objects.filter(annotator__in=annotators, completed_at__isnull=True)
        .values_list("annotator_id")
        .annotate(n=Count("id"))
    )
    result, new, turn = AssignResult(), [], 0
    for response_id in responses.order_by("pk").values_list("pk", flat=True).iterator(chunk_size=5000):
        result.responses += 1
        taken = have.get(response_id, [])
        missing = per_response - len(taken)
        if missing <= 0:
            result.already_covered += 1
            continue
        for _ in range(missing):
            if strategy == Assignment.Strategy.OPEN:
                new.append(Assignment(response_id=response_id, strategy=strategy, assigned_by=assigned_by))
                continue
            free = [u for u in annotators if u.pk not in taken]
            if not free:
                result.short_of_annotators += 1
                break
            if strategy == Assignment.Strategy.LEAST_LOADED:
                chosen = min(free, key=lambda u: (loads.get(u.pk, 0), annotators.index(u)))
            else:
                chosen = next(u for u in annotators[turn:] + annotators[:turn] if u.pk not in taken)
                turn = (annotators.index(chosen) + 1) % len(annotators)
            taken = [*taken, chosen.pk]
            loads[chosen.pk] = loads.get(chosen.pk, 0) + 1
            result.per_annotator[chosen.username] = result.per_annotator.get(chosen.username, 0) + 1
            new.append(Assignment(response_id=response_id, annotator=chosen, strategy=strategy, assigned_by=assigned_by))
    Assignment.objects.bulk_create(new, batch_size=1000)
    result.created = len(new)
    return result


def withdraw_assignments(*, responses, annotators=None) -> int:
    """Remove unfinished, unstarted assignments (no label, no live lock) of some responses."""
    now = timezone.now()
    started = Label.objects.filter(response=OuterRef("response"), annotator=OuterRef("annotator"))
    queryset = (
        Assignment.objects.filter(response__in=responses, completed_at__isnull=True)
        .exclude(Q(lock_holder__isnull=False) & Q(lock_expires__gt=now))
        .exclude(Exists(started))
    )
    if annotators is not None:
        queryset = queryset.filter(annotator__in=annotators)
    deleted, _ = queryset.delete()
    return deleted


def _free_lock(now):
    return Q(lock_holder__isnull=True) | Q(lock_expires__lte=now)


def claim_next(user, *, now: datetime | None = None) -> Assignment | None:
    """Hand out the user's next unlabelled response, locked for LOCK_TTL. None when nothing is left.

    First what the user already holds, then their own assignments, then open slots of responses
    they have not labelled. Two people pressing "next" at once never get the same slot.
    """
    return _retrying(lambda: _claim_next(user, now or timezone.now()))


def _claim_next(user, now):
    expires = now + LOCK_TTL
    held = Assignment.objects.filter(lock_holder=user, lock_expires__gt=now, completed_at__isnull=True)
    held_id = held.order_by("response_id", "pk").values_list("pk", flat=True).first()
    if held_id and Assignment.objects.filter(pk=held_id, lock_holder=user).update(lock_expires=expires):
        return Assignment.objects.select_related("response").get(pk=held_id)
    own = Assignment.objects.filter(annotator=user, completed_at__isnull=True).filter(_free_lock(now) | Q(lock_holder=user))
    mine = Label.objects.filter(response=OuterRef("response"), annotator=user)
    also_mine = Assignment.objects.filter(response=OuterRef("response"), annotator=user)
    open_slots = (
        Assignment.objects.filter(annotator__isnull=True, completed_at__isnull=True)
        .filter(_free_lock(now))
        .exclude(Exists(mine))
        .exclude(Exists(also_mine))
        .exclude(Exists(Assignment.objects.filter(response=OuterRef("response"), lock_holder=user, lock_expires__gt=now)))
    )
    for candidates in (own, open_slots):
        claimed = _claim_first(candidates, user, now, expires)
        if claimed:
            return Assignment.objects.select_related("response").get(pk=claimed)
    return None


def _claim_first(candidates, user, now, expires, attempts=20):
    """Lock the first free candidate with a conditional UPDATE; return its id or None.

    On PostgreSQL one candidate row at a time is picked with FOR UPDATE SKIP LOCKED, so a
    concurrent claimer moves on to the next free row instead of waiting or failing.
    """
    skip_locked = connection.features.has_select_for_update_skip_locked
    ordered = candidates.order_by("response_id", "pk")
    batch = 1 if skip_locked else attempts
    for _ in range(attempts if skip_locked else 1):
        with transaction.atomic() if skip_locked else _no_transaction():
            rows = ordered.select_for_update(skip_locked=True, of=("self",)) if skip_locked else ordered
            ids = list(rows.values_list("pk", flat=True)[:batch])
            if not ids:
                return None
            for pk in ids:
                still_free = Assignment.objects.filter(pk=pk, completed_at__isnull=True).filter(
                    _free_lock(now) | Q(lock_holder=user)
                )
                if still_free.update(lock_holder=user, lock_expires=expires):
                    return pk
    return None


class _no_transaction:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _take_slot(response, user, *, complete):
    """Once the user works on a response, make its slot theirs (and finish it on submission).

    An open slot they hold becomes their assignment, so an expired lock cannot hand their started
    work to someone else.
    """
    now = timezone.now()
    own = Assignment.objects.filter(response=response, annotator=user)
    if not own.exists():
        held = Assignment.objects.filter(response=response, annotator__isnull=True, lock_holder=user).first()
        if held is None:
            held = Assignment.objects.filter(response=response, annotator__isnull=True, completed_at__isnull=True).filter(
                _free_lock(now)
            ).first()
        if held is not None:
            Assignment.objects.filter(pk=held.pk, annotator__isnull=True).update(annotator=user)
    if complete:
        own.filter(completed_at__isnull=True).update(completed_at=now, lock_holder=None, lock_expires=None)
    else:
        own.filter(completed_at__isnull=True).update(lock_holder=user, lock_expires=now + LOCK_TTL)




# --- the anchoring experiment (annotation.labelling.experiment) -----------------------------

MAX_ANCHORING_SEED = 2**31 - 1


class AnchoringInvalid(ValueError):
    """The anchoring experiment cannot start as asked; the message says why, in words."""


def start_anchoring(*, exam: Exam, setting: str, seed: int) -> Exam:
    """Run the anchoring experiment on `exam`: the newest ok score of the judge setting named
    `setting` is shown to the seeded half of its assignments from now on (labels submitted
    before keep what they recorded). The setting must have scored answers of this exam."""
    names = dict(selectors.anchoring_setting_choices(exam))
    if setting not in names:
        raise AnchoringInvalid(gettext(
            "No judge setting named “%(setting)s” has scored an answer of this exam: run a judge on it first."
        ) % {"setting": setting})
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_ANCHORING_SEED:
        raise AnchoringInvalid(gettext("The seed must be a whole number from 0 to %(max)s.") % {"max": MAX_ANCHORING_SEED})
    exam.anchoring, exam.anchoring_setting, exam.anchoring_seed = True, setting, seed
    exam.save(update_fields=["anchoring", "anchoring_setting", "anchoring_seed"])
    return exam


def stop_anchoring(*, exam: Exam) -> Exam:
    """Stop showing pre-grades on `exam`; the setting and seed stay, so its results stay readable."""
    exam.anchoring = False
    exam.save(update_fields=["anchoring"])
    return exam
