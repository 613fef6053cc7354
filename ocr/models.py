"""Scans and OCR: batches of uploaded files, their pages, engine runs and corrected transcripts."""
from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy

from core import stored_text

from . import redaction
from .filenames import ASSIGNMENT_NOTES


class ScanBatch(models.Model):
    """One upload of scanned answers for one exam, OCR'd with the engine chosen for it."""

    name = models.CharField(max_length=200)
    exam = models.ForeignKey("annotation.Exam", on_delete=models.PROTECT, related_name="scan_batches")
    engine = models.CharField(max_length=32, help_text=gettext_lazy("OCR engine for the pages of this batch."))
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    roster = models.JSONField(
        default=list, blank=True, help_text=gettext_lazy("Student ids in packet order (a class PDF uploaded with a roster).")
    )
    template = models.JSONField(
        default=dict, blank=True,
        help_text=gettext_lazy("The class PDF's template as read: pages_per_student and, per page of a packet, its place."),
    )

    class Meta:
        ordering = ["-created", "-id"]
        verbose_name_plural = "scan batches"

    def __str__(self):
        return self.name

    @property
    def is_class_scan(self):
        return bool(self.roster)


class ScanFile(models.Model):
    """One uploaded file, accepted or refused, and what happened to it in words a person can act on."""

    class Status(models.TextChoices):
        ACCEPTED = "accepted", gettext_lazy("Accepted")
        REFUSED = "refused", gettext_lazy("Refused")
        DUPLICATE = "duplicate", gettext_lazy("Duplicate")

    batch = models.ForeignKey(ScanBatch, on_delete=models.CASCADE, related_name="files")
    original_name = models.CharField(max_length=255)
    declared_type = models.CharField(max_length=100, blank=True)
    detected_format = models.CharField(max_length=16, blank=True)
    size = models.PositiveBigIntegerField(default=0)
    sha256 = models.CharField(max_length=64, blank=True, db_index=True)
    status = models.CharField(max_length=16, choices=Status.choices)
    message = models.TextField(blank=True)  # in English (the API, exports); pages show `message_text`
    # The message as parts rendered in the reader's language (core.stored_text); empty on rows
    # written before, which show `message` as it is.
    message_parts = models.JSONField(default=list, blank=True)
    stored = models.CharField(max_length=300, blank=True, help_text=gettext_lazy("Storage name of the original file."))
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["batch", "id"]

    def __str__(self):
        return self.original_name

    @property
    def message_text(self):
        """What happened to the file, in the reader's language."""
        return stored_text.render(self.message_parts, self.message)


class Page(models.Model):
    """One page image, attached to a student and a question, with its renditions."""

    class Status(models.TextChoices):
        PENDING = "pending", gettext_lazy("Waiting to be rendered")  # a PDF page: the worker renders it
        UPLOADED = "uploaded", gettext_lazy("Uploaded")
        PREPARED = "prepared", gettext_lazy("Prepared")
        FAILED = "failed", gettext_lazy("Failed")

    batch = models.ForeignKey(ScanBatch, on_delete=models.CASCADE, related_name="pages")
    source_file = models.ForeignKey(ScanFile, on_delete=models.CASCADE, related_name="pages")
    index_in_file = models.PositiveIntegerField(default=0)
    student_id = models.CharField(max_length=200, blank=True)
    question = models.ForeignKey(
        "annotation.Question", on_delete=models.PROTECT, null=True, blank=True, related_name="scan_pages"
    )
    page_number = models.PositiveIntegerField(default=1)
    is_cover = models.BooleanField(
        default=False, help_text=gettext_lazy("A packet's cover page: shown beside the packet, never OCR'd nor part of an answer.")
    )
    assignment_note = models.CharField(max_length=500, blank=True)
    checksum = models.CharField(
        max_length=64, unique=True, null=True, blank=True,
        help_text=gettext_lazy("SHA-256 of the oriented pixels (empty until a PDF page is rendered)."),
    )
    master = models.CharField(max_length=300, blank=True, help_text=gettext_lazy("Storage name of the oriented page (PNG)."))
    width = models.PositiveIntegerField(help_text=gettext_lazy("Pixels (a PDF page waiting to be rendered: those it will have)."))
    height = models.PositiveIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.UPLOADED)
    prepare_error = models.TextField(blank=True)
    skew_degrees = models.FloatField(null=True, blank=True)
    web = models.CharField(max_length=300, blank=True, help_text=gettext_lazy("Deskewed page shown on screen (JPEG)."))
    web_width = models.PositiveIntegerField(null=True, blank=True)
    web_height = models.PositiveIntegerField(null=True, blank=True)
    processed = models.CharField(max_length=300, blank=True, help_text=gettext_lazy("Flattened, thresholded page (PNG)."))
    thumb = models.CharField(max_length=300, blank=True)
    response = models.ForeignKey(
        "annotation.Response", on_delete=models.SET_NULL, null=True, blank=True, related_name="scan_pages"
    )
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["batch", "student_id", "question_id", "page_number", "id"]
        indexes = [models.Index(fields=["question", "student_id", "page_number"])]

    def __str__(self):
        return f"{self.student_id or '?'} / {self.question_id or '?'} p{self.page_number}"

    @property
    def is_assigned(self):
        return bool(self.student_id and self.question_id)

    @property
    def redaction_regions(self):
        """The regions of this page no engine or exported image shows: [[x0, y0, x1, y1], ...] in
        fractions of the page, from its class PDF's template by its place in the packet (the
        physical page: a page moved to another student keeps its regions); [] for other uploads."""
        batch = self.batch
        return redaction.regions_for(batch.template if batch.is_class_scan else None, self.index_in_file)

    def deskewed(self, regions):
        """`regions` (fractions of the upright form) as fractions of the page as the screens show it,
        deskewed: each on the form and at the same fractions of the straightened image, as the
        engines get them blank (redaction.deskewed_regions); what the screens hatch."""
        return redaction.deskewed_regions(regions, (self.width, self.height), self.skew_degrees or 0.0)

    @property
    def screen_redaction_regions(self):
        return self.deskewed(self.redaction_regions)

    @property
    def assignment_note_text(self):
        """Why the page has no question, in the reader's language (the note is stored in English)."""
        return stored_text.translate_known(self.assignment_note, ASSIGNMENT_NOTES)

    def place(self):
        """Where the page belongs, as stored in a packet edit's history."""
        return {"student_id": self.student_id, "question": self.question_id, "page_number": self.page_number,
                "cover": self.is_cover}


class OcrRun(models.Model):
    """One engine's reading of one page: raw text, boxes with confidences, version and time taken.

    `tokens` is a list of {"o": offset, "n": length, "c": confidence 0..1 or null,
    "b": [x0, y0, x1, y1] in pixels of the page's web rendition, or null}.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", gettext_lazy("Queued")
        RUNNING = "running", gettext_lazy("Running")
        DONE = "done", gettext_lazy("Done")
        FAILED = "failed", gettext_lazy("Failed")

    page = models.ForeignKey(Page, on_delete=models.CASCADE, related_name="ocr_runs")
    engine = models.CharField(max_length=32)
    engine_version = models.CharField(max_length=200, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED, db_index=True)
    raw_text = models.TextField(blank=True)
    tokens = models.JSONField(default=list, blank=True)
    seconds = models.FloatField(null=True, blank=True, help_text=gettext_lazy("Engine time, preprocessing excluded."))
    timings = models.JSONField(
        default=dict, blank=True, help_text=gettext_lazy("Seconds per stage of the task: render, prepare, engine, store.")
    )
    error = models.TextField(blank=True)
    cer_edits = models.PositiveIntegerField(null=True, blank=True)
    cer_length = models.PositiveIntegerField(null=True, blank=True)
    cer_math_edits = models.PositiveIntegerField(
        null=True, blank=True, help_text=gettext_lazy("Edits after math markup ($, ^, _, braces, spacing) is removed too.")
    )
    cer_math_length = models.PositiveIntegerField(null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["page", "id"]

    def __str__(self):
        return f"{self.engine} on page {self.page_id}"

    @property
    def cer(self):
        if self.cer_edits is None or not self.cer_length:
            return None
        return self.cer_edits / self.cer_length

    @property
    def cer_math(self):
        if self.cer_math_edits is None or not self.cer_math_length:
            return None
        return self.cer_math_edits / self.cer_math_length


class Transcript(models.Model):
    """The text of one page as people corrected it. `version` rises with every save."""

    class Status(models.TextChoices):
        DRAFT = "draft", gettext_lazy("Draft")
        VERIFIED = "verified", gettext_lazy("Verified")
        CHANGED = "changed", gettext_lazy("Changed since verified")

    page = models.OneToOneField(Page, on_delete=models.CASCADE, related_name="transcript")
    text = models.TextField(blank=True)
    version = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.DRAFT, db_index=True)
    source_run = models.ForeignKey(OcrRun, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    verified_text = models.TextField(blank=True)
    verified_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    verified_at = models.DateTimeField(null=True, blank=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    updated = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"transcript of page {self.page_id} v{self.version}"


class TranscriptRevision(models.Model):
    """A saved state of a transcript. Autosaves by one person in a row are merged into one."""

    class Kind(models.TextChoices):
        OCR = "ocr", gettext_lazy("OCR output")
        AUTOSAVE = "autosave", gettext_lazy("Autosave")
        SAVE = "save", gettext_lazy("Save")
        VERIFY = "verify", gettext_lazy("Verified")

    transcript = models.ForeignKey(Transcript, on_delete=models.CASCADE, related_name="revisions")
    version = models.PositiveIntegerField()
    text = models.TextField(blank=True)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["transcript", "-version", "-id"]

    def __str__(self):
        return f"v{self.version} of {self.transcript_id}"


class PacketEdit(models.Model):
    """One change to where pages of a batch belong (moved, swapped, a packet given to another student).

    `changes` lists each page touched: {"page", "pdf_page", "before": place, "after": place}, a place
    being {student_id, question, page_number, cover}; `responses` says what happened to the
    responses the pages made.
    """

    class Action(models.TextChoices):
        MOVE = "move", gettext_lazy("Page moved")
        SWAP = "swap", gettext_lazy("Pages swapped")
        PACKET = "packet", gettext_lazy("Packet reassigned")
        ASSIGN = "assign", gettext_lazy("Assignments saved")

    batch = models.ForeignKey(ScanBatch, on_delete=models.CASCADE, related_name="packet_edits")
    action = models.CharField(max_length=16, choices=Action.choices)
    summary = models.CharField(max_length=500)  # in English; pages show `summary_text`
    summary_parts = models.JSONField(default=list, blank=True)  # as ScanFile.message_parts
    changes = models.JSONField(default=list)
    responses = models.JSONField(default=list, blank=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self):
        return self.summary

    @property
    def summary_text(self):
        """The fix in the reader's language."""
        return stored_text.render(self.summary_parts, self.summary)

    @property
    def response_notes(self):
        """`responses` with each note's `what` in the reader's language."""
        return [{**note, "what": response_note_text(note)} for note in self.responses]


def response_note_text(note) -> str:
    """What a packet fix did to a response, in the reader's language (older notes: their English)."""
    return stored_text.render(note.get("what_parts"), note.get("what", ""))


class TranscriptFlag(models.Model):
    """"Transcript wrong here": a labeller's note on a passage of a response's transcript, sent
    back to the correction queue. The span is kept in the response's transcript and in the page's
    text as they were when flagged; verifying the page again resolves the flag."""

    response = models.ForeignKey("annotation.Response", on_delete=models.CASCADE, related_name="transcript_flags")
    page = models.ForeignKey(Page, on_delete=models.CASCADE, related_name="flags")
    start = models.PositiveIntegerField(help_text=gettext_lazy("Span start in the response's transcript."))
    end = models.PositiveIntegerField()
    quote = models.TextField(blank=True)
    page_start = models.PositiveIntegerField(null=True, blank=True, help_text=gettext_lazy("The span in the page's text, if found."))
    page_end = models.PositiveIntegerField(null=True, blank=True)
    note = models.TextField(blank=True)
    flagged_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    created = models.DateTimeField(auto_now_add=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    resolved_at = models.DateTimeField(null=True, blank=True, db_index=True)

    class Meta:
        ordering = ["page", "created", "id"]

    def __str__(self):
        return f"flag on page {self.page_id} [{self.start}:{self.end}]"


class PendingClassUpload(models.Model):
    """A class PDF, roster and template that were refused, kept so their uploader can try again
    (another exam, one file replaced) without choosing all three again (`ocr.class_uploads`).

    Only its uploader sees it; it is deleted, with its stored PDF, once a retry is taken, when its
    uploader discards it, or `expires` has passed (`ocr.delete_expired_class_uploads`, hourly)."""

    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    created = models.DateTimeField(auto_now_add=True)
    expires = models.DateTimeField(db_index=True)
    exam = models.ForeignKey("annotation.Exam", on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
                             help_text=gettext_lazy("The exam last tried."))
    engine = models.CharField(max_length=32, blank=True)
    name = models.CharField(max_length=200, blank=True)
    pdf_name = models.CharField(max_length=255, blank=True)
    pdf_type = models.CharField(max_length=100, blank=True)
    pdf_size = models.PositiveBigIntegerField(default=0)
    pdf_stored = models.CharField(max_length=300, blank=True, help_text=gettext_lazy("Storage name of the kept PDF."))
    roster_name = models.CharField(max_length=255, blank=True)
    roster = models.BinaryField(null=True, blank=True)
    template_name = models.CharField(max_length=255, blank=True)
    template = models.BinaryField(null=True, blank=True)
    problems = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self):
        return self.pdf_name or f"pending class upload #{self.pk}"
