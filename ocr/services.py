"""Writes of the ocr app: ingesting uploads, running engines, saving and verifying transcripts."""
import hashlib
import io
import logging
import time
import uuid
from collections.abc import Iterable
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta

from celery import current_app
from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import UploadedFile
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_noop as N
from PIL import Image

import llm
from annotation.models import Exam, Question, Response
from annotation.transcripts import TranscriptConflict, record_transcript
from core.stored_text import english, part, raw, render
from egress import purposes

from . import imaging, redaction, selectors, tasks
from .engines import EngineFailed, EngineUnavailable, OcrEngine, get_engine
from .filenames import NOT_THE_NAME_FORMAT, QuestionIndex, parse_name
from .metrics import char_errors
from .models import OcrRun, Page, ScanBatch, ScanFile, Transcript, TranscriptFlag, TranscriptRevision

logger = logging.getLogger(__name__)

AUTOSAVE_MERGE_SECONDS = 600


class BatchError(Exception):
    """A batch cannot be made as asked (unknown engine, too many files)."""


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


# --- batches and uploads ---------------------------------------------------------------------

@dataclass
class Upload:
    """One file of a batch as received: its name, bytes and the MIME type the client declared.

    The bytes may come later from `source` (a file object), read only when the file's turn
    comes and dropped after it, so a batch holds one file in memory at a time.
    """

    name: str
    data: bytes | None = None
    declared_type: str = ""
    size: int | None = None
    source: object = None

    def __post_init__(self):
        if self.size is None:
            self.size = len(self.data) if self.data is not None else getattr(self.source, "size", 0)

    def read(self) -> bytes | None:
        if self.data is None and self.source is not None:
            self.data = self.source.read()
        return self.data

    def release(self) -> None:
        self.data = None


def uploads_from(files: Iterable[UploadedFile]) -> list[Upload]:
    """Django uploaded files (or any file objects with name and size) as Uploads, read lazily."""
    return [
        Upload(name=f.name, declared_type=getattr(f, "content_type", "") or "", size=f.size, source=f)
        for f in files
    ]


def create_batch(*, exam: Exam, engine: str, user=None, name: str = "") -> ScanBatch:
    get_engine(engine)  # KeyError for an unknown engine
    name = name.strip() or f"{exam.name} scans {timezone.localtime():%Y-%m-%d %H:%M}"
    return ScanBatch.objects.create(name=name[:200], exam=exam, engine=engine, created_by=user)


def ingest_new_batch(*, exam: Exam, engine: str, uploads: Iterable[Upload], user=None,
                     name: str = "") -> tuple[ScanBatch, list[ScanFile]]:
    """A new batch with the uploads read into it, as one step (the upload page, the API and
    ``manage.py ingest_scans``): uploads refused as a whole (`BatchError`, e.g. too many files)
    leave no batch behind; a refused file is recorded in the batch with its reason."""
    uploads = list(uploads)
    _check_batch_size(uploads)
    batch = create_batch(exam=exam, engine=engine, user=user, name=name)
    try:
        return batch, ingest_uploads(batch, uploads)
    except BaseException:
        batch.delete()  # nothing of a batch that could not be read stays
        raise


def _check_batch_size(uploads):
    limit = settings.OCR_MAX_FILES_PER_BATCH
    if len(uploads) > limit:
        raise BatchError(gettext("%(n_uploads)s files in one batch; the limit is %(limit)s. Upload them in parts.")
                         % {"n_uploads": len(uploads), "limit": limit})


def ingest_uploads(batch: ScanBatch, uploads: Iterable[Upload]) -> list[ScanFile]:
    """Read each upload into pages; a refused file is recorded with its reason and the rest go on.

    Returns the ScanFile rows in upload order. OCR of the new pages is queued after commit.
    """
    uploads = list(uploads)
    _check_batch_size(uploads)
    index = QuestionIndex(batch.exam)
    results = []
    for upload in uploads:
        try:
            results.append(ingest_upload(batch, upload, index))
        except Exception as exc:  # noqa: BLE001 - one bad file must never stop the batch
            logger.exception("Unexpected failure ingesting %s", upload.name)
            results.append(
                _record_file(batch, upload, ScanFile.Status.REFUSED, [part(
                    N("Refused: an unexpected error occurred while reading it (%(error)s). Nothing else was affected."),
                    error=type(exc).__name__)])
            )
        finally:
            upload.release()
    return results


def ingest_upload(batch: ScanBatch, upload: Upload, index: QuestionIndex) -> ScanFile:
    """Turn one upload into pages (or a refusal) and queue their OCR.

    Images are decoded here, one page at a time. A PDF is only checked and measured here: its
    pages are created waiting to be rendered, and each page's OCR task renders it.
    """
    try:
        if upload.size > settings.OCR_MAX_UPLOAD_BYTES:
            imaging.refuse_size(upload.size)
        read = imaging.read_upload(upload.read())
    except imaging.UploadRefused as exc:
        return _record_file(batch, upload, ScanFile.Status.REFUSED, _refused(exc))
    read.notes.extend(imaging.mismatch_notes(upload.name, upload.declared_type, read.kind))
    parsed = parse_name(upload.name)
    question_pk, note = index.resolve(parsed.question_token)
    note = [note] if note else []
    if not parsed.student_id:
        note = [part(NOT_THE_NAME_FORMAT)]
    if parsed.note:
        note.insert(0, raw(parsed.note))  # written in the uploader's language already
    place = {"parsed": parsed, "question_pk": question_pk, "note": english(note)}
    written = []
    try:
        # Decoding and PNG encoding come first, outside the transaction: on SQLite a transaction
        # that has written holds the database's only write lock, which the workers' writes wait for.
        masters = None if read.kind == "pdf" else _store_masters(read, written)
        with transaction.atomic():
            scan_file = _record_file(batch, upload, ScanFile.Status.ACCEPTED, [], kind=read.kind)
            if masters is None:
                new_pages, messages = _store_pdf_pages(batch, scan_file, read, place, written)
            else:
                new_pages, messages = _record_decoded_pages(batch, scan_file, read, masters, place)
            if new_pages:
                scan_file.stored = store_file(f"ocr/originals/{batch.pk}/{scan_file.pk}", upload.data, written)
                messages.insert(0, part(N("Accepted: %(n)s page(s)."), n=len(new_pages)))
                messages.extend(note)
            else:
                scan_file.status = ScanFile.Status.DUPLICATE
            scan_file.message, scan_file.message_parts = english(messages), messages
            scan_file.save(update_fields=["stored", "status", "message", "message_parts"])
            scan_file.n_new_pages = len(new_pages)
            queue_ocr(new_pages, batch.engine)
    except imaging.UploadRefused as exc:
        # A frame of a multi-page TIFF that fails to decode: the whole file is refused, nothing kept.
        delete_files(written)
        return _record_file(batch, upload, ScanFile.Status.REFUSED, _refused(exc))
    except IntegrityError:
        # Another upload stored the same page between our check and our insert.
        delete_files(written)
        return _record_file(batch, upload, ScanFile.Status.DUPLICATE, [
            part(N("Skipped: the same page was stored by another upload just now."))])
    except Exception:
        delete_files(written)
        raise
    return scan_file


@dataclass
class _Master:
    """A decoded page of an upload, its master PNG already stored, or why it is skipped."""

    offset: int
    label: dict  # a core.stored_text part, as `skipped`
    checksum: str
    width: int
    height: int
    note: str = ""
    master: str = ""
    skipped: dict | None = None


def _store_masters(read, written):
    """Decode the pages and store each one's master PNG, one page in memory at a time (a
    multi-page TIFF costs one page of memory); pages already stored are skipped."""
    masters, seen, offset = [], {}, -1
    for decoded in read.pages:  # not enumerate(): its reused result tuple would keep the last page alive
        offset += 1
        label = part(N("page %(n)s"), n=offset + 1) if read.count > 1 else part(N("the page"))
        entry = _Master(offset, label, decoded.checksum, decoded.image.width, decoded.image.height, decoded.note)
        duplicate = _duplicate_of(decoded.checksum)
        if duplicate is not None:
            entry.skipped = _duplicate_words(duplicate)
        elif decoded.checksum in seen:
            entry.skipped = part(N("the same image as page %(n)s of this file"), n=seen[decoded.checksum] + 1)
        else:
            seen[decoded.checksum] = offset
            name = f"ocr/masters/{uuid.uuid4().hex}.png"
            entry.master = store_file(name, imaging.encode_png(decoded.image), written)
        masters.append(entry)
        del decoded
    return masters


def _record_decoded_pages(batch, scan_file, read, masters, place):
    """The page rows of stored masters (inside the upload's transaction)."""
    messages, new_pages = list(read.notes), []
    for entry in masters:
        if entry.skipped:
            messages.append(part(N("Skipped %(what)s: %(why)s."), what=[entry.label], why=[entry.skipped]))
            continue
        page = Page(checksum=entry.checksum, width=entry.width, height=entry.height, master=entry.master)
        _place_page(page, batch, scan_file, entry.offset, place).save()
        new_pages.append(page)
        if entry.note:
            messages.append(part(N("%(what)s: %(note)s"), what=[entry.label], note=[raw(entry.note)]))
    return new_pages, messages


def _store_pdf_pages(batch, scan_file, read, place, written):
    """Create the pages of a PDF waiting to be rendered (by their OCR task), at the size they will have."""
    messages, new_pages = list(read.notes), []
    for plan in read.pages:
        page = Page(status=Page.Status.PENDING, checksum=None, master="", width=plan.width, height=plan.height)
        new_pages.append(_place_page(page, batch, scan_file, plan.index, place))
        if plan.note:
            messages.append(raw(plan.note))
    Page.objects.bulk_create(new_pages)
    messages.append(part(N("Each page is rendered when its OCR runs.")))
    return new_pages, messages


def _place_page(page, batch, scan_file, offset, place):
    parsed = place["parsed"]
    page.batch, page.source_file, page.index_in_file = batch, scan_file, offset
    page.student_id = parsed.student_id[:200]
    page.question_id = place["question_pk"]
    page.page_number = parsed.page_number + offset
    page.assignment_note = place["note"][:500]
    return page


def _duplicate_of(checksum, exclude=None):
    return Page.objects.filter(checksum=checksum).exclude(pk=exclude).select_related("batch").first()


def _duplicate_words(duplicate):
    return part(N("the same image is already stored as page #%(page)s of batch “%(batch)s”"),
                page=duplicate.pk, batch=duplicate.batch.name)


def _refused(exc):
    """An upload's refusal: the frame in the reader's language, the reason as it was written."""
    return [part(N("Refused: %(reason)s"), reason=[raw(exc)])]


def _record_file(batch, upload, status, parts, kind=""):
    """The ScanFile of an upload; `parts` its message (core.stored_text), kept with its English."""
    scan_file = ScanFile.objects.create(
        batch=batch,
        original_name=(upload.name or "unnamed")[:255],
        declared_type=(upload.declared_type or "")[:100],
        detected_format=kind or imaging.sniff(upload.data or b"")[:16],
        size=upload.size,
        sha256=hashlib.sha256(upload.data).hexdigest() if upload.data is not None else "",
        status=status,
        message=english(parts),
        message_parts=parts,
    )
    scan_file.n_new_pages = 0
    return scan_file


def store_file(name: str, data: bytes, written: list[str]) -> str:
    """Write bytes under an exact storage name (replacing what was there) and remember it."""
    if default_storage.exists(name):
        default_storage.delete(name)
    stored = default_storage.save(name, ContentFile(data))
    written.append(stored)
    return stored


def delete_files(names: Iterable[str]) -> None:
    for name in names:
        try:
            default_storage.delete(name)
        except OSError:  # pragma: no cover - best effort clean-up of our own files
            logger.warning("Could not delete %s", name)


# --- OCR --------------------------------------------------------------------------------------

def queue_ocr(pages: Iterable[Page], engine_name: str) -> list[OcrRun]:
    """Create a queued run per page and send one Celery task per page once the data is committed."""
    runs = OcrRun.objects.bulk_create(OcrRun(page=page, engine=engine_name) for page in pages)
    _send_on_commit([run.pk for run in runs])
    return runs


def _send_on_commit(run_ids):
    def send():  # the queue comes from CELERY_TASK_ROUTES (OCR_QUEUE)
        for run_id in run_ids:
            tasks.run_ocr.delay(run_id)

    transaction.on_commit(send)


def queue_engine_on_batch(batch: ScanBatch, engine_name: str) -> list[OcrRun]:
    """Run another engine on every page of a batch (to compare engines on the quality page)."""
    get_engine(engine_name)
    pages = list(batch.pages.exclude(ocr_runs__engine=engine_name))
    return queue_ocr(pages, engine_name)


def _stuck_after():
    """A run 'running' for longer than this lost its worker (killed, restarted): it may be taken again."""
    return timedelta(seconds=selectors.stuck_after_seconds())


def retry_failed_runs(batch: ScanBatch) -> int:
    """Queue again the runs that failed, and those whose worker died under them."""
    stuck = Q(status=OcrRun.Status.RUNNING, started__lt=timezone.now() - _stuck_after())
    runs = list(OcrRun.objects.filter(Q(status=OcrRun.Status.FAILED) | stuck, page__batch=batch))
    OcrRun.objects.filter(pk__in=[run.pk for run in runs]).update(status=OcrRun.Status.QUEUED, error="")
    _send_on_commit([run.pk for run in runs])
    return len(runs)


# Automatic take-overs of one page whose worker stopped before it is left failed: a page that
# kills every worker it reaches (memory) must not loop.
MAX_OCR_TAKEOVERS = 1


def _schedule_watch(run_id: int, takeovers: int, delay: float) -> None:
    from .tasks import watch_ocr_run  # cycle: ocr.tasks imports this module

    if not current_app.conf.task_always_eager:  # eager tasks (tests) would wait synchronously
        watch_ocr_run.apply_async(args=[run_id, takeovers], countdown=max(0.0, delay))


def watch_ocr_run(run_id: int, takeovers: int = 0, *, now=None) -> str:
    """The watchdog of a page in flight, scheduled when a worker claims it: once the page has
    been running longer than a worker can take (`_stuck_after`), its worker died (killed,
    restarted), so it is queued again, once; the next time it is failed with a message."""
    run = OcrRun.objects.filter(pk=run_id).only("status", "started").first()
    if run is None or run.status != OcrRun.Status.RUNNING or run.started is None:
        return "stopped"
    now = now or timezone.now()
    due = run.started + _stuck_after()
    if now < due:
        _schedule_watch(run_id, takeovers, (due - now).total_seconds() + 1)
        return "watching"
    mine = OcrRun.objects.filter(pk=run_id, status=OcrRun.Status.RUNNING, started=run.started)
    if takeovers >= MAX_OCR_TAKEOVERS:
        mine.update(status=OcrRun.Status.FAILED, finished=now, error=gettext(
            "The worker reading this page stopped (killed or restarted) twice; it was not tried again "
            "automatically. Retry to try once more."))
        return "failed"
    if mine.update(status=OcrRun.Status.QUEUED, error=""):
        logger.warning("OCR run %s: its worker stopped %s after it started; queued again", run_id, _stuck_after())
        from .tasks import run_ocr  # cycle, as above

        transaction.on_commit(lambda: run_ocr.apply_async(args=[run_id], kwargs={"takeovers": takeovers + 1}))
        return "taken over"
    return "stopped"


def watch_running_ocr() -> int:
    """A worker just started: watch every page in flight (a watchdog message held by a worker
    that died went with it)."""
    ids = list(OcrRun.objects.filter(status=OcrRun.Status.RUNNING).values_list("pk", flat=True))
    for run_id in ids:
        _schedule_watch(run_id, 0, 0)
    return len(ids)


def perform_ocr_run(run_id: int, takeovers: int = 0) -> OcrRun | None:
    """Prepare the page (once), run the engine on it, store text and boxes, seed the transcript."""
    now = timezone.now()
    claimable = Q(status=OcrRun.Status.QUEUED) | Q(status=OcrRun.Status.RUNNING, started__lt=now - _stuck_after())
    claimed = OcrRun.objects.filter(claimable, pk=run_id).update(status=OcrRun.Status.RUNNING, started=now)
    if not claimed:
        return None  # taken by another worker (and not stuck), or finished
    _schedule_watch(run_id, takeovers, _stuck_after().total_seconds() + 1)
    run = OcrRun.objects.select_related("page__batch", "page__source_file").get(pk=run_id)
    clock = _StageClock()
    try:
        engine = get_engine(run.engine)
        with clock("render"):
            page = render_pending_page(run.page)
        with clock("prepare"):
            prepared = prepare_stored_page(page, reads=engine.input_kind)
            image, factor = engine_input(engine, prepared, redact=page.redaction_regions)
        with clock("engine"), llm.labelled(purposes.VISION_OCR, page_ids=[page.pk], answer_ids=[page.response_id]):
            result = engine.recognise(image)  # a local engine sends nothing; the vision engine's call is labelled
        run.engine_version = engine.version()[:200]
    except (EngineUnavailable, EngineFailed, imaging.UploadRefused) as exc:
        return _fail(run, str(exc))
    except Exception as exc:  # noqa: BLE001 - recorded on the run, then re-raised for the worker log
        _fail(run, f"Unexpected error: {type(exc).__name__}: {exc}")
        raise
    with clock("store"):
        run.raw_text = result.text
        run.tokens = [token.scaled(factor) for token in result.tokens]
        run.seconds = round(clock.timings["engine"], 3)
        run.status = OcrRun.Status.DONE
        run.finished = timezone.now()
        run.save()
        seed_transcript(run)
    OcrRun.objects.filter(pk=run.pk).update(timings=clock.rounded())
    return run


class _StageClock:
    """Seconds spent in each stage of a page task (stored on the run: where a page's time goes)."""

    def __init__(self):
        self.timings = {}

    @contextmanager
    def __call__(self, stage):
        started = time.perf_counter()
        try:
            yield
        finally:
            self.timings[stage] = self.timings.get(stage, 0.0) + time.perf_counter() - started

    def rounded(self):
        return {stage: round(seconds, 3) for stage, seconds in self.timings.items()}


def warm_up_engines() -> tuple[str, float] | None:
    """Run a whole page through preparation and the default engine once in this process (a
    worker process that just started), so that the first page a user uploads costs what the
    next ones do.

    A page the size of a 200-dpi A4 scan, not a small strip: onnxruntime's first run on an input
    of a new size is slower than the next (measured: a worker warmed up on a strip took 3.6 s on
    its first full page and 2.5-2.8 s on the next ones; warmed up on a full page, 2.8 s), and the
    first preparation loads what the later ones reuse.

    Returns (engine name, seconds), or None when warming up is off or the engine cannot run here.
    """
    if not settings.OCR_WARM_UP:
        return None
    name = settings.OCR_DEFAULT_ENGINE
    try:
        engine = get_engine(name)
    except KeyError:
        return None
    if engine.availability() is not None:
        return None
    started = time.perf_counter()
    try:
        prepared = imaging.prepare_page(_warm_up_page(), reads=engine.input_kind)
        imaging.encode_jpeg(prepared.display)
        if prepared.binary is not None:
            _processed_png(prepared)
        engine.warm_up(engine_input(engine, prepared, redact=())[0])
    except (EngineUnavailable, EngineFailed) as exc:
        logger.warning("OCR engine %s could not warm up: %s", name, exc)
        return None
    return name, time.perf_counter() - started


def _warm_up_page():
    """A spoiled full page of exam lines, so that detection and recognition run at full size."""
    from .synthetic import full_page  # font loading; only worker processes warm up

    try:
        return full_page(seed=0)[0]
    except OSError:  # no CJK font installed: a blank page still loads the models at full size
        return imaging.Image.new("L", (1654, 2339), 250)


def _fail(run, message):
    run.status = OcrRun.Status.FAILED
    run.error = message[:2000]
    run.finished = timezone.now()
    run.save(update_fields=["status", "error", "finished"])
    return run


def engine_input(engine: OcrEngine, prepared: imaging.PreparedPage, *, redact) -> tuple[Image.Image, float]:
    """The prepared image an engine reads, its redaction regions blacked out, and the factor from
    its pixels to screen pixels.

    The one place an image is handed to an engine (the page task, the warm-up, `ocr_page`): every
    engine, local or remote, reads what this returns. `redact` (a page's `redaction_regions`, in
    fractions of the upright form; required, so that no caller forgets it) is applied to the image
    the engine reads, whatever its kind, filled with the paper's white (`redaction.ENGINE_FILL`:
    why). Every prepared image is the deskewed page, larger than the form when the scan was tilted
    (the form upright in its middle): each region is blanked on the form there and at the same
    fractions of the whole image (`redaction.deskewed_regions`), so a tilt moves no name out."""
    if engine.input_kind == "binary":
        image, factor = prepared.binary, prepared.work_to_display
    elif engine.input_kind == "display":
        image, factor = prepared.display, 1.0
    else:
        image, factor = prepared.gray, prepared.work_to_display
    regions = redaction.deskewed_regions(redact, prepared.form_size, prepared.skew_degrees, prepared.gray.size)
    return redaction.black_out(image, regions, fill=redaction.ENGINE_FILL), factor


def render_pending_page(page: Page) -> Page:
    """Render a PDF page the upload only measured (one page, in the worker); raise UploadRefused if it cannot be."""
    if page.master:
        return page
    try:
        with default_storage.open(page.source_file.stored, "rb") as handle:
            # PDFium reads what the page needs from the file: a class's PDF is not read whole per page.
            decoded = imaging.render_pdf_page(handle, page.index_in_file)
        _record_rendering(page, decoded)
    except (imaging.UploadRefused, OSError) as exc:
        message = str(exc) if isinstance(exc, imaging.UploadRefused) else f"The stored PDF could not be read ({exc})."
        Page.objects.filter(pk=page.pk, master="").update(status=Page.Status.FAILED, prepare_error=message[:2000])
        raise imaging.UploadRefused(message) from exc
    page.refresh_from_db()
    return page


def _record_rendering(page, decoded):
    """Store a rendered page, unless its pixels are already stored (a duplicate: UploadRefused).

    Two runs of one page (two engines) may render it side by side: each writes its own file and
    the first to record it wins; the other removes its file.
    """
    duplicate = _duplicate_of(decoded.checksum, exclude=page.pk)
    if duplicate is None:
        name = default_storage.save(f"ocr/pages/{page.pk}/master.png", ContentFile(imaging.encode_png(decoded.image)))
        fields = {"master": name, "checksum": decoded.checksum, "width": decoded.image.width,
                  "height": decoded.image.height, "status": Page.Status.UPLOADED, "prepare_error": ""}
        try:
            with transaction.atomic():
                if not Page.objects.filter(pk=page.pk, master="").update(**fields):
                    delete_files([name])  # the other run was first
                return
        except IntegrityError:  # the same pixels were stored by another page just now
            delete_files([name])
            duplicate = _duplicate_of(decoded.checksum)
    words = (render(_duplicate_words(duplicate)) if duplicate
             else gettext("the same image was stored by another upload just now"))
    raise imaging.UploadRefused(gettext("Skipped: %(words)s.") % {"words": words})


def prepare_stored_page(page: Page, reads: str = "binary") -> imaging.PreparedPage:
    """Prepare a stored page for an engine that reads `reads`; the first time, also store its
    screen renditions (and the thresholded page, when this preparation made it)."""
    prepared = imaging.prepare_page(_open_master(page), reads=reads)
    if page.status != Page.Status.PREPARED:
        written = []
        page.web = store_file(f"ocr/pages/{page.pk}/web.jpg", imaging.encode_jpeg(prepared.display), written)
        page.thumb = store_file(f"ocr/pages/{page.pk}/thumb.jpg", imaging.encode_jpeg(prepared.thumb, 80), written)
        if prepared.binary is not None:
            page.processed = store_file(f"ocr/pages/{page.pk}/processed.png", _processed_png(prepared), written)
        page.web_width, page.web_height = prepared.display.size
        page.skew_degrees = prepared.skew_degrees
        page.status = Page.Status.PREPARED
        page.save(update_fields=["web", "thumb", "processed", "web_width", "web_height", "skew_degrees", "status"])
    return prepared


def processed_rendition(page: Page) -> str:
    """The stored thresholded page (Alt+P on the correction screen), made now if the engine that
    prepared the page did not need it: a page read by RapidOCR gets it the first time it is asked
    for, not in every page task. Returns its storage name ("" for a page not prepared yet)."""
    if page.processed or page.status != Page.Status.PREPARED or not page.master:
        return page.processed
    name = store_file(f"ocr/pages/{page.pk}/processed-{uuid.uuid4().hex[:8]}.png",
                      _processed_png(imaging.prepare_page(_open_master(page), reads="binary")), [])
    if not Page.objects.filter(pk=page.pk, processed="").update(processed=name):
        delete_files([name])  # another request made it meanwhile
    page.refresh_from_db(fields=["processed"])
    return page.processed


def redacted_rendition(page: Page, kind: str, name: str) -> tuple[bytes, str]:
    """A stored rendition of `page` (`kind`: web, thumb, processed or master; `name`: its file)
    with the page's redaction regions blanked in black (`redaction.EXPORT_FILL`: the removal
    shows), as (bytes, content type): what a blind exam's annotators get (issue 40: the labelling
    screen showed them the name header). Renditions are the deskewed page (each region on the form
    inside it and at its own fractions, as the engines get them); the master is the scan as
    uploaded (each region turned either way by the page's skew). The stored files are not changed."""
    with default_storage.open(name, "rb") as handle:
        image = Image.open(io.BytesIO(handle.read()), formats=["PNG", "JPEG"])
        image.load()
    regions = page.redaction_regions
    if kind == "master":
        boxes = redaction.scan_regions(regions, image.size, page.skew_degrees or 0.0)
    else:
        boxes = page.deskewed(regions)
    if image.mode not in ("L", "RGB"):
        image = image.convert("RGB" if image.mode != "1" else "L")
    jpeg = name.lower().endswith((".jpg", ".jpeg"))
    # A JPEG's blocks are 16 px (colour subsampled): each box grown to whole blocks stays one colour.
    blanked = redaction.black_out(image, boxes, fill=redaction.EXPORT_FILL, align=16 if jpeg else 1)
    if jpeg:
        return imaging.encode_jpeg(blanked), "image/jpeg"
    return imaging.encode_png(blanked, 6), "image/png"


def _open_master(page):
    with default_storage.open(page.master, "rb") as handle:
        return imaging.open_stored_png(handle.read())


def _processed_png(prepared):
    return imaging.encode_png(prepared.binary.convert("1"), 6)


def seed_transcript(run: OcrRun) -> Transcript | None:
    """Give a page its first transcript from the batch engine's output; never over people's edits."""
    page = run.page
    if run.engine != page.batch.engine:
        return None
    transcript, _ = Transcript.objects.get_or_create(page=page)
    seeded = Transcript.objects.filter(pk=transcript.pk, version=0).update(
        text=run.raw_text, version=1, source_run=run, updated=timezone.now()
    )
    if seeded:
        TranscriptRevision.objects.create(transcript=transcript, version=1, text=run.raw_text, kind="ocr")
    return transcript


# --- transcripts --------------------------------------------------------------------------------

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
