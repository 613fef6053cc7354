"""Writes for a class's packets: ingesting one PDF with a roster and a template, and fixing packets.

A class PDF is refused whole or taken whole: the roster, the template and the PDF are all
checked before the batch is created, and the batch, its file and its pages are created in one
transaction (the stored PDF is removed again if that transaction fails). The PDF's pages are
not rendered here: they wait as `pending` and each page's task renders its page
(`services.render_pending_page`); cover pages are rendered for their thumbnail only.

Fixing a mis-scanned packet moves pages between students and questions. Each fix is one
transaction that also rewrites the responses the pages make and leaves a `PacketEdit` naming
who, when and what (`ocr.models.PacketEdit`).
"""
import hashlib
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils.translation import gettext
from django.utils.translation import gettext_noop as N

from annotation.models import Exam, Response
from annotation.transcripts import TranscriptConflict, move_response, release_response
from core.stored_text import english, part

from . import class_templates, imaging, services, tasks
from .engines import get_engine
from .models import OcrRun, PacketEdit, Page, ScanBatch, ScanFile, Transcript


class ClassScanRefused(Exception):
    """A class PDF that cannot be ingested as asked; `problems` are sentences a person can act on."""

    def __init__(self, problems):
        self.problems = list(problems)
        super().__init__(" ".join(self.problems))


class PacketError(Exception):
    """A packet fix that cannot be done as asked; nothing was changed."""


# --- a class's PDF -------------------------------------------------------------------------------

def ingest_class_pdf(
    *, exam: Exam, engine: str, upload: services.Upload, roster: bytes, template: bytes, user=None, name: str = ""
) -> ScanBatch:
    """Check a class PDF against its roster and template, then store it as one batch; the batch.

    `upload` is a services.Upload of the PDF; `roster` and `template` are the bytes of
    ROSTER.csv and TEMPLATE.json. Raises ClassScanRefused with every problem found; then
    nothing is stored.
    """
    try:
        get_engine(engine)
    except KeyError as exc:
        raise ClassScanRefused([str(exc).strip("'\"")]) from exc
    try:
        plan = class_templates.read_layout(roster, template, exam)
    except class_templates.LayoutError as exc:
        raise ClassScanRefused(exc.problems) from exc
    plans, data = _checked_pdf(upload, plan)
    written = []
    try:
        with transaction.atomic():
            batch = services.create_batch(exam=exam, engine=engine, user=user, name=name)
            batch.roster, batch.template = plan.students, plan.template
            batch.save(update_fields=["roster", "template"])
            scan_file = _record_class_file(batch, upload, data, plan)
            scan_file.stored = services.store_file(f"ocr/originals/{batch.pk}/{scan_file.pk}", data, written)
            scan_file.save(update_fields=["stored"])
            pages = Page.objects.bulk_create(_class_page(batch, scan_file, plan, p) for p in plans)
            services.queue_ocr([page for page in pages if not page.is_cover], engine)
            _render_on_commit([page.pk for page in pages if page.is_cover])
    except BaseException:
        services.delete_files(written)
        raise
    return batch


def _checked_pdf(upload, plan):
    """The PDF's page plans and bytes, or ClassScanRefused (not a PDF, too big, wrong page count, stored before)."""
    limit = settings.OCR_MAX_CLASS_PDF_BYTES
    try:
        if upload.size > limit:
            imaging.refuse_size(upload.size, limit)
        data = upload.read()
        if not data:
            raise imaging.UploadRefused(gettext("The file is empty (0 bytes)."))
        kind = imaging.sniff(data)
        if kind != "pdf":
            raise imaging.UploadRefused(gettext("A class scan must be one PDF; this file is %(describe_kind)s.") % {"describe_kind": imaging.describe_kind(kind)})
        if len(data) > limit:
            imaging.refuse_size(len(data), limit)
        plans = imaging.inspect_pdf(data, max_pages=settings.OCR_MAX_CLASS_PDF_PAGES)
        plan.check_page_count(len(plans))
    except imaging.UploadRefused as exc:
        raise ClassScanRefused([f"{upload.name}: {exc}"]) from exc
    except class_templates.LayoutError as exc:
        raise ClassScanRefused(exc.problems) from exc
    earlier = ScanFile.objects.filter(
        sha256=hashlib.sha256(data).hexdigest(), status=ScanFile.Status.ACCEPTED
    ).select_related("batch").first()
    if earlier is not None:
        raise ClassScanRefused([
            gettext("%(name)s was already uploaded, as batch #%(batch_id)s “%(name2)s”; fix its packets there instead of uploading it again.") % {"name": upload.name, "batch_id": earlier.batch_id, "name2": earlier.batch.name}
        ])
    return plans, data


def _record_class_file(batch, upload, data, plan):
    notes = [
        part(N("Accepted: %(packets)s packets of %(pages_per_student)s pages (%(pages)s pages), cut by the roster "
               "and the template."), packets=len(plan.students), pages_per_student=plan.pages_per_student,
             pages=plan.expected_pages),
        part(N("Each page is rendered when its task runs.")),
    ]
    return ScanFile.objects.create(
        batch=batch,
        original_name=(upload.name or "class.pdf")[:255],
        declared_type=(upload.declared_type or "")[:100],
        detected_format="pdf",
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        status=ScanFile.Status.ACCEPTED,
        message=english(notes),
        message_parts=notes,
    )


def _class_page(batch, scan_file, plan, pdf_plan):
    student, place = plan.place_of(pdf_plan.index)
    return Page(
        batch=batch, source_file=scan_file, index_in_file=pdf_plan.index, status=Page.Status.PENDING,
        checksum=None, master="", width=pdf_plan.width, height=pdf_plan.height,
        student_id=student, question_id=place.question_id, page_number=place.page_number,
        is_cover=place.cover, assignment_note=pdf_plan.note[:500],
    )


def _render_on_commit(page_ids):
    def send():  # the queue comes from CELERY_TASK_ROUTES (OCR_QUEUE)
        for page_id in page_ids:
            tasks.render_page_task.delay(page_id)

    if page_ids:
        transaction.on_commit(send)


def render_without_ocr(page_id: int) -> Page | None:
    """Render and prepare a page that is not OCR'd (a cover), for its thumbnail and screen image."""
    page = Page.objects.select_related("source_file").filter(pk=page_id).first()
    if page is None or page.status == Page.Status.PREPARED:
        return page
    try:
        page = services.render_pending_page(page)
        services.prepare_stored_page(page)
    except imaging.UploadRefused:
        return page  # the reason is on the page (prepare_error); a cover is not needed to go on
    return page


# --- fixing packets ------------------------------------------------------------------------------

def move_page(
    page: Page, *, student_id: str, question_id: int | None = None, page_number: int | None = None,
    cover: bool = False, user=None,
) -> PacketEdit:
    """Put one page elsewhere: another student, question and page number, or make it a cover page.

    Without a page number the page goes after the answer's other pages; with one, it is put there
    and the pages from there on move down one.
    """
    student_id = (student_id or "").strip()[:class_templates.MAX_STUDENT_ID]
    if not student_id:
        raise PacketError(gettext("Give the student the page belongs to."))
    if cover:
        question_id = None
    elif question_id is None:
        raise PacketError(gettext("Choose the question the page answers, or mark it as a cover page."))
    _check_questions(page.batch, [question_id])
    target = {"student_id": student_id, "question": question_id, "cover": cover, "page_number": page_number}
    summary = part(N("Page %(page)s moved to %(place)s"), page=[_page_name(page)], place=[_place_words(target, page.batch)])
    return _apply(page.batch, {page.pk: target}, PacketEdit.Action.MOVE, summary, user)


def swap_pages(first: Page, second: Page, *, user=None) -> PacketEdit:
    """Exchange the places (student, question, page number, cover) of two pages of a batch."""
    if first.pk == second.pk:
        raise PacketError(gettext("Choose two different pages to swap."))
    if first.batch_id != second.batch_id:
        raise PacketError(gettext("Both pages must belong to this batch."))
    targets = {first.pk: _fixed(second.place()), second.pk: _fixed(first.place())}
    summary = part(N("Pages %(first)s and %(second)s swapped"), first=[_page_name(first)], second=[_page_name(second)])
    return _apply(first.batch, targets, PacketEdit.Action.SWAP, summary, user)


def reassign_packet(batch: ScanBatch, *, student_id: str, to_student_id: str, user=None) -> PacketEdit:
    """Give every page of one student's packet in this batch to another student id.

    When that student already has pages in the batch, the two packets change places (a roster
    in the wrong order is fixed by swapping packets).
    """
    to_student_id = (to_student_id or "").strip()[:class_templates.MAX_STUDENT_ID]
    if not to_student_id:
        raise PacketError(gettext("Give the student id the packet belongs to."))
    if to_student_id == student_id:
        raise PacketError(gettext("The packet already belongs to that student."))
    pages = list(batch.pages.filter(student_id=student_id))
    if not pages:
        raise PacketError(gettext("No page of this batch belongs to student %(student_id)s.") % {"student_id": student_id})
    others = list(batch.pages.filter(student_id=to_student_id))
    targets = {page.pk: _fixed({**page.place(), "student_id": to_student_id}) for page in pages}
    targets.update({page.pk: _fixed({**page.place(), "student_id": student_id}) for page in others})
    summary = part(N("Packet of %(student)s (%(n)s pages) swapped with %(other)s") if others
                   else N("Packet of %(student)s (%(n)s pages) given to %(other)s"),
                   student=student_id, n=len(pages), other=to_student_id)
    return _apply(batch, targets, PacketEdit.Action.PACKET, summary, user)


def assign_pages(batch: ScanBatch, rows: list[dict[str, Any]], *, user=None) -> PacketEdit | None:
    """The batch page's assignment form: rows of {page, student_id, question, page_number}, kept as given.

    Pages whose place does not change are left alone. Returns the PacketEdit, or None when
    nothing changed.
    """
    pages = {page.pk: page for page in batch.pages.filter(pk__in=[row["page"] for row in rows])}
    _check_questions(batch, [row.get("question") for row in rows])
    targets = {}
    for row in rows:
        page = pages.get(row["page"])
        if page is None:
            continue
        target = {"student_id": (row.get("student_id") or "").strip()[:class_templates.MAX_STUDENT_ID],
                  "question": row.get("question"), "cover": page.is_cover and row.get("question") is None,
                  "page_number": max(1, int(row.get("page_number") or 1)), "keep_number": True}
        if {**page.place(), "keep_number": True} != target:
            targets[page.pk] = target
    if not targets:
        return None
    summary = part(N("Assignments of %(n)s page(s) saved on the batch page"), n=len(targets))
    return _apply(batch, targets, PacketEdit.Action.ASSIGN, summary, user)


def _fixed(place):
    """A target place whose page number is taken as it is (a swap), not used as an insertion point."""
    return {**place, "keep_number": True}


def _check_questions(batch, question_ids):
    wanted = {pk for pk in question_ids if pk is not None}
    known = set(batch.exam.questions.filter(pk__in=wanted).values_list("pk", flat=True))
    unknown = sorted(wanted - known)
    if unknown:
        raise PacketError(gettext("Question #%(unknown)s is not in exam “%(name)s”.") % {"unknown": unknown[0], "name": batch.exam.name})


def _pdf_page(page):
    """The page's number in its PDF (as a scanner's viewer shows it), or None for an image file."""
    return page.index_in_file + 1 if page.source_file.detected_format == "pdf" else None


def _page_name(page):
    """A page as the history names it (a core.stored_text part)."""
    number = _pdf_page(page)
    return part(N("PDF p. %(number)s (#%(pk)s)"), number=number, pk=page.pk) if number else part("#%(pk)s", pk=page.pk)


def _place_words(place, batch):
    if place.get("cover"):
        return part(N("%(student)s, cover page"), student=place["student_id"])
    location = batch.exam.questions.filter(pk=place["question"]).values_list("location", flat=True).first()
    question = location or f"#{place['question']}"
    if place.get("page_number"):
        return part(N("%(student)s, question %(question)s page %(page)s"), student=place["student_id"],
                    question=question, page=place["page_number"])
    return part(N("%(student)s, question %(question)s"), student=place["student_id"], question=question)


def _apply(batch, targets, action, summary, user):
    """Move pages to their target places, renumber the answers touched, rewrite their responses, record it."""
    try:
        with transaction.atomic():
            pages = {p.pk: p for p in Page.objects.select_for_update(of=("self",)).select_related("source_file")
                     .filter(pk__in=targets)}
            before = {pk: page.place() for pk, page in pages.items()}
            old_responses = _pages_of_responses({page.response_id for page in pages.values() if page.response_id})
            for pk, page in pages.items():
                _place_page(page, targets[pk])
            changed = _renumber(pages, before, targets)
            Page.objects.bulk_update(changed, ["student_id", "question", "page_number", "is_cover", "response",
                                               "assignment_note"])
            keys = {_key(place) for place in before.values()} | {_key(page.place()) for page in pages.values()}
            notes = _rewrite_responses(keys, old_responses, user, english(summary))
            _queue_new_answers(batch, pages.values())
            changes = [{"page": pk, "pdf_page": _pdf_page(pages[pk]), "before": before[pk], "after": pages[pk].place()}
                       for pk in sorted(pages)]
            return PacketEdit.objects.create(batch=batch, action=action, summary=english(summary)[:500],
                                             summary_parts=[summary], changes=changes, responses=notes, user=user)
    except TranscriptConflict as exc:
        raise PacketError(gettext("Nothing was changed: %(exc)s") % {"exc": exc}) from exc


def _key(place):
    """The answer a place belongs to: (student, question); covers and unassigned pages belong to none."""
    if place.get("cover") or place.get("question") is None or not place.get("student_id"):
        return None
    return place["student_id"], place["question"]


def _place_page(page, target):
    if (page.student_id, page.question_id) != (target["student_id"], target.get("question")):
        page.response_id = None  # _rewrite_responses gives it the response of where it went
    page.student_id = target["student_id"]
    page.question_id = None if target.get("cover") else target.get("question")
    page.is_cover = bool(target.get("cover"))
    page.assignment_note = ""
    if target.get("keep_number"):
        page.page_number = target.get("page_number") or 1
    if page.is_cover:
        page.page_number = 1


def _renumber(pages, before, targets):
    """Insert each page moved without `keep_number` where it was asked to (else after the answer's
    other pages) and number the pages of the answers it left and joined 1, 2, ... in order.
    Swaps and the batch page's form keep the numbers they give. Returns the pages to save."""
    changed = dict(pages)
    inserted = [page for pk, page in sorted(pages.items()) if not targets[pk].get("keep_number")]
    keys = {_key(before[page.pk]) for page in inserted} | {_key(page.place()) for page in inserted}
    for key in filter(None, keys):
        joining = [page for page in inserted if _key(page.place()) == key]
        staying = [p for p in Page.objects.filter(student_id=key[0], question_id=key[1]).order_by("page_number", "id")
                   if p.pk not in pages]
        staying += [page for page in pages.values() if page not in inserted and _key(page.place()) == key]
        ordered = sorted(staying, key=lambda p: (p.page_number, p.pk))
        for page in joining:
            position = targets[page.pk].get("page_number") or len(ordered) + 1
            ordered.insert(max(0, min(len(ordered), int(position) - 1)), page)
        for number, page in enumerate(ordered, start=1):
            if page.page_number != number or page.pk in pages:
                page.page_number = number
                changed[page.pk] = page
    return list(changed.values())


def _pages_of_responses(response_ids):
    """{response id: set of page ids} of the responses the moved pages fed, before the move."""
    pages = {}
    for page_id, response_id in Page.objects.filter(response_id__in=response_ids).values_list("pk", "response_id"):
        pages.setdefault(response_id, set()).add(page_id)
    return pages


def _rewrite_responses(keys, old_responses, user, summary):
    """Responses follow their pages when they moved whole; the answers touched are written again; a
    response left without pages is released. Returns what happened, for the edit's history."""
    notes, followed, moving = [], set(), []
    groups = {key: list(Page.objects.filter(student_id=key[0], question_id=key[1]).select_related("transcript")
                        .order_by("page_number", "id")) for key in filter(None, keys)}
    responses = Response.objects.in_bulk(old_responses)
    for response_id, page_ids in old_responses.items():
        response = responses.get(response_id)
        key = _whole_group(page_ids, groups)
        if response is not None and key is not None and key[1] == response.question_id and key[0] != response.student_id:
            moving.append((response, key, page_ids))
    # Two answers that change students (a swap) may hold the same text: park them first, so that
    # neither meets the other under the one-text-per-student rule on the way.
    for response, _, _ in moving:
        Response.objects.filter(pk=response.pk).update(student_id=f"(moving #{response.pk})")
    for response, key, page_ids in moving:
        move_response(response, student_id=key[0], user=user, reason=summary[:100])
        Page.objects.filter(pk__in=page_ids).update(response=response)
        followed.add(key)
        notes.append(_note(response.pk, part(N("moved with its pages to student %(student)s"), student=key[0])))
    for key, group in groups.items():
        if key in followed or not group or not _feeds_a_response(group):
            continue
        response = services.write_response(group[0], user)
        notes.append(_note(response.pk, part(N("rewritten from the %(n)s page(s) of %(student)s"), n=len(group),
                                             student=key[0])))
    still_fed = set(Page.objects.filter(response_id__in=old_responses).values_list("response_id", flat=True))
    for response_id in sorted(set(old_responses) - still_fed):
        if response_id in responses:
            outcome = release_response(responses[response_id], user=user, reason=summary[:100])
            notes.append(_note(response_id, part(N("deleted: no page and no label left")) if outcome == "deleted"
                               else part(N("kept with its labels, but it has no page now: check it"))))
    return notes


def _note(response_id, what):
    """What happened to a response, for the edit's history: `what` in English (the API, exports),
    `what_parts` for the reader's language (core.stored_text)."""
    return {"response": response_id, "what": english(what), "what_parts": [what]}


def _whole_group(page_ids, groups):
    """The answer that now holds exactly these pages and nothing else, if there is one."""
    for key, group in groups.items():
        if {page.pk for page in group} == page_ids:
            return key
    return None


def _feeds_a_response(group):
    return any(page.response_id for page in group) or any(
        getattr(page, "transcript", None) is not None and page.transcript.status == Transcript.Status.VERIFIED
        for page in group
    )


def _queue_new_answers(batch, pages):
    """A page that becomes part of an answer (a cover that was not) and was never OCR'd gets its run."""
    answers = [page for page in pages if not page.is_cover]
    read = set(OcrRun.objects.filter(page__in=answers).values_list("page_id", flat=True))
    waiting = [page for page in answers if page.pk not in read]
    if waiting:
        services.queue_ocr(waiting, batch.engine)
    return waiting
