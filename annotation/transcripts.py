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
