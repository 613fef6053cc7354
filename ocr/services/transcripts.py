"""Transcripts: saved with their version (a stale editor is refused), verified (the response
written from all of its pages, runs scored against the text), and passages flagged back to the
correction queue."""
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from annotation.models import Question, Response
from annotation.transcripts import TranscriptConflict, record_transcript

from .. import selectors
from ..metrics import char_errors
from ..models import OcrRun, Page, Transcript, TranscriptFlag, TranscriptRevision

AUTOSAVE_MERGE_SECONDS = 600


class TranscriptError(Exception):
    """A transcript action that cannot be done as asked; the message says what to do."""


class StaleTranscript(TranscriptError):
    """The transcript changed since the version the editor started from."""

    def __init__(self, transcript, base_version):
        self.transcript = transcript
        who = transcript.updated_by.username if transcript.updated_by else "OCR"
        when = timezone.localtime(transcript.updated).strftime("%H:%M:%S")
        super().__init__(
            f"Not saved: {who} saved version {transcript.version} at {when}, after the version {base_version} "
            "you started from. Your text is still in the editor: copy it, reload the page to see theirs, "
            "and merge."
        )


def save_transcript(
    page: Page, *, text: str, base_version: int, user, kind: str = TranscriptRevision.Kind.SAVE
) -> Transcript:
    """Store a new text if the transcript is still at `base_version`; else raise StaleTranscript."""
    text = text.replace("\r\n", "\n")
    with transaction.atomic():
        transcript, _ = Transcript.objects.get_or_create(page=page)
        if transcript.version != base_version:
            raise StaleTranscript(transcript, base_version)
        if kind == TranscriptRevision.Kind.AUTOSAVE and text == transcript.text:
            return transcript
        status = transcript.status
        if status != Transcript.Status.DRAFT:
            status = Transcript.Status.VERIFIED if text == transcript.verified_text else Transcript.Status.CHANGED
        now = timezone.now()
        updated = Transcript.objects.filter(pk=transcript.pk, version=base_version).update(
            text=text, version=base_version + 1, status=status, updated_by=user, updated=now
        )
        if not updated:
            transcript.refresh_from_db()
            raise StaleTranscript(transcript, base_version)
        transcript.refresh_from_db()
        _record_revision(transcript, text, kind, user, now)
    return transcript


def _record_revision(transcript, text, kind, user, now):
    latest = transcript.revisions.order_by("-version", "-id").first()
    merge = (
        kind == TranscriptRevision.Kind.AUTOSAVE
        and latest is not None
        and latest.kind == TranscriptRevision.Kind.AUTOSAVE
        and latest.author_id == getattr(user, "pk", None)
        and (now - latest.created).total_seconds() < AUTOSAVE_MERGE_SECONDS
    )
    if merge:
        latest.text, latest.version = text, transcript.version
        latest.save(update_fields=["text", "version", "updated"])
        return latest
    return TranscriptRevision.objects.create(
        transcript=transcript, version=transcript.version, text=text, kind=kind, author=user
    )


def verify_transcript(page: Page, *, text: str, base_version: int, user) -> tuple[Transcript, Response]:
    """Save the text as verified and write the response it belongs to (history kept)."""
    if not page.is_assigned:
        raise TranscriptError(gettext("Assign a student and a question to this page before verifying it."))
    with transaction.atomic():
        transcript = save_transcript(
            page, text=text, base_version=base_version, user=user, kind=TranscriptRevision.Kind.VERIFY
        )
        transcript.status = Transcript.Status.VERIFIED
        transcript.verified_text = transcript.text
        transcript.verified_by = user
        transcript.verified_at = timezone.now()
        transcript.save(update_fields=["status", "verified_text", "verified_by", "verified_at"])
        score_runs(page, transcript.text)
        resolve_flags(page, user)
        try:
            response = write_response(page, user)
        except TranscriptConflict as exc:
            raise TranscriptError(str(exc)) from exc
    return transcript, response


MAX_FLAG_NOTE = 2000


class FlagInvalid(ValueError):
    """A "transcript wrong here" flag that cannot be stored (the message says why)."""


def flag_transcript(*, response: Response, user, start: int, end: int, note: str = "") -> TranscriptFlag:
    """Send a passage of a response's transcript back to the correction queue with a note.

    The flag goes on the page whose text holds the passage. The caller checks that the user may
    label the response. Raises FlagInvalid for a span outside the text or a response without scans.
    """
    text = response.transcript
    if not (isinstance(start, int) and isinstance(end, int)) or isinstance(start, bool) or isinstance(end, bool):
        raise FlagInvalid(gettext("Select a passage of the answer first."))
    if not 0 <= start < end <= len(text):
        raise FlagInvalid(gettext("The passage %(start)s–%(end)s lies outside the transcript (length %(n_text)s).") % {"start": start, "end": end, "n_text": len(text)})
    if not isinstance(note, str) or len(note) > MAX_FLAG_NOTE:
        raise FlagInvalid(gettext("The note must be text of at most %(MAX_FLAG_NOTE)s characters.") % {"MAX_FLAG_NOTE": MAX_FLAG_NOTE})
    page_id, page_offset = selectors.page_of_span(response, start)
    if page_id is None:
        raise FlagInvalid(gettext("This answer was not made from scans: there is no page to correct."))
    return TranscriptFlag.objects.create(
        response=response, page_id=page_id, start=start, end=end, quote=text[start:end], note=note.strip(),
        page_start=start - page_offset if page_offset is not None else None,
        page_end=end - page_offset if page_offset is not None else None, flagged_by=user,
    )


def resolve_flags(page: Page, user) -> int:
    """Close the open flags of a page (it was verified again)."""
    return TranscriptFlag.objects.filter(page=page, resolved_at__isnull=True).update(
        resolved_at=timezone.now(), resolved_by=user
    )


def score_runs(page: Page, reference: str) -> None:
    """Store each finished run's character errors against the verified text (for the quality page)."""
    runs = list(page.ocr_runs.filter(status=OcrRun.Status.DONE))
    for run in runs:
        run.cer_edits, run.cer_length = char_errors(run.raw_text, reference)
        run.cer_math_edits, run.cer_math_length = char_errors(run.raw_text, reference, math=True)
    OcrRun.objects.bulk_update(runs, ["cer_edits", "cer_length", "cer_math_edits", "cer_math_length"])


def write_response(page: Page, user) -> Response:
    """Create or update the response of the page's student and question from all of its pages."""
    group = list(
        Page.objects.filter(question_id=page.question_id, student_id=page.student_id)
        .select_related("transcript")
        .order_by("page_number", "id")
    )
    texts, complete, response_id = [], True, None
    for member in group:
        transcript = getattr(member, "transcript", None)
        verified = transcript is not None and transcript.status == Transcript.Status.VERIFIED
        complete = complete and verified
        if transcript is not None and (transcript.verified_text or transcript.text):
            texts.append(transcript.verified_text if verified else transcript.text)
        response_id = response_id or member.response_id
    question = Question.objects.get(pk=page.question_id)
    existing = question.responses.filter(pk=response_id).first() if response_id else None
    response = record_transcript(
        question=question,
        student_id=page.student_id,
        text="\n\n".join(text.strip() for text in texts),
        response=existing,
        user=user,
        complete=complete,
        reason=f"Verified scan page #{page.pk}",
    )
    Page.objects.filter(pk__in=[member.pk for member in group]).update(response=response)
    return response
