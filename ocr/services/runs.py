"""OCR runs of pages: queued one Celery task per page, claimed by a worker, watched (a run whose
worker died is taken over once), the engine run on the page (`engine_input`, the one hand-off
of an image to any engine) and its text stored as the page's first transcript; the page's images
(stored files, PDF pages rendered in the worker, preparation, renditions for people)."""
import io
import logging
import time
import uuid
from collections.abc import Iterable
from contextlib import contextmanager
from datetime import timedelta

from celery import current_app
from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_noop as N
from PIL import Image

import llm
from core.stored_text import part, render
from egress import purposes

from .. import imaging, redaction, selectors, tasks
from ..engines import EngineFailed, EngineUnavailable, OcrEngine, get_engine
from ..models import OcrRun, Page, ScanBatch, Transcript, TranscriptRevision

logger = logging.getLogger(__name__)


# --- runs --------------------------------------------------------------------------------------

def queue_ocr(pages: Iterable[Page], engine_name: str) -> list[OcrRun]:
    """Create a queued run per page and send one Celery task per page once the data is committed."""
    runs = OcrRun.objects.bulk_create(OcrRun(page=page, engine=engine_name) for page in pages)
    _send_on_commit([run.pk for run in runs])
    return runs


def _send_on_commit(run_ids):
    def send():  # the queue comes from CELERY_TASK_ROUTES (OCR_QUEUE)
        for run_id in run_ids:
            tasks.run_ocr_task.delay(run_id)

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
    from ..tasks import watch_ocr_run_task  # cycle: ocr.tasks imports this module

    if not current_app.conf.task_always_eager:  # eager tasks (tests) would wait synchronously
        watch_ocr_run_task.apply_async(args=[run_id, takeovers], countdown=max(0.0, delay))


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
        from ..tasks import run_ocr_task  # cycle, as above

        transaction.on_commit(lambda: run_ocr_task.apply_async(args=[run_id], kwargs={"takeovers": takeovers + 1}))
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
    except llm.CallCancelled as exc:  # the worker shuts down: the page stays claimed, its watchdog takes it over
        logger.info("OCR run %s: %s", run_id, exc)
        return None
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
    from ..synthetic import full_page  # font loading; only worker processes warm up

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


# --- the page's images: stored files, rendering, preparation, renditions ----------------------

def duplicate_of(checksum, exclude=None):
    return Page.objects.filter(checksum=checksum).exclude(pk=exclude).select_related("batch").first()


def duplicate_words(duplicate):
    return part(N("the same image is already stored as page #%(page)s of batch “%(batch)s”"),
                page=duplicate.pk, batch=duplicate.batch.name)


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
    duplicate = duplicate_of(decoded.checksum, exclude=page.pk)
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
            duplicate = duplicate_of(decoded.checksum)
    words = (render(duplicate_words(duplicate)) if duplicate
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
