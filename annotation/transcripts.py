"""Responses made from verified transcripts (the OCR correction screen writes through here).

A response created from scans starts as `transcribing` until every page of it is verified,
then becomes `ready`. Each change of text bumps `Response.version`, refreshes
`transcript_hash` and leaves a row in the response's history (django-simple-history) naming
who changed it and why.
"""
from django.db import IntegrityError, transaction

from .labelling.services import reanchor_step_labels
from .models import Response, content_hash


class TranscriptConflict(Exception):
    """The text cannot be stored on this response (another response already holds it)."""


def record_transcript(*, question, student_id, text, response=None, user=None, complete=True, reason=""):
    """Create or update the human response of `student_id` to `question` with `text`.

    `response` is the response these pages were already turned into, if any. `complete` says
    whether every page behind the text is verified. Returns the response.
    """
    with transaction.atomic():
        if response is None:
            return _create(question, student_id, text, user, complete, reason)
        return _update(response.pk, text, user, complete, reason)


def _status_for(complete):
    return Response.Status.READY if complete else Response.Status.TRANSCRIBING


def _create(question, student_id, text, user, complete, reason):
    digest = content_hash(text)
    existing = Response.objects.filter(question=question, student_id=student_id, transcript_hash=digest).first()
    if existing is not None:
        # The same text was imported or verified before: use that response, don't duplicate it.
        return existing
    response = Response(
        question=question,
        source=Response.Source.HUMAN,
        student_id=student_id,
        transcript=text,
        transcript_hash=digest,
        status=_status_for(complete),
        extra={"origin": "scan"},
    )
    _stamp(response, user, reason or "Created from verified scan transcript")
    response.save()
    return response


def _update(response_pk, text, user, complete, reason):
    response = Response.objects.select_for_update().get(pk=response_pk)
    status = response.status
    if status == Response.Status.TRANSCRIBING and complete:
        status = Response.Status.READY
    elif status == Response.Status.READY and not complete:
        status = Response.Status.TRANSCRIBING
    if response.transcript == text and response.status == status:
        return response
    old_text = response.transcript
    response.transcript = text
    response.transcript_hash = content_hash(text)
    response.status = status
    response.version += 1
    _stamp(response, user, reason or "Transcript corrected from scans")
    try:
        with transaction.atomic():
            response.save()
    except IntegrityError as exc:
        raise TranscriptConflict(
            f"Response #{response.pk} cannot take this text: another response of student "
            f"{response.student_id} to the same question already has exactly this text."
        ) from exc
    if old_text != text:
        reanchor_step_labels(response, old_text, user=user)
    return response


def _stamp(response, user, reason):
    if user is not None and getattr(user, "is_authenticated", False):
        response._history_user = user
    response._change_reason = reason[:100]


def move_response(response, *, student_id, user=None, reason=""):
    """Give a scanned response (and so its labels) to another student: its pages moved there whole.

    The text does not change, so labels stay valid. Raises TranscriptConflict when that student
    already has a response to the question with exactly this text.
    """
    if response.student_id == student_id:
        return response
    response.student_id = student_id
    _stamp(response, user, reason or f"Scan pages moved to student {student_id}")
    try:
        with transaction.atomic():
            response.save(update_fields=["student_id", "updated"])
    except IntegrityError as exc:
        raise TranscriptConflict(
            f"Response #{response.pk} cannot move to student {student_id}: that student already has a "
            "response to the same question with exactly this text."
        ) from exc
    return response


def release_response(response, *, user=None, reason=""):
    """A scanned response whose pages all went elsewhere: deleted when nothing hangs on it (no label,
    assignment, draft or judge result), else kept with all of that (as `transcribing`, so it is not
    taken for a finished answer). Returns "deleted" or "kept"."""
    attached = (response.labels, response.assignments, response.label_drafts, response.judge_results)
    if not any(related.exists() for related in attached):
        _stamp(response, user, reason or "Its scan pages were moved to other answers")
        response.delete()
        return "deleted"
    response.status = Response.Status.TRANSCRIBING
    response.extra = {**(response.extra or {}), "scan_pages_moved": True}
    _stamp(response, user, reason or "Its scan pages were moved to other answers; labels kept")
    response.save(update_fields=["status", "extra", "updated"])
    return "kept"
