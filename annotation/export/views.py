"""Export pages: start an export of the (filtered) responses, follow its progress, download it."""
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext_lazy

from accounts.decorators import reviewer_required
from core.shortcuts import get_object_or_404
from core.stored_files import stream_response

from ..models import ExportJob
from ..selectors import matching_responses, response_filter_choices
from .release import release_scope
from .selectors import recent_export_jobs
from .services import clean_filters, create_export_job, download_name, open_export
from .writers import FORMATS

FORMAT_LABELS = {
    "realmath": gettext_lazy("RealMath-Eval release (JSON array, as published): rubric-scored answers with a gold score only"),
    "jsonl": gettext_lazy("Full JSONL (everything; re-importable with import_dataset)"),
    "csv": gettext_lazy("Flat CSV tables (responses, labels, step labels, judge results, ...)"),
    "parquet": gettext_lazy("Flat Parquet tables (same tables as CSV)"),
}


def job_state(job):
    """What the job page shows and polls."""
    return {
        "id": job.pk, "status": job.status, "done": job.done, "total": job.total, "percent": job.percent,
        "error": job.error, "file_size": job.file_size, "notice": job.restart_notice,
        "download": reverse("annotation:export_download", args=[job.pk]) if job.status == ExportJob.Status.DONE else None,
    }


@reviewer_required
def export_page(request):
    error = None
    if request.method == "POST":
        try:
            job = create_export_job(request.user, request.POST.get("format", ""), request.POST)
        except ValueError as exc:
            error = str(exc)
        else:
            return redirect("annotation:export_job", pk=job.pk)
    filters = clean_filters(request.POST or request.GET)
    matching = matching_responses(filters)
    context = {
        "formats": [(f, FORMAT_LABELS[f]) for f in FORMATS],
        "filters": filters,
        "matching": matching.count(),
        "matching_release": release_scope(matching).count(),
        **response_filter_choices(),
        "jobs": recent_export_jobs(),
        "error": error,
    }
    return render(request, "annotation/export.html", context, status=400 if error else 200)


@reviewer_required
def export_job(request, pk):
    job = get_object_or_404(ExportJob, pk=pk)
    return render(request, "annotation/export_job.html", {"job": job, "state": job_state(job)})


@reviewer_required
def export_job_progress(request, pk):
    return JsonResponse(job_state(get_object_or_404(ExportJob, pk=pk)))


@reviewer_required
def export_download(request, pk):
    job = get_object_or_404(ExportJob, pk=pk, status=ExportJob.Status.DONE)
    stream = open_export(job)
    if stream is None:
        raise Http404("The export file is no longer on the server; start the export again.")
    return stream_response(stream, download_name(job))
