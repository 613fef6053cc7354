"""Pages of the error-geometry and step-surprisal study (reviewers and admins only): start a run,
follow its progress, cancel or resume it (the views every run has: grading/runs/views.py), and
see its figures and the JSON beside them.
Segment text is escaped by the templates; figures are drawn by static/js/geometry.js from the
results JSON (json_script), never from HTML."""
import json

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy as _lazy

from accounts.decorators import reviewer_required
from core.shortcuts import get_object_or_404
from grading.runs.views import run_action_views

from . import selectors, services
from .forms import GeometryStartForm
from .models import GeometryRun


@reviewer_required
def geometry_home(request):
    form = GeometryStartForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            segments = None
            if data["segments_file"]:
                segments = []
                for upload in data["segments_file"]:
                    try:
                        segments += services.parse_segments_jsonl(upload.read(), group=data["segments_group"] or None,
                                                                  file_name=upload.name)
                    except ValidationError as exc:  # which file, when several are given
                        raise ValidationError(f"{upload.name}: {' '.join(exc.messages)}") from exc
            run = services.start_run(
                kind=data["kind"], backend=data["backend"], endpoint=data["endpoint"], model=data["model"] or "",
                exam=getattr(data["exam"], "pk", None), unit=data["unit"], limit=data["limit"], segments=segments,
                seed=data["seed"] if data["seed"] is not None else 42, bootstrap=data["bootstrap"] or 0,
                top_k=data["top_k"] or services.DEFAULT_TOP_K, cluster=data["cluster"], splitter=data["splitter"] or "rule",
                splitter_model=data["splitter_model"] or "", splitter_endpoint=data["splitter_endpoint"], logprobs_shape=data["logprobs_shape"] or "echo",
                sources=data["sources"], user=request.user,
            )
        except ValidationError as exc:
            form.add_error(None, " ".join(exc.messages))
        else:
            messages.success(request, _("Started %(run)s: %(n)d segments.") % {"run": run, "n": run.n_items})
            return redirect("studies:geometry_run", pk=run.pk)
    rows = [{"run": run, "progress": progress} for run, progress in selectors.recent_runs()]
    return render(request, "studies/studies_geometry.html", {"form": form, "rows": rows})


@reviewer_required
def geometry_run(request, pk):
    run = get_object_or_404(GeometryRun.objects.select_related("endpoint", "created_by"), pk=pk)
    page = Paginator(run.items.defer("figures").order_by("id"), 50).get_page(request.GET.get("page"))
    context = {"run": run, "progress": selectors.run_progress(run), "page": page, "results": run.results or None,
               "lexical": run.backend == GeometryRun.Backend.LEXICAL}
    return render(request, "studies/studies_geometry_run.html", context)


@reviewer_required
def geometry_run_results(request, pk):
    run = get_object_or_404(GeometryRun, pk=pk)
    response = HttpResponse(json.dumps(run.results or {}, indent=1, sort_keys=True, ensure_ascii=False),
                            content_type="application/json; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{run.kind}-run-{run.pk}.json"'
    return response


@reviewer_required
def geometry_run_segments(request, pk):
    run = get_object_or_404(GeometryRun, pk=pk)
    response = HttpResponse(selectors.segments_jsonl(selectors.run_segments(run)),
                            content_type="application/x-ndjson; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{run.kind}-run-{run.pk}-segments.jsonl"'
    return response


GEOMETRY_RUN_ACTIONS = run_action_views(
    model=GeometryRun, progress=selectors.run_progress, cancel=services.cancel_run, resume=services.resume_run,
    back="studies:geometry_run",
    title=lambda run: _("%(kind)s run %(id)d") % {"kind": run.get_kind_display(), "id": run.pk},
    cancelled=_lazy("%(run)s cancelled; calls in flight finish and are kept, an analysis under way stops."),
    resumed=_lazy("%(run)s resumed."),
)
