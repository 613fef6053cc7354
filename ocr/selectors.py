"""Read-side queries of the ocr app."""
import difflib

from django.db.models import Avg, Count, Max, Prefetch, Q, Sum

from accounts.roles import is_reviewer
from annotation.labelling.selectors import can_label

from .models import OcrRun, Page, ScanBatch, ScanFile, Transcript


def batch_list():
    return ScanBatch.objects.select_related("exam", "created_by").annotate(
        n_pages=Count("pages", distinct=True),
        n_refused=Count("files", filter=~Q(files__status=ScanFile.Status.ACCEPTED), distinct=True),
        n_verified=Count("pages", filter=Q(pages__transcript__status=Transcript.Status.VERIFIED), distinct=True),
    )


def batch_progress(batch):
    """Counts of the batch's OCR runs by status, and the share finished (done or failed)."""
    counts = OcrRun.objects.filter(page__batch=batch).aggregate(
        total=Count("pk"),
        queued=Count("pk", filter=Q(status=OcrRun.Status.QUEUED)),
        running=Count("pk", filter=Q(status=OcrRun.Status.RUNNING)),
        done=Count("pk", filter=Q(status=OcrRun.Status.DONE)),
        failed=Count("pk", filter=Q(status=OcrRun.Status.FAILED)),
    )
    finished = counts["done"] + counts["failed"]
    counts["finished"] = finished
    counts["percent"] = round(100 * finished / counts["total"]) if counts["total"] else 100
    counts["complete"] = finished == counts["total"]
    return counts


def batch_pages(batch):
    """Pages of a batch with what the batch page shows, in a fixed number of queries."""
    return (
        batch.pages.select_related("question", "transcript", "source_file")
        .prefetch_related(Prefetch("ocr_runs", queryset=OcrRun.objects.only(
            "id", "page_id", "engine", "status", "seconds", "error", "cer_edits", "cer_length"
        )))
        .annotate(open_flags=_open_flag_count())
        .order_by("-open_flags", "student_id", "question_id", "page_number", "id")
    )


def _open_flag_count():
    return Count("flags", filter=Q(flags__resolved_at__isnull=True), distinct=True)


def batch_files(batch):
    return batch.files.order_by("id")


def page_order(batch):
    """Page ids of a batch in the order the correction screen steps through them: flagged first."""
    return list(
        batch.pages.annotate(open_flags=_open_flag_count())
        .order_by("-open_flags", "student_id", "question_id", "page_number", "id")
        .values_list("pk", flat=True)
    )


def neighbours(page):
    order = page_order(page.batch)
    position = order.index(page.pk)
    previous = order[position - 1] if position > 0 else None
    following = order[position + 1] if position + 1 < len(order) else None
    return previous, following, position + 1, len(order)


def page_detail(pk):
    return Page.objects.select_related("batch__exam", "question", "response", "source_file").get(pk=pk)


def transcript_of(page):
    return Transcript.objects.select_related("updated_by", "verified_by").filter(page=page).first()


def runs_of(page):
    return list(page.ocr_runs.order_by("id"))


def display_run(page, transcript):
    """The run whose boxes the correction screen shows: the one that seeded the transcript, else the latest done."""
    runs = [run for run in runs_of(page) if run.status == OcrRun.Status.DONE]
    if transcript is not None and transcript.source_run_id:
        for run in runs:
            if run.pk == transcript.source_run_id:
                return run
    return runs[-1] if runs else None


def revisions_with_diffs(transcript):
    """Revisions newest first, each with the character diff from the one before it."""
    revisions = list(transcript.revisions.select_related("author").order_by("version", "id"))
    previous_text, rows = "", []
    for revision in revisions:
        rows.append({"revision": revision, "diff": diff_segments(previous_text, revision.text)})
        previous_text = revision.text
    return list(reversed(rows))


def diff_segments(old, new):
    """[(op, text)] with op one of equal / delete / insert, at character level (difflib)."""
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    segments = []
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            segments.append(("equal", old[a0:a1]))
            continue
        if a1 > a0:
            segments.append(("delete", old[a0:a1]))
        if b1 > b0:
            segments.append(("insert", new[b0:b1]))
    return segments


def quality_rows():
    """CER per batch and engine over verified pages: total edits / total reference characters."""
    rows = (
        OcrRun.objects.filter(cer_edits__isnull=False)
        .values("page__batch", "page__batch__name", "engine")
        .annotate(pages=Count("pk"), edits=Sum("cer_edits"), length=Sum("cer_length"),
                  seconds=Avg("seconds"), worst=Max("cer_edits"))
        .order_by("-page__batch", "engine")
    )
    return [_with_cer(row) for row in rows]


def quality_by_engine():
    rows = (
        OcrRun.objects.filter(cer_edits__isnull=False)
        .values("engine")
        .annotate(pages=Count("pk"), edits=Sum("cer_edits"), length=Sum("cer_length"), seconds=Avg("seconds"))
        .order_by("engine")
    )
    return [_with_cer(row) for row in rows]


def _with_cer(row):
    row["cer"] = row["edits"] / row["length"] if row["length"] else None
    return row


def page_cer_rows(batch):
    """Per verified page of a batch: each engine's CER (for the quality page's detail table)."""
    return (
        OcrRun.objects.filter(page__batch=batch, cer_edits__isnull=False)
        .select_related("page")
        .order_by("page__student_id", "page__page_number", "page_id", "engine")
    )


# --- scans beside labels (the labelling and adjudication screens) ----------------------------


def may_view_page_image(user, page):
    """Reviewers see every scan; an annotator only the pages of a response they may label."""
    if is_reviewer(user):
        return True
    if page.response_id is None:
        return False
    return can_label(user, page.response)


def response_scans(response):
    """The page images of a response in page order, each with its OCR word boxes in offsets of the
    response's transcript: [{"id", "number", "width", "height", "words": [[start, end, x0, y0, x1, y1], ...],
    "start", "end"}], start/end being where the page's text lies in the transcript (None if not found).

    The transcript joins the corrected text of the pages (ocr.services.write_response); each
    page's OCR words are mapped onto its corrected text by a character alignment, so a word the
    corrector changed keeps the part of its box that still matches. Pages without a finished run
    or whose text cannot be found in the transcript have no words.
    """
    pages = list(
        response.scan_pages.select_related("transcript").order_by("page_number", "id")
    )
    runs = {}
    for run in OcrRun.objects.filter(page__in=pages, status=OcrRun.Status.DONE).order_by("id"):
        runs.setdefault(run.page_id, []).append(run)
    text, cursor, scans = response.transcript, 0, []
    for page in pages:
        transcript = getattr(page, "transcript", None)
        words = []
        page_text = ((transcript.verified_text or transcript.text) if transcript else "").strip()
        at = text.find(page_text, cursor) if page_text else -1
        run = _run_for(runs.get(page.pk, []), transcript)
        if at >= 0:
            cursor = at + len(page_text)
            if run is not None:
                words = _words_on(run, page_text, at)
        scans.append(
            {"id": page.pk, "number": page.page_number, "width": page.web_width or page.width,
             "height": page.web_height or page.height, "words": words,
             "start": at if at >= 0 else None, "end": cursor if at >= 0 else None}
        )
    return scans


def page_of_span(response, start):
    """The page (id) whose text holds offset `start` of the response's transcript, and that
    text's offset; the first page (offset None) when the text cannot be placed."""
    scans = response_scans(response)
    if not scans:
        return None, None
    for scan in scans:
        if scan["start"] is not None and scan["start"] <= start <= scan["end"]:
            return scan["id"], scan["start"]
    return scans[0]["id"], None


def open_flags(page, text=""):
    """Unresolved "transcript wrong here" flags of a page, oldest first, each with `before` and
    `after`: the page text around the flagged passage when it is still at its place in `text`."""
    flags = list(page.flags.filter(resolved_at__isnull=True).select_related("flagged_by"))
    for flag in flags:
        here = flag.page_start is not None and text[flag.page_start:flag.page_end] == flag.quote
        flag.before = text[max(0, flag.page_start - 40):flag.page_start] if here else ""
        flag.after = text[flag.page_end:flag.page_end + 40] if here else ""
    return flags


def _run_for(runs, transcript):
    if transcript is not None and transcript.source_run_id:
        for run in runs:
            if run.pk == transcript.source_run_id:
                return run
    return runs[-1] if runs else None


def _words_on(run, page_text, base):
    mapping = {}
    matcher = difflib.SequenceMatcher(None, run.raw_text, page_text, autojunk=False)
    for a, b, size in matcher.get_matching_blocks():
        for k in range(size):
            mapping[a + k] = b + k
    words = []
    for token in run.tokens or []:
        box = token.get("b") if isinstance(token, dict) else None
        if not box or len(box) != 4:
            continue
        hits = [mapping[i] for i in range(token.get("o", 0), token.get("o", 0) + token.get("n", 0)) if i in mapping]
        if hits:
            words.append([base + min(hits), base + max(hits) + 1, *[round(v) for v in box]])
    return words
