"""Writes for a refused class PDF kept for another try: its three files are never lost to a refusal.

A class PDF is refused whole (`ocr.packets.ingest_class_pdf`): a question label the exam does not
have, a roster one row short, a wrong file. Its uploader should not have to choose the PDF, the
roster and the template again to fix one of them, so the files that were given are kept as a
`PendingClassUpload` (the PDF in storage, the two small files in the row) with the reasons. From
its page she tries again with another exam, engine or name, or replaces only the file that was
wrong; the page suggests the exams that hold every question label of the template
(`ocr.selectors.exams_for_template`).

A pending upload belongs to its uploader alone and lives `OCR_PENDING_CLASS_UPLOAD_HOURS`: a
taken retry, a discard or its expiry deletes the row and its stored PDF. Expired ones are deleted
by the hourly beat task (`ocr.delete_expired_class_uploads`) and also whenever someone keeps a new
one; a person keeps at most `OCR_PENDING_CLASS_UPLOADS_PER_USER` (her oldest go first).
"""
import logging
from datetime import timedelta

from django.conf import settings
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone

from . import class_templates, packets, services
from .models import PendingClassUpload, ScanBatch

logger = logging.getLogger(__name__)

SMALL_FILE_LIMITS = {"roster": class_templates.MAX_ROSTER_BYTES, "template": class_templates.MAX_TEMPLATE_BYTES}


def _read_small(upload, limit):
    """The bytes of a roster or template upload, or None when there is none or it is beyond what
    the checks accept anyway (its refusal says so; keeping it would help no retry)."""
    if upload is None or upload.size > limit:
        return None
    upload.seek(0)
    return upload.read()


def keep_refused_upload(*, user, problems, exam=None, engine="", name="", pdf=None, roster=None,
                        template=None) -> PendingClassUpload:
    """Keep the files of a refused class upload for a retry; the new PendingClassUpload.

    `pdf` is a services.Upload (or None); `roster` and `template` are Django uploaded files (or
    None). A PDF beyond the class PDF size limit, or empty, is not kept: it must be chosen again."""
    delete_expired()
    pending = PendingClassUpload(
        created_by=user, exam=exam, engine=engine or "", name=(name or "")[:200], problems=list(problems),
        expires=timezone.now() + timedelta(hours=settings.OCR_PENDING_CLASS_UPLOAD_HOURS),
    )
    _save(pending, pdf=pdf, roster=roster, template=template)
    _keep_at_most(user, settings.OCR_PENDING_CLASS_UPLOADS_PER_USER)
    return pending


def _save(pending, *, pdf, roster, template):
    """Save the pending upload with the files given (the others stay as kept); a PDF written
    before a failure is removed again."""
    _set_small(pending, "roster", roster)
    _set_small(pending, "template", template)
    written = []
    try:
        with transaction.atomic():
            if pending.pk is None:
                pending.save()  # the PDF's storage name carries the row's id
            if pdf is not None:
                _store_pdf(pending, pdf, written)
            pending.save()
    except BaseException:
        services.delete_files(written)
        raise


def _set_small(pending, kind, upload):
    data = _read_small(upload, SMALL_FILE_LIMITS[kind])
    if data:
        setattr(pending, kind, data)
        setattr(pending, f"{kind}_name", (upload.name or "")[:255])


def _store_pdf(pending, pdf, written):
    if not pdf.size or pdf.size > settings.OCR_MAX_CLASS_PDF_BYTES:
        return
    data = pdf.read()
    pdf.release()
    if not data:
        return
    old = pending.pdf_stored
    pending.pdf_stored = services.store_file(f"ocr/pending/{pending.pk}/class.pdf", data, written)
    pending.pdf_name = (pdf.name or "class.pdf")[:255]
    pending.pdf_type = (pdf.declared_type or "")[:100]
    pending.pdf_size = len(data)
    if old and old != pending.pdf_stored:
        transaction.on_commit(lambda: services.delete_files([old]))


def pending_pdf(pending: PendingClassUpload) -> services.Upload | None:
    """The kept PDF as a services.Upload (read from storage when its turn comes), or None."""
    if not pending.pdf_stored:
        return None
    source = default_storage.open(pending.pdf_stored, "rb")
    return services.Upload(name=pending.pdf_name, declared_type=pending.pdf_type, size=pending.pdf_size,
                           source=source)


class MissingFiles(Exception):
    """A retry without one of the three files (none kept, none given); `missing` names them."""

    def __init__(self, missing):
        self.missing = list(missing)
        super().__init__(", ".join(self.missing))


def retry(pending: PendingClassUpload, *, exam, engine, name="", pdf=None, roster=None, template=None,
          user=None) -> ScanBatch:
    """Try the kept upload again, with a given file in place of the kept one: the new batch (the
    pending upload and its PDF are deleted), or packets.ClassScanRefused / MissingFiles (the
    pending upload is kept, updated with the choices, the new files and the new reasons)."""
    # A file given now is read whole, as on the first upload: the checks say if it is too large.
    roster_bytes = roster.read() if roster is not None else pending.roster
    template_bytes = template.read() if template is not None else pending.template
    missing = [label for label, value in (("class PDF", pdf or pending.pdf_stored), ("ROSTER.csv", roster_bytes),
                                          ("TEMPLATE.json", template_bytes)) if not value]
    upload = pdf or pending_pdf(pending)
    try:
        if missing:
            raise MissingFiles(missing)
        batch = packets.ingest_class_pdf(exam=exam, engine=engine, upload=upload, roster=bytes(roster_bytes),
                                         template=bytes(template_bytes), user=user, name=name)
    except (packets.ClassScanRefused, MissingFiles) as exc:
        _close(upload)
        problems = exc.problems if isinstance(exc, packets.ClassScanRefused) else []
        _update(pending, exam=exam, engine=engine, name=name, pdf=pdf, roster=roster, template=template,
                problems=problems)
        raise
    _close(upload)
    discard(pending)
    return batch


def _close(upload):
    source = getattr(upload, "source", None)
    if source is not None and hasattr(source, "close"):
        source.close()


def _update(pending, *, exam, engine, name, pdf, roster, template, problems):
    pending.exam, pending.engine, pending.name = exam, engine or "", (name or "")[:200]
    pending.problems = list(problems)
    _save(pending, pdf=pdf, roster=roster, template=template)


def discard(pending: PendingClassUpload) -> None:
    """Delete a pending upload and its stored PDF."""
    stored = pending.pdf_stored
    pending.delete()
    if stored:
        services.delete_files([stored])


def delete_expired(now=None) -> int:
    """Delete every pending upload past its expiry, with its PDF; how many."""
    expired = list(PendingClassUpload.objects.filter(expires__lte=now or timezone.now()))
    for pending in expired:
        discard(pending)
    return len(expired)


def _keep_at_most(user, limit):
    for pending in PendingClassUpload.objects.filter(created_by=user).order_by("-created", "-id")[limit:]:
        discard(pending)
