"""Read-side queries of the ocr app."""
import difflib
import json
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.db.models import Avg, Count, Max, Min, Prefetch, Q, QuerySet, Sum
from django.db.models.functions import Lower, Trim
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext as _

from accounts.roles import is_reviewer
from annotation.labelling.selectors import can_label
from annotation.models import Exam, Question, Response

from . import class_templates
from .models import OcrRun, PacketEdit, Page, PendingClassUpload, ScanBatch, ScanFile, Transcript, TranscriptFlag


def batch_list() -> QuerySet[ScanBatch]:
    return ScanBatch.objects.select_related("exam", "created_by").annotate(
        n_pages=Count("pages", distinct=True),
        n_refused=Count("files", filter=~Q(files__status=ScanFile.Status.ACCEPTED), distinct=True),
        n_verified=Count("pages", filter=Q(pages__transcript__status=Transcript.Status.VERIFIED), distinct=True),
    )


def batch_progress(batch: ScanBatch) -> dict[str, Any]:
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
    counts["stalled"] = False
    if not counts["complete"]:
        quiet = _quiet_seconds(batch)
        if quiet is not None and quiet > STALLED_AFTER_SECONDS:
            # No "less than a minute left" while nothing moves: say what is happening instead.
            counts.update(stalled=True, eta_seconds=None, eta_text=_(
                "no page has finished for %(quiet)s min: if a worker stopped, the pages it held are taken over "
                "automatically %(after)s min after they started") % {
                    "quiet": round(quiet / 60), "after": round(stuck_after_seconds() / 60)})
    return counts


STALLED_AFTER_SECONDS = 120  # no page finished (nor started) for this long, with pages left


def stuck_after_seconds():
    """How long a page may run before its worker counts as gone (ocr.services takes it over then)."""
    return 2 * settings.OCR_ENGINE_TIMEOUT + 60


def _quiet_seconds(batch):
    """Seconds since the batch's OCR last moved (a page finished or started, or the batch was made)."""
    moved = OcrRun.objects.filter(page__batch=batch).aggregate(finished=Max("finished"), started=Max("started"),
                                                                created=Max("created"))
    last = max(filter(None, moved.values()), default=None)
    return None if last is None else (timezone.now() - last).total_seconds()


def _eta_words(seconds):
    if seconds is None:
        return ""
    if seconds < 60:
        return gettext("less than a minute left")
    if seconds < 3600:
        return gettext("about %(minutes)s min left") % {"minutes": round(seconds / 60)}
    return gettext("about %(hours)s h %(minutes)s min left") % {"hours": seconds // 3600, "minutes": round(seconds % 3600 / 60)}


def _eta_seconds(batch, remaining):
    """Seconds until the batch's OCR is done, at the pace its pages have been finishing (all workers
    together): pages finished since the first one started, over the time that took. None before
    two pages are finished, or when none has finished for ten minutes (no worker is running)."""
    finished = OcrRun.objects.filter(page__batch=batch, status__in=[OcrRun.Status.DONE, OcrRun.Status.FAILED],
                                     finished__isnull=False, started__isnull=False)
    pace = finished.aggregate(
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


def batch_pages(batch: ScanBatch) -> QuerySet[Page]:
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


def batch_files(batch: ScanBatch) -> QuerySet[ScanFile]:
    return batch.files.order_by("id")


def page_order(batch: ScanBatch) -> list[int]:
    """Page ids of a batch in the order the correction screen steps through them: flagged first."""
    return list(
        batch.pages.annotate(open_flags=_open_flag_count())
        .order_by("-open_flags", "student_id", "question_id", "page_number", "id")
        .values_list("pk", flat=True)
    )


def neighbours(page: Page) -> tuple[int | None, int | None, int, int]:
    order = page_order(page.batch)
    position = order.index(page.pk)
    previous = order[position - 1] if position > 0 else None
    following = order[position + 1] if position + 1 < len(order) else None
    return previous, following, position + 1, len(order)


def answer_page_count(page: Page) -> int:
    """How many pages the answer of `page` has (its student and question; covers and unassigned
    pages are an answer of one page): the correction page says "page 1 of 2 of this answer"."""
    if page.is_cover or not page.student_id or page.question_id is None:
        return 1
    return Page.objects.filter(student_id=page.student_id, question_id=page.question_id, is_cover=False).count()


def page_detail(pk: int) -> Page:
    return Page.objects.select_related("batch__exam", "question", "response", "source_file").get(pk=pk)


def transcript_of(page: Page) -> Transcript | None:
    return Transcript.objects.select_related("updated_by", "verified_by").filter(page=page).first()


def runs_of(page: Page) -> list[OcrRun]:
    return list(page.ocr_runs.order_by("id"))


def display_run(page: Page, transcript: Transcript | None) -> OcrRun | None:
    """The run whose boxes the correction screen shows: the one that seeded the transcript, else the latest done."""
    runs = [run for run in runs_of(page) if run.status == OcrRun.Status.DONE]
    if transcript is not None and transcript.source_run_id:
        for run in runs:
            if run.pk == transcript.source_run_id:
                return run
    return runs[-1] if runs else None


def revisions_with_diffs(transcript: Transcript) -> list[dict[str, Any]]:
    """Revisions newest first, each with the character diff from the one before it."""
    revisions = list(transcript.revisions.select_related("author").order_by("version", "id"))
    previous_text, rows = "", []
    for revision in revisions:
        rows.append({"revision": revision, "diff": diff_segments(previous_text, revision.text)})
        previous_text = revision.text
    return list(reversed(rows))


def diff_segments(old: str, new: str) -> list[tuple[str, str]]:
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


def quality_rows() -> list[dict[str, Any]]:
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


def quality_by_engine() -> list[dict[str, Any]]:
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


def page_cer_rows(batch: ScanBatch) -> QuerySet[OcrRun]:
    """Per verified page of a batch: each engine's CER (for the quality page's detail table)."""
    return (
        OcrRun.objects.filter(page__batch=batch, cer_edits__isnull=False)
        .select_related("page")
        .order_by("page__student_id", "page__page_number", "page_id", "engine")
    )


# --- a batch's answers and packets --------------------------------------------------------------

ANSWER_STATES = ("OCR", "corrected", "verified", "assigned", "labelled")


def batch_answers(batch: ScanBatch) -> list[dict[str, Any]]:
    """The answers (student x question) the batch's pages make, each with its state, in four queries.

    State, the furthest reached: OCR (pages read, nobody corrected them yet), corrected (a
    person saved a page), verified (every page verified: the response is ready), assigned
    (labels asked for), labelled (every label asked for is submitted).
    """
    pages = list(
        batch.pages.filter(is_cover=False, question__isnull=False).exclude(student_id="")
        .select_related("transcript", "question")
        .annotate(n_read=Count("ocr_runs", filter=Q(ocr_runs__status=OcrRun.Status.DONE)))
        .order_by("student_id", "question__location", "question_id", "page_number", "id")
    )
    answers = {}
    for page in pages:
        answer = answers.setdefault((page.student_id, page.question_id), {
            "student_id": page.student_id, "question": page.question, "pages": [], "response_id": None,
        })
        answer["pages"].append(page)
        answer["response_id"] = answer["response_id"] or page.response_id
    responses = _response_progress({a["response_id"] for a in answers.values() if a["response_id"]})
    rows = [_answer_state(answer, responses.get(answer["response_id"])) for answer in answers.values()]
    return rows


def _response_progress(response_ids):
    return Response.objects.filter(pk__in=response_ids).annotate(
        n_assigned=Count("assignments", distinct=True),
        n_completed=Count("assignments", filter=Q(assignments__completed_at__isnull=False), distinct=True),
        n_labels=Count("labels", filter=Q(labels__submitted=True, labels__is_imported=False),
                       distinct=True),
    ).in_bulk()


def _answer_state(answer, response):
    pages = answer["pages"]
    transcripts = [getattr(page, "transcript", None) for page in pages]
    verified = sum(1 for t in transcripts if t is not None and t.status == Transcript.Status.VERIFIED)
    corrected = any(t is not None and (t.updated_by_id or t.status != Transcript.Status.DRAFT) for t in transcripts)
    answer.update(
        n_pages=len(pages), n_read=sum(1 for page in pages if page.n_read), n_verified=verified, response=response,
        n_assigned=getattr(response, "n_assigned", 0), n_completed=getattr(response, "n_completed", 0),
        n_labels=getattr(response, "n_labels", 0),
    )
    if answer["n_assigned"] and answer["n_completed"] >= answer["n_assigned"]:
        state = "labelled"
    elif answer["n_assigned"]:
        state = "assigned"
    elif response is not None and verified == len(pages):
        state = "verified"
    elif corrected:
        state = "corrected"
    else:
        state = "OCR"
    answer["state"] = state
    return answer


def answer_state_counts(answers: Iterable[dict[str, Any]]) -> dict[str, int]:
    counts = dict.fromkeys(ANSWER_STATES, 0)
    for answer in answers:
        counts[answer["state"]] += 1
    return counts


def batch_packets(batch: ScanBatch) -> list[dict[str, Any]]:
    """The batch's pages by student (roster order first), each packet in scan order, for the fix screen."""
    pages = list(
        batch.pages.select_related("question", "transcript", "source_file")
        .order_by("source_file_id", "index_in_file", "id")
    )
    order = {student: position for position, student in enumerate(batch.roster or [])}
    packets = {}
    for page in pages:
        packets.setdefault(page.student_id, []).append(page)
    ordered = sorted(packets.items(), key=lambda item: (item[0] not in order, order.get(item[0], 0), item[0]))
    return [{"student_id": student, "pages": members, "in_roster": student in order} for student, members in ordered]


def packet_edits(batch: ScanBatch, limit: int = 100) -> list[PacketEdit]:
    """The batch's packet fixes, newest first, each change put in words (student, question label, page)."""
    edits = list(batch.packet_edits.select_related("user")[:limit])
    labels = dict(batch.exam.questions.values_list("pk", "location"))
    for edit in edits:
        edit.rows = [
            {"page": change["page"], "pdf_page": change.get("pdf_page"),
             "before": _place_words(change["before"], labels), "after": _place_words(change["after"], labels)}
            for change in edit.changes
        ]
    return edits


def _place_words(place, labels):
    """A place of a packet fix's history in the reader's language (its words are the page's)."""
    student = place.get("student_id") or "?"
    if place.get("cover"):
        return gettext("%(student)s, cover") % {"student": student}
    if not place.get("question"):
        return gettext("%(student)s, no question") % {"student": student}
    label = labels.get(place["question"]) or f"#{place['question']}"
    return gettext("%(student)s, %(question)s p%(page)s") % {"student": student, "question": label,
                                                             "page": place["page_number"]}


def batches_with_exam() -> QuerySet[ScanBatch]:
    """Batches with their exam and uploader: what the batch pages look one up in."""
    return ScanBatch.objects.select_related("exam", "created_by")


def exam_questions(batch: ScanBatch) -> list[Question]:
    """The questions of the batch's exam by location, for the pickers of its pages."""
    return list(batch.exam.questions.order_by("location", "id").only("id", "location", "statement"))


def pages_with_context() -> QuerySet[Page]:
    """Pages with their batch, question and response: what the history page looks one up in."""
    return Page.objects.select_related("batch", "question", "response")


def page_renditions() -> QuerySet[Page]:
    """Pages with only their image files, status and response, and what says whether and where an
    annotator's copy is blanked (the batch's template and exam, the page's place, size and skew):
    what the image view looks one up in."""
    return Page.objects.select_related("batch__exam").only(
        "id", "web", "thumb", "processed", "master", "status", "response_id", "index_in_file", "width", "height",
        "skew_degrees", "batch__roster", "batch__template", "batch__exam__blind",
    )


def redacted_for(user, page: Page) -> bool:
    """Whether `user` gets the page's images with its redaction regions blanked: an annotator (not a
    reviewer) on a blind exam. Reviewers and admins, who check and fix packets, see the scan whole."""
    return not is_reviewer(user) and page.batch.exam.blind and bool(page.redaction_regions)


def scan_batch(pk: int) -> ScanBatch | None:
    return ScanBatch.objects.select_related("exam").filter(pk=pk).first()


def scan_batches_to_assign() -> QuerySet[ScanBatch]:
    """Batches whose pages made at least one response (for the Assign page's batch choice)."""
    return (
        ScanBatch.objects.filter(pages__response__isnull=False).distinct()
        .select_related("exam").only("id", "name", "exam__name").order_by("-created", "-id")
    )


def answers_waiting(batch: ScanBatch, question: Question | None = None) -> int:
    """How many of the batch's answers (to `question`) are not verified yet: left out when it is assigned."""
    return sum(1 for answer in batch_answers(batch) if answer["state"] in ("OCR", "corrected")
               and (question is None or answer["question"].pk == question.pk))


# --- scans beside labels (the labelling and adjudication screens) ----------------------------


def may_view_page_image(user, page: Page) -> bool:
    """Reviewers see every scan; an annotator only the pages of a response they may label."""
    if is_reviewer(user):
        return True
    if page.response_id is None:
        return False
    return can_label(user, page.response)


def response_scans(response: Response) -> list[dict[str, Any]]:
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


def page_of_span(response: Response, start: int) -> tuple[int | None, int | None]:
    """The page (id) whose text holds offset `start` of the response's transcript, and that
    text's offset; the first page (offset None) when the text cannot be placed."""
    scans = response_scans(response)
    if not scans:
        return None, None
    for scan in scans:
        if scan["start"] is not None and scan["start"] <= start <= scan["end"]:
            return scan["id"], scan["start"]
    return scans[0]["id"], None


def open_flags(page: Page, text: str = "") -> list[TranscriptFlag]:
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


# --- a refused class PDF kept for another try (ocr.class_uploads) -----------------------------

def pending_class_uploads(user) -> QuerySet[PendingClassUpload]:
    """The uploader's own unexpired pending uploads, newest first."""
    return PendingClassUpload.objects.select_related("exam").filter(created_by=user, expires__gt=timezone.now())


def template_labels(template: bytes | None) -> list[str]:
    """The question labels a TEMPLATE.json names (not "+", covers or numbers like q12), in page
    order, each once; [] when the file cannot be read (its refusal says why)."""
    try:
        document = json.loads(bytes(template or b"").decode("utf-8-sig"))
    except (ValueError, RecursionError):
        return []
    pages = document.get("pages") if isinstance(document, dict) else None
    if not isinstance(pages, dict):
        return []
    labels = []
    for value in pages.values():
        if isinstance(value, str) and value.strip() and value.strip() != class_templates.CONTINUES:
            label = value.strip()
            if label.lower() not in {known.lower() for known in labels}:
                labels.append(label)
    return labels


MAX_SUGGESTED_EXAMS = 5


def exams_for_template(template: bytes | None, *, tried=None) -> dict[str, Any]:
    """Which exams hold the template's question labels: {"exams": [exams the whole template reads
    against, other than `tried`], "labels": [{label, exams: [names of exams holding it]}]} (two
    queries, then one per exam that holds every label, to read the template against it)."""
    labels = template_labels(template)
    lowered = {label.lower(): label for label in labels}
    holders: dict[str, dict[int, str]] = {label: {} for label in labels}
    if lowered:
        rows = (Question.objects.annotate(label=Lower(Trim("location"))).filter(label__in=lowered)
                .values_list("label", "exam_id", "exam__name").distinct())
        for label, exam_id, exam_name in rows:
            holders[lowered[label]][exam_id] = exam_name
    covering = set.intersection(*(set(found) for found in holders.values())) if holders else set()
    if tried is not None:
        covering.discard(tried.pk)
    exams = []
    for exam in Exam.objects.filter(pk__in=covering).order_by("name")[:MAX_SUGGESTED_EXAMS]:
        try:
            class_templates.read_template(bytes(template), exam)
        except class_templates.LayoutError:
            continue  # a label names two questions there, or the template has another problem
        exams.append(exam)
    return {
        "exams": exams,
        "labels": [{"label": label, "exams": sorted(holders[label].values())} for label in labels],
    }
