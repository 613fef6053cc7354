"""Ingesting uploads: a batch made from files, each file read into pages (images decoded and
stored, a PDF measured for its pages to be rendered by their OCR task), refusals recorded with
their reason, and the OCR of the new pages queued (services.runs)."""
import hashlib
import logging
import uuid
from collections.abc import Iterable
from dataclasses import dataclass

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_noop as N

from annotation.models import Exam
from core.stored_text import english, part, raw

from .. import imaging
from ..engines import get_engine
from ..filenames import NOT_THE_NAME_FORMAT, QuestionIndex, parse_name
from ..models import Page, ScanBatch, ScanFile
from .runs import delete_files, duplicate_of, duplicate_words, queue_ocr, store_file

logger = logging.getLogger(__name__)


class BatchError(Exception):
    """A batch cannot be made as asked (unknown engine, too many files)."""


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
        duplicate = duplicate_of(decoded.checksum)
        if duplicate is not None:
            entry.skipped = duplicate_words(duplicate)
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
