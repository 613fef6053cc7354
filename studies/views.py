"""Pages of the judge studies (reviewers and admins only): the probe page (start runs, list them
with progress), a run's rates and items, and one item as a diff of original and derived text with
both judge outputs. Student text is escaped by the templates and rendered as math by app.js."""
import difflib
import json

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import JsonResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy as _lazy

from accounts.decorators import reviewer_required
from core.ids import id_param
from core.shortcuts import get_object_or_404
from grading.runs.views import run_action_views

from . import probes, selectors, services, style
from .forms import ProbeStartForm, StyleImportForm, StyleRewriteForm, StyleRunForm
from .models import ProbeRun


@reviewer_required
def probe_home(request):
    # ?exam= (the exam page's link) chooses the exam; a value that is no exam id is ignored.
    form = ProbeStartForm(request.POST or None, initial={"exam": id_param(request.GET.get("exam"))})
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            run = services.start_probe_run(
                data["setting"], probe_names=data["probes"], exam=getattr(data["exam"], "pk", None),
                question=getattr(data["question"], "pk", None), limit=data["limit"], seed=data["seed"] or 0,
                user=request.user,
            )
        except ValidationError as exc:
            form.add_error(None, " ".join(exc.messages))
        else:
            messages.success(request, gettext("Started probe run %(pk)s: %(n_items)s derived answers.") % {"pk": run.pk, "n_items": run.n_items})
            return redirect("studies:probe_run", pk=run.pk)
    rows = [{"run": run, "progress": progress} for run, progress in selectors.recent_runs()]
    return render(request, "studies/studies_probes.html", {"form": form, "rows": rows, "probes": probes.PROBES})


@reviewer_required
def probe_estimate(request):
    """JSON: how many judge calls the probe form's selection would make (see services.probe_call_estimate)."""
    form = ProbeStartForm(request.GET)
    form.is_valid()  # partial selections are fine: the estimate uses what is valid
    data = getattr(form, "cleaned_data", {})
    return JsonResponse(services.probe_call_estimate(
        data.get("setting"), probe_names=request.GET.getlist("probes"), exam=getattr(data.get("exam"), "pk", None),
        question=getattr(data.get("question"), "pk", None), limit=data.get("limit"),
    ))


@reviewer_required
def probe_run_detail(request, pk):
    run = get_object_or_404(selectors.runs_with_setting(), pk=pk)
    probe = request.GET.get("probe") if request.GET.get("probe") in run.probes else ""
    page = Paginator(selectors.run_items(run, probe or None), 50).get_page(request.GET.get("page"))
    rates = [{"name": name, "probe": probes.PROBES[name], **row} for name, row in selectors.run_rates(run).items()]
    attribution = None
    if probes.RAW_OCR in run.probes:
        threshold = selectors.parse_threshold(request.GET.get("threshold"))
        rows = selectors.attribution_rows(run.setting, threshold, run=run)
        attribution = {"threshold": threshold, "rows": rows,
                       "counts": {tag: sum(1 for r in rows if r["tag"] == tag) for tag in selectors.TAGS}}
    context = {
        "run": run, "progress": selectors.run_progress(run), "rates": rates, "page": page, "probe": probe,
        "attribution": attribution,
        "style": style.ablation_report(run) if style.PROBE in run.probes else None,
        "families": {name: p.family for name, p in probes.PROBES.items()},
    }
    return render(request, "studies/studies_probe_run.html", context)


PROBE_RUN_ACTIONS = run_action_views(
    model=ProbeRun, progress=selectors.run_progress, cancel=services.cancel_probe_run,
    resume=services.resume_probe_run, back="studies:probe_run", title=lambda run: _("Probe run %d") % run.pk,
    cancelled=_lazy("%(run)s cancelled; judgements in flight finish and are kept."), resumed=_lazy("%(run)s resumed."),
)


def line_diff(old, new):
    """[(op, old line, new line)] with op equal / delete / insert / replace, line by line."""
    a, b = old.split("\n"), new.split("\n")
    rows = []
    for op, a0, a1, b0, b1 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        left, right = a[a0:a1], b[b0:b1]
        for i in range(max(len(left), len(right))):
            rows.append((op, left[i] if i < len(left) else None, right[i] if i < len(right) else None))
    return rows


@reviewer_required
def probe_item_detail(request, pk):
    item = get_object_or_404(selectors.items_with_context(), pk=pk)
    derived = item.derived
    detected = None
    if item.probe in probes.PROBES and item.original_score is not None and item.derived_score is not None:
        detected = selectors.is_detected(item.probe, item.original_score, item.derived_score)
    context = {
        "item": item, "derived": derived, "response": derived.response, "run": item.run,
        "diff": line_diff(derived.original_text, derived.text), "detected": detected,
        "probe": probes.PROBES.get(item.probe),
        "change": json.dumps(derived.change, ensure_ascii=False, sort_keys=True),
    }
    return render(request, "studies/studies_probe_item.html", context)


@reviewer_required
def style_home(request):
    """Issue 27: the style ablation: make rewrites (LLM, queued; or a file), judge them, list the runs."""
    action = request.POST.get("action") if request.method == "POST" else ""
    rewrite_form = StyleRewriteForm(request.POST if action == "rewrite" else None)
    import_form = StyleImportForm(request.POST if action == "import" else None, request.FILES if action == "import" else None)
    run_form = StyleRunForm(request.POST if action == "run" else None)
    if action == "rewrite" and rewrite_form.is_valid():
        from grading.judges.services import RunRefused, check_endpoint_usable  # noqa: PLC0415

        from .tasks import rewrite_style_answers_task  # noqa: PLC0415

        data = rewrite_form.cleaned_data
        try:
            check_endpoint_usable(data["endpoint"])
        except RunRefused as exc:
            rewrite_form.add_error("endpoint", " ".join(exc.messages))
        else:
            rewrite_style_answers_task.delay(data["endpoint"].pk, data["model"], getattr(data["exam"], "pk", None), data["limit"])
            messages.success(request, gettext("Rewrites queued: this page counts them as they are made."))
            return redirect("studies:style")
    if action == "import" and import_form.is_valid():
        upload = import_form.cleaned_data["file"]
        try:
            if upload.size > settings.IMPORT_MAX_BYTES:
                raise ValueError(f"{upload.name}: file is larger than {settings.IMPORT_MAX_BYTES} bytes.")
            counts = style.import_rewrites(upload.read(), upload.name)
        except ValueError as exc:
            import_form.add_error("file", gettext("Nothing imported. %(why)s") % {"why": exc})
        else:
            messages.success(request, gettext(
                "Rewrites from %(file)s: %(made)s made, %(kept)s kept, %(flagged)s flagged, %(unmatched)s unmatched records."
            ) % {"file": upload.name, "made": counts["made"], "kept": counts["kept"], "flagged": counts["flagged"],
                 "unmatched": len(counts["unmatched"])})
            if counts["same_as_original"]:
                messages.warning(request, gettext(
                    "%(n)s records hold the answer's own text, not a rewrite (the style-transfer input file?): "
                    "left out.") % {"n": len(counts["same_as_original"])})
            return redirect("studies:style")
    if action == "run" and run_form.is_valid():
        data = run_form.cleaned_data
        try:
            run = services.start_probe_run(data["setting"], probe_names=[style.PROBE], exam=getattr(data["exam"], "pk", None),
                                           limit=data["limit"], user=request.user,
                                           include_flagged=data["include_flagged"])
        except ValidationError as exc:
            run_form.add_error(None, " ".join(exc.messages))
        else:
            return redirect("studies:probe_run", pk=run.pk)
    rows = [{"run": run, "progress": progress} for run, progress in selectors.recent_runs() if style.PROBE in run.probes]
    context = {"rewrite_form": rewrite_form, "import_form": import_form, "run_form": run_form, "rows": rows,
               "counts": style.rewrite_counts(), "template": style.REWRITE_TEMPLATE,
               "flagged": style.flag_details(style.current_rewrites())}
    return render(request, "studies/studies_style.html", context)
