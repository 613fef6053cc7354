"""Pages of the ocr app (reviewers and admins): upload, batch, correction screen, quality."""
import mimetypes

from django.contrib import messages
from django.core.files.storage import default_storage
from django.http import FileResponse, Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from accounts.decorators import reviewer_required

from . import conf, selectors, services
from .engines import ENGINES
from .forms import AddFilesForm, EngineForm, UploadForm
from .models import Page, ScanBatch

IMAGE_KINDS = {"web": "web", "thumb": "thumb", "processed": "processed", "master": "master"}


def _report_ingest(request, scan_files):
    accepted = sum(1 for f in scan_files if f.status == "accepted")
    pages = sum(f.n_new_pages for f in scan_files)
    refused = [f for f in scan_files if f.status != "accepted"]
    messages.success(request, f"{accepted} of {len(scan_files)} file(s) accepted, {pages} new page(s) queued for OCR.")
    for scan_file in refused:
        messages.error(request, f"{scan_file.original_name}: {scan_file.message}")


@reviewer_required
def batch_list(request):
    form = UploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            batch = services.create_batch(exam=data["exam"], engine=data["engine"], user=request.user, name=data["name"])
            scan_files = services.ingest_uploads(batch, services.uploads_from(data["scans"]))
        except services.BatchError as exc:
            form.add_error("scans", str(exc))
        else:
            _report_ingest(request, scan_files)
            return redirect("ocr:batch_detail", pk=batch.pk)
    limits = {
        "pdf_pages": conf.get("OCR_MAX_PDF_PAGES"),
        "megabytes": conf.get("OCR_MAX_UPLOAD_BYTES") // (1024 * 1024),
        "megapixels": conf.get("OCR_MAX_PIXELS") // 1_000_000,
    }
    return render(
        request, "ocr/batch_list.html", {"form": form, "batches": selectors.batch_list(), "limits": limits}
    )


@reviewer_required
def batch_detail(request, pk):
    batch = get_object_or_404(ScanBatch.objects.select_related("exam", "created_by"), pk=pk)
    context = {
        "batch": batch,
        "pages": selectors.batch_pages(batch),
        "files": selectors.batch_files(batch),
        "progress": selectors.batch_progress(batch),
        "questions": list(batch.exam.questions.order_by("location", "id").only("id", "location", "statement")),
        "add_form": AddFilesForm(),
        "engine_form": EngineForm(),
        "engine_label": ENGINES[batch.engine].label if batch.engine in ENGINES else batch.engine,
    }
    return render(request, "ocr/batch_detail.html", context)


@reviewer_required
@require_POST
def batch_add_files(request, pk):
    batch = get_object_or_404(ScanBatch, pk=pk)
    form = AddFilesForm(request.POST, request.FILES)
    if not form.is_valid():
        messages.error(request, "Choose one or more files to add.")
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
    batch = get_object_or_404(ScanBatch.objects.select_related("exam"), pk=pk)
    rows = []
    for raw in request.POST.getlist("page"):
        if not raw.isdigit():
            continue
        question = request.POST.get(f"question-{raw}", "")
        number = request.POST.get(f"page_number-{raw}", "1")
        rows.append({
            "page": int(raw),
            "student_id": request.POST.get(f"student-{raw}", ""),
            "question": int(question) if question.isdigit() else None,
            "page_number": int(number) if number.isdigit() else 1,
        })
    try:
        changed = services.assign_pages(batch, rows)
    except services.BatchError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Saved the assignment of {len(changed)} page(s).")
    return redirect("ocr:batch_detail", pk=pk)


@reviewer_required
@require_POST
def batch_run_engine(request, pk):
    batch = get_object_or_404(ScanBatch, pk=pk)
    form = EngineForm(request.POST)
    if form.is_valid():
        runs = services.queue_engine_on_batch(batch, form.cleaned_data["engine"])
        messages.success(request, f"Queued {form.cleaned_data['engine']} on {len(runs)} page(s).")
    else:
        messages.error(request, "Unknown engine.")
    return redirect("ocr:batch_detail", pk=pk)


@reviewer_required
@require_POST
def batch_retry(request, pk):
    batch = get_object_or_404(ScanBatch, pk=pk)
    count = services.retry_failed_runs(batch)
    messages.success(request, f"Queued {count} failed run(s) again.")
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
        "lowConfidence": conf.get("OCR_LOW_CONFIDENCE"),
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
        "revisions": list(transcript.revisions.select_related("author")[:8]) if transcript else [],
    }
    return render(request, "ocr/page_correct.html", context)


@reviewer_required
def page_history(request, pk):
    page = get_object_or_404(Page.objects.select_related("batch", "question", "response"), pk=pk)
    transcript = selectors.transcript_of(page)
    rows = selectors.revisions_with_diffs(transcript) if transcript else []
    return render(request, "ocr/page_history.html", {"page": page, "transcript": transcript, "rows": rows})


@reviewer_required
def page_image(request, pk, kind):
    field = IMAGE_KINDS.get(kind)
    page = get_object_or_404(Page.objects.only("id", "web", "thumb", "processed", "master"), pk=pk)
    name = getattr(page, field) if field else ""
    if not name or not default_storage.exists(name):
        raise Http404("This rendition does not exist (yet).")
    content_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
    response = FileResponse(default_storage.open(name, "rb"), content_type=content_type)
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
    batch_id = request.GET.get("batch", "")
    detail_batch = ScanBatch.objects.filter(pk=int(batch_id)).first() if batch_id.isdigit() else None
    context = {
        "rows": selectors.quality_rows(),
        "by_engine": by_engine,
        "chart": chart,
        "detail_batch": detail_batch,
        "detail_rows": selectors.page_cer_rows(detail_batch) if detail_batch else [],
    }
    return render(request, "ocr/quality.html", context)
