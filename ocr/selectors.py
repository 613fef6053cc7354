"""Read-side queries of the ocr app."""
import difflib

from django.db.models import Avg, Count, Max, Min, Prefetch, Q, Sum
from django.utils import timezone

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
    counts["eta_seconds"] = None if counts["complete"] else _eta_seconds(batch, counts["total"] - finished)
    counts["eta_text"] = _eta_words(counts["eta_seconds"])
    return counts


def _eta_words(seconds):
    if seconds is None:
        return ""
    if seconds < 60:
        return "less than a minute left"
    if seconds < 3600:
        return f"about {round(seconds / 60)} min left"
    return f"about {seconds // 3600} h {round(seconds % 3600 / 60)} min left"


def _eta_seconds(batch, remaining):
    """Seconds until the batch's OCR is done, at the pace its pages have been finishing (all workers
    together): pages finished since the first one started, over the time that took. None before
    two pages are finished, or when none has finished for ten minutes (no worker is running)."""
    pace = OcrRun.objects.filter(page__batch=batch, finished__isnull=False, started__isnull=False).aggregate(
        n=Count("pk"), first=Min("started"), last=Max("finished")
    )
    if pace["n"] < 2 or pace["last"] <= pace["first"]:
        return None
    now = timezone.now()
    if (now - pace["last"]).total_seconds() > 600:
        return None
    per_page = (pace["last"] - pace["first"]).total_seconds() / pace["n"]
    since_last = (now - pace["last"]).total_seconds()
    return max(0, round(remaining * per_page - min(since_last, per_page)))


def batch_pages(batch):
    """Pages of a batch with what the batch page shows, in a fixed number of queries."""
    return (
        batch.pages.select_related("question", "transcript", "source_file")
        .prefetch_related(Prefetch("ocr_runs", queryset=OcrRun.objects.only(
            "id", "page_id", "engine", "status", "seconds", "error", "cer_edits", "cer_length"
        )))
        .order_by("student_id", "question_id", "page_number", "id")
    )


def batch_files(batch):
    return batch.files.order_by("id")


def page_order(batch):
    """Page ids of a batch in the order the correction screen steps through them."""
    return list(batch.pages.order_by("student_id", "question_id", "page_number", "id").values_list("pk", flat=True))


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
                  math_edits=Sum("cer_math_edits"), math_length=Sum("cer_math_length"),
                  seconds=Avg("seconds"), worst=Max("cer_edits"))
        .order_by("-page__batch", "engine")
    )
    return [_with_cer(row) for row in rows]


def quality_by_engine():
    rows = (
        OcrRun.objects.filter(cer_edits__isnull=False)
        .values("engine")
        .annotate(pages=Count("pk"), edits=Sum("cer_edits"), length=Sum("cer_length"),
                  math_edits=Sum("cer_math_edits"), math_length=Sum("cer_math_length"), seconds=Avg("seconds"))
        .order_by("engine")
    )
    return [_with_cer(row) for row in rows]


def _with_cer(row):
    """CER over the rows' pages, raw (NFKC, no whitespace) and with math markup removed too."""
    row["cer"] = row["edits"] / row["length"] if row["length"] else None
    row["cer_math"] = row["math_edits"] / row["math_length"] if row["math_length"] else None
    return row


def page_cer_rows(batch):
    """Per verified page of a batch: each engine's CER (for the quality page's detail table)."""
    return (
        OcrRun.objects.filter(page__batch=batch, cer_edits__isnull=False)
        .select_related("page")
        .order_by("page__student_id", "page__page_number", "page_id", "engine")
    )
