"""Pages of the ocr app (reviewers and admins): upload, batch, correction screen, quality."""
import json
import mimetypes

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.files.storage import default_storage
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from accounts.decorators import annotator_required, reviewer_required
from accounts.selectors import active_annotators
from annotation.labelling import selectors as labelling_selectors
from annotation.labelling import services as labelling_services
from annotation.labelling.selectors import can_label
from annotation.models import Assignment, Response
from core.ids import id_param
from core.numbers import parse_id, parse_int
from core.shortcuts import get_object_or_404
from core.stored_files import open_stream, stream_response

from . import class_uploads, packets, selectors, services
from .engines import OCR_ENGINES
from .filenames import MAX_PAGE_NUMBER
from .forms import AddFilesForm, AssignLabelsForm, ClassRetryForm, ClassScanForm, EngineForm, UploadForm
from .models import Page, ScanBatch, response_note_text

IMAGE_KINDS = {"web": "web", "thumb": "thumb", "processed": "processed", "master": "master"}


def _report_ingest(request, scan_files):
    accepted = sum(1 for f in scan_files if f.status == "accepted")
    pages = sum(f.n_new_pages for f in scan_files)
    refused = [f for f in scan_files if f.status != "accepted"]
    messages.success(request, gettext("%(accepted)s of %(n_scan_files)s file(s) accepted, %(pages)s new page(s) queued for OCR.") % {"accepted": accepted, "n_scan_files": len(scan_files), "pages": pages})
    for scan_file in refused:
        messages.error(request, f"{scan_file.original_name}: {scan_file.message_text}")


@reviewer_required
def batch_list(request):
    form = UploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            batch, scan_files = services.ingest_new_batch(
                exam=data["exam"], engine=data["engine"], uploads=services.uploads_from(data["scans"]),
                user=request.user, name=data["name"],
            )
        except services.BatchError as exc:
            form.add_error("scans", str(exc))
        else:
            _report_ingest(request, scan_files)
            return redirect("ocr:batch_detail", pk=batch.pk)
    return _batch_list_page(request, form, ClassScanForm())


def _batch_list_page(request, form, class_form, status=200):
    limits = {
        "pdf_pages": settings.OCR_MAX_PDF_PAGES,
        "megabytes": settings.OCR_MAX_UPLOAD_BYTES // (1024 * 1024),
        "megapixels": settings.OCR_MAX_PIXELS // 1_000_000,
        "class_pages": settings.OCR_MAX_CLASS_PDF_PAGES,
        "class_megabytes": settings.OCR_MAX_CLASS_PDF_BYTES // (1024 * 1024),
    }
    context = {"form": form, "class_form": class_form, "batches": selectors.batch_list(), "limits": limits,
               "pending_uploads": selectors.pending_class_uploads(request.user)}
    return render(request, "ocr/batch_list.html", context, status=status)


@reviewer_required
@require_POST
def class_upload(request):
    """A class's PDF with its roster and template: taken whole, or refused whole with every reason;
    then the files given are kept for another try (ocr.class_uploads) and the page of that try opens."""
    form = ClassScanForm(request.POST, request.FILES)
    data = form.cleaned_data if form.is_valid() else {}
    pdf = services.uploads_from([request.FILES["pdf"]])[0] if "pdf" in request.FILES else None
    if data:
        try:
            batch = packets.ingest_class_pdf(
                exam=data["exam"], engine=data["engine"], upload=pdf, roster=data["roster"].read(),
                template=data["template"].read(), user=request.user, name=data["name"],
            )
        except packets.ClassScanRefused as exc:
            problems = exc.problems
        else:
            return _class_taken(request, batch)
    else:
        problems = _form_problems(form)
    if not any(kind in request.FILES for kind in ("pdf", "roster", "template")):
        for problem in problems:
            form.add_error(None, problem)
        messages.error(request, gettext("Nothing was uploaded: see the reasons under “Upload a class PDF”."))
        return _batch_list_page(request, UploadForm(), form, status=400)
    pending = class_uploads.keep_refused_upload(
        user=request.user, problems=problems, exam=form.cleaned_data.get("exam"),
        engine=form.cleaned_data.get("engine", ""), name=form.cleaned_data.get("name", ""), pdf=pdf,
        roster=request.FILES.get("roster"), template=request.FILES.get("template"),
    )
    messages.error(request, gettext("Nothing was imported yet: your files are kept here, so you can change the exam or replace one file and try again."))
    return redirect("ocr:class_pending", pk=pending.pk)


def _form_problems(form):
    problems = []
    for field, errors in form.errors.items():
        label = form.fields[field].label or field.capitalize() if field in form.fields else ""
        problems += [f"{label}: {error}" if label else str(error) for error in errors]
    return problems


def _class_taken(request, batch):
    messages.success(request, gettext("%(n_roster)s packets, %(count)s pages queued.") % {"n_roster": len(batch.roster), "count": batch.pages.count()})
    return redirect("ocr:batch_detail", pk=batch.pk)


def _pending_or_404(request, pk):
    """The person's own kept upload (another person's, or an expired one, is a 404)."""
    return get_object_or_404(selectors.pending_class_uploads(request.user), pk)


@reviewer_required
@require_http_methods(["GET", "POST"])
def class_pending(request, pk):
    """A refused class upload kept for another try: its reasons, its files, the exams that hold its
    labels (one button each), and a form to try again with other choices or one file replaced."""
    pending = _pending_or_404(request, pk)
    status = 200
    if request.method == "POST":
        form = ClassRetryForm(request.POST, request.FILES)
        if form.is_valid():
            data = form.cleaned_data
            pdf = services.uploads_from([data["pdf"]])[0] if data.get("pdf") else None
            try:
                batch = class_uploads.retry(
                    pending, exam=data["exam"], engine=data["engine"], name=data["name"], pdf=pdf,
                    roster=data.get("roster"), template=data.get("template"), user=request.user,
                )
            except packets.ClassScanRefused:
                status = 400
            except class_uploads.MissingFiles as exc:
                names = {"class PDF": gettext("the class PDF")}
                form.add_error(None, gettext("Choose %(files)s: none is kept for this upload.") % {
                    "files": ", ".join(names.get(name, name) for name in exc.missing)})
                status = 400
            else:
                return _class_taken(request, batch)
        else:
            status = 400
    else:
        initial = {"exam": pending.exam, "name": pending.name}
        if pending.engine:
            initial["engine"] = pending.engine
        form = ClassRetryForm(initial=initial)
    context = {
        "pending": pending, "form": form,
        "suggestions": selectors.exams_for_template(pending.template, tried=pending.exam),
    }
    return render(request, "ocr/class_pending.html", context, status=status)


@reviewer_required
@require_POST
def class_pending_discard(request, pk):
    class_uploads.discard(_pending_or_404(request, pk))
    messages.success(request, gettext("The kept files were deleted."))
    return redirect("ocr:batch_list")


@reviewer_required
def batch_detail(request, pk):
    batch = get_object_or_404(selectors.batches_with_exam(), pk=pk)
    answers = selectors.batch_answers(batch)
    context = {
        "batch": batch,
        "pages": selectors.batch_pages(batch),
        "files": selectors.batch_files(batch),
        "progress": selectors.batch_progress(batch),
        "questions": selectors.exam_questions(batch),
        "add_form": AddFilesForm(),
        "engine_form": EngineForm(),
        "engine_label": OCR_ENGINES[batch.engine].label if batch.engine in OCR_ENGINES else batch.engine,
        "answers": answers,
        "answer_counts": selectors.answer_state_counts(answers),
        "assign_form": _assign_form(),
        "annotators": active_annotators(),
    }
    return render(request, "ocr/batch_detail.html", context)


def _assign_form(data=None):
    return AssignLabelsForm(data, annotators=active_annotators(), strategies=Assignment.Strategy.choices,
                            initial={"strategy": Assignment.Strategy.ROUND_ROBIN})


@reviewer_required
@require_POST
def batch_assign_labels(request, pk):
    """"Assign these": ask for labels of the batch's verified responses, with the Assign page's options."""
    batch = get_object_or_404(selectors.batches_with_exam(), pk=pk)
    form = _assign_form(request.POST)
    if not form.is_valid():
        problems = "; ".join(f"{name}: {' '.join(errors)}" for name, errors in form.errors.items())
        messages.error(request, gettext("Nothing was assigned. %(problems)s") % {"problems": problems})
        return redirect("ocr:batch_detail", pk=pk)
    responses = labelling_selectors.assignable_responses(batch=batch)
    waiting = selectors.answers_waiting(batch)
    try:
        result = labelling_services.assign_responses(
            responses=responses, annotators=list(form.cleaned_data["annotators"]),
            per_response=form.cleaned_data["per_response"], strategy=form.cleaned_data["strategy"],
            assigned_by=request.user,
        )
    except ValueError as exc:  # LabelInvalid is a ValueError
        messages.error(request, gettext("Nothing was assigned. %(exc)s") % {"exc": exc})
        return redirect("ocr:batch_detail", pk=pk)
    left_out = f" {waiting} answer(s) of the batch are not verified yet and were left out." if waiting else ""
    messages.success(request, result.summary() + left_out)
    if result.short_of_annotators:
        messages.warning(request, gettext("%(short_of_annotators)s label(s) could not be given out: too few annotators.") % {"short_of_annotators": result.short_of_annotators})
    return redirect("ocr:batch_detail", pk=pk)


@reviewer_required
def batch_packets(request, pk):
    """The fix screen: each student's packet, page by page, with move, swap and reassign."""
    batch = get_object_or_404(selectors.batches_with_exam(), pk=pk)
    return _packets_page(request, batch)


def _packets_page(request, batch, status=200):
    context = {
        "batch": batch,
        "packets": selectors.batch_packets(batch),
        "questions": selectors.exam_questions(batch),
        "edits": selectors.packet_edits(batch),
    }
    return render(request, "ocr/batch_packets.html", context, status=status)


@reviewer_required
@require_POST
def batch_packets_fix(request, pk):
    batch = get_object_or_404(selectors.batches_with_exam(), pk=pk)
    post = request.POST
    try:
        edit = _fix_packet(batch, post, request.user)
    except packets.PacketError as exc:
        messages.error(request, str(exc))
        return _packets_page(request, batch, status=400)
    messages.success(request, gettext("%(summary)s.") % {"summary": edit.summary_text})
    for note in edit.responses:
        messages.info(request, gettext("Response #%(response)s: %(what)s.") % {"response": note['response'], "what": response_note_text(note)})
    return redirect("ocr:batch_packets", pk=pk)


def _fix_packet(batch, post, user):
    action = post.get("action")
    if action == "move":
        page = _page_of(batch, post.get("page"))
        question = id_param(post.get("question"))
        number = id_param(post.get("page_number"))
        return packets.move_page(page, student_id=post.get("student_id", ""), question_id=question,
                                 page_number=number, cover=post.get("question") == "cover", user=user)
    if action == "swap":
        return packets.swap_pages(_page_of(batch, post.get("first")), _page_of(batch, post.get("second")), user=user)
    if action == "packet":
        return packets.reassign_packet(batch, student_id=post.get("student_id", ""),
                                       to_student_id=post.get("to_student_id", ""), user=user)
    raise packets.PacketError("Unknown action: nothing was changed.")


def _page_of(batch, raw):
    page_id = id_param(raw)
    page = batch.pages.select_related("batch", "source_file").filter(pk=page_id).first() if page_id else None
    if page is None:
        raise packets.PacketError("Choose a page of this batch.")
    return page


@reviewer_required
@require_POST
def batch_add_files(request, pk):
    batch = get_object_or_404(ScanBatch, pk=pk)
    form = AddFilesForm(request.POST, request.FILES)
    if not form.is_valid():
        messages.error(request, gettext("Choose one or more files to add."))
        return redirect("ocr:batch_detail", pk=pk)
    try:
        scan_files = services.ingest_uploads(batch, services.uploads_from(form.cleaned_data["scans"]))
    except services.BatchError as exc:
        messages.error(request, str(exc))
    else:
        _report_ingest(request, scan_files)
    return redirect("ocr:batch_detail", pk=pk)


@reviewer_required
@require_POST
def batch_assign(request, pk):
    batch = get_object_or_404(selectors.batches_with_exam(), pk=pk)
    rows, problems = [], []
    for raw in request.POST.getlist("page"):
        page = parse_id(raw)
        if page is None:
            continue  # names no page
        question = request.POST.get(f"question-{raw}", "").strip()
        number = request.POST.get(f"page_number-{raw}", "").strip()
        row = {
            "page": page,
            "student_id": request.POST.get(f"student-{raw}", ""),
            "question": parse_id(question) if question else None,
            "page_number": parse_int(number, minimum=1, maximum=MAX_PAGE_NUMBER) if number else 1,
        }
        if question and row["question"] is None:
            problems.append(_("page #%(page)s: the question “%(value)s” is not a question id") % {
                "page": page, "value": question[:40]})
        if row["page_number"] is None:
            problems.append(_("page #%(page)s: the page number “%(value)s” is not a whole number from 1 to "
                              "%(max)s") % {"page": page, "value": number[:40], "max": MAX_PAGE_NUMBER})
        rows.append(row)
    if problems:
        messages.error(request, _("Nothing was saved: %(problems)s.") % {"problems": "; ".join(problems[:5])})
        return redirect("ocr:batch_detail", pk=pk)
    try:
        edit = packets.assign_pages(batch, rows, user=request.user)
    except packets.PacketError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, gettext("Saved the assignment of %(value)s page(s).") % {"value": len(edit.changes) if edit else 0})
        for note in edit.responses if edit else ():
            messages.info(request, gettext("Response #%(response)s: %(what)s.") % {"response": note['response'], "what": response_note_text(note)})
    return redirect("ocr:batch_detail", pk=pk)


@reviewer_required
@require_POST
def batch_run_engine(request, pk):
    batch = get_object_or_404(ScanBatch, pk=pk)
    form = EngineForm(request.POST)
    if form.is_valid():
        runs = services.queue_engine_on_batch(batch, form.cleaned_data["engine"])
        messages.success(request, gettext("Queued %(engine)s on %(n_runs)s page(s).") % {"engine": form.cleaned_data['engine'], "n_runs": len(runs)})
    else:
        messages.error(request, gettext("Unknown engine."))
    return redirect("ocr:batch_detail", pk=pk)


@reviewer_required
@require_POST
def batch_retry(request, pk):
    batch = get_object_or_404(ScanBatch, pk=pk)
    count = services.retry_failed_runs(batch)
    messages.success(request, gettext("Queued %(count)s failed run(s) again.") % {"count": count})
    return redirect("ocr:batch_detail", pk=pk)


@reviewer_required
def batch_progress(request, pk):
    batch = get_object_or_404(ScanBatch, pk=pk)
    return JsonResponse(selectors.batch_progress(batch))


@reviewer_required
def page_correct(request, pk):
    try:
        page = selectors.page_detail(pk)
    except Page.DoesNotExist:
        raise Http404("No such page.") from None
    transcript = selectors.transcript_of(page)
    run = selectors.display_run(page, transcript)
    previous, following, position, total = selectors.neighbours(page)
    editor = {
        "page": page.pk,
        "version": transcript.version if transcript else 0,
        "status": transcript.status if transcript else "draft",
        "saveUrl": reverse("ocr-api-page-transcript", args=[page.pk]),
        "stateUrl": reverse("ocr-api-page-detail", args=[page.pk]),
        "historyUrl": reverse("ocr:page_history", args=[page.pk]),
        "previousUrl": reverse("ocr:page_correct", args=[previous]) if previous else None,
        "nextUrl": reverse("ocr:page_correct", args=[following]) if following else None,
        "rawText": run.raw_text if run else "",
        "tokens": run.tokens if run else [],
        "engine": run.engine if run else "",
        "lowConfidence": settings.OCR_LOW_CONFIDENCE,
        "imageWidth": page.web_width,
        "imageHeight": page.web_height,
        "ocrPending": run is None and not page.ocr_runs.filter(status="failed").exists(),
    }
    context = {
        "page": page,
        "transcript": transcript,
        "run": run,
        "runs": selectors.runs_of(page),
        "editor": editor,
        "position": position,
        "total": total,
        "answer_pages": selectors.answer_page_count(page),
        "revisions": list(transcript.revisions.select_related("author")[:8]) if transcript else [],
        "flags": selectors.open_flags(page, transcript.text if transcript else ""),
    }
    return render(request, "ocr/page_correct.html", context)


@reviewer_required
def page_history(request, pk):
    page = get_object_or_404(selectors.pages_with_context(), pk=pk)
    transcript = selectors.transcript_of(page)
    rows = selectors.revisions_with_diffs(transcript) if transcript else []
    return render(request, "ocr/page_history.html", {"page": page, "transcript": transcript, "rows": rows})


@annotator_required
def page_image(request, pk, kind):
    """A rendition of a page image: reviewers see all, annotators the pages of responses they label."""
    field = IMAGE_KINDS.get(kind)
    page = get_object_or_404(selectors.page_renditions(), pk=pk)
    if not selectors.may_view_page_image(request.user, page):
        raise PermissionDenied(gettext("This scan belongs to a response that is not assigned to you."))
    name = getattr(page, field) if field else ""
    if field == "processed" and not name:
        name = services.processed_rendition(page)
    if not name or not default_storage.exists(name):
        raise Http404("This rendition does not exist (yet).")
    if selectors.redacted_for(request.user, page):  # a blind exam's annotator: the name regions blank
        data, content_type = services.redacted_rendition(page, kind, name)
        response = HttpResponse(data, content_type=content_type)
    else:
        content_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
        response = stream_response(open_stream(name), as_attachment=False, content_type=content_type)
    response["Cache-Control"] = "private, max-age=3600"
    return response


@reviewer_required
def quality(request):
    by_engine = selectors.quality_by_engine()
    chart = {
        "labels": [row["engine"] for row in by_engine],
        "cer": [round(100 * row["cer"], 2) if row["cer"] is not None else None for row in by_engine],
        "cer_math": [round(100 * row["cer_math"], 2) if row["cer_math"] is not None else None for row in by_engine],
    }
    batch_id = parse_id(request.GET.get("batch"))
    detail_batch = selectors.scan_batch(batch_id) if batch_id is not None else None
    context = {
        "rows": selectors.quality_rows(),
        "by_engine": by_engine,
        "chart": chart,
        "detail_batch": detail_batch,
        "detail_rows": selectors.page_cer_rows(detail_batch) if detail_batch else [],
    }
    return render(request, "ocr/quality.html", context)


@annotator_required
@require_POST
def flag_transcript(request, pk):
    """"Transcript wrong here" from the labelling screen: JSON {start, end, note} -> the flag."""
    response = get_object_or_404(Response, pk=pk)
    if not can_label(request.user, response):
        return JsonResponse({"detail": gettext("This response is not assigned to you.")}, status=403)
    if request.content_type != "application/json":  # a form's body has been parsed already: no raw body to read
        return JsonResponse({"detail": gettext("Send a JSON object {start, end, note}.")}, status=400)
    try:
        data = json.loads(request.body or b"{}")
    except (ValueError, RecursionError):  # not JSON (or not UTF-8), an over-long integer, 5,000 levels deep
        return JsonResponse({"detail": gettext("Send a JSON object {start, end, note}.")}, status=400)
    if not isinstance(data, dict):
        return JsonResponse({"detail": gettext("Send a JSON object {start, end, note}.")}, status=400)
    try:
        flag = services.flag_transcript(
            response=response, user=request.user, start=data.get("start"), end=data.get("end"),
            note=data.get("note", ""),
        )
    except services.FlagInvalid as exc:
        return JsonResponse({"detail": str(exc)}, status=400)
    return JsonResponse({"id": flag.pk, "page": flag.page_id, "quote": flag.quote}, status=201)

