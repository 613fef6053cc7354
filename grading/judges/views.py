"""Pages of the judges: settings and endpoints, runs with live progress.

Reviewers and admins only (annotators see judge results on the response page, when the blind
rule allows). Views parse input, call grading.judges.services / grading.judges.selectors and render.
"""
from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import JsonResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy as _lazy
from django.views.decorators.http import require_POST

from accounts.decorators import admin_required, reviewer_required
from annotation.selectors import matching_responses, response_filter_choices
from core.ids import id_param
from core.shortcuts import get_object_or_404

from ..models import JudgeRun, JudgeRunItem, JudgeSetting, LlmEndpoint
from ..runs.views import run_action_views
from . import calibration, prompts, selectors, services, strategies
from .forms import KIND_HELP, EndpointForm, JudgeSettingForm, PromptSetImportForm, RunStartForm
from .kinds import KINDS


def errors_text(exc):
    if hasattr(exc, "message_dict"):
        return "; ".join(f"{k}: {' '.join(v)}" if k != "__all__" else " ".join(v) for k, v in exc.message_dict.items())
    return " ".join(exc.messages)


# --- settings and endpoints ------------------------------------------------------------------

@reviewer_required
def judges_home(request):
    context = {
        "configs": selectors.setting_list(),
        "endpoints": selectors.endpoint_list(),
        "runs": selectors.run_list()[:8],
    }
    return render(request, "grading/judges/judge_list.html", context)


@reviewer_required
def setting_create(request):
    copy_id = id_param(request.GET.get("copy"))
    copy_of = selectors.setting_by_id(copy_id)
    initial = {}
    if copy_of is not None:
        initial = {f: getattr(copy_of, f) for f in services.SETTING_FIELDS}
        initial["name"] = f"{copy_of.name} copy"
    form = JudgeSettingForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            setting = services.create_judge_setting(
                name=form.cleaned_data["name"], user=request.user, **form.setting_fields()
            )
        except ValidationError as exc:
            form.add_error(None, errors_text(exc))
        else:
            messages.success(request, gettext("Created %(config)s.") % {"config": setting})
            return redirect("grading:judge_setting_detail", pk=setting.pk)
    return render(request, "grading/judges/judge_setting_form.html", _setting_form_context(form, None))


def _setting_form_context(form, setting):
    return {
        "form": form,
        "config": setting,
        "kind_help": KIND_HELP,
        "defaults": {
            **{key: {"system": kind.default_system, "template": kind.default_template} for key, kind in KINDS.items()},
            # issue 27: the rubric kind's strategies ("rubric:<strategy>"), filled in by static/js/judge_setting.js
            **{f"rubric:{key}": {"system": s.system or KINDS["rubric"].default_system,
                                 "template": s.template or KINDS["rubric"].default_template}
               for key, s in strategies.STRATEGIES.items()},
        },
        "variables": prompts.VARIABLES,
        "used": bool(setting and services.setting_is_used(setting)),
    }


@reviewer_required
def setting_edit(request, pk):
    setting = get_object_or_404(JudgeSetting, pk=pk)
    if setting.kind == JudgeSetting.Kind.EXTERNAL:
        messages.error(request, gettext("Imported settings describe results made elsewhere and cannot be edited."))
        return redirect("grading:judge_setting_detail", pk=setting.pk)
    form = JudgeSettingForm(request.POST or None, instance=setting, editing=True)
    if request.method == "POST" and form.is_valid():
        fields = form.setting_fields()
        fields.pop("kind", None)
        original = selectors.setting_by_id(setting.pk)
        try:
            saved = services.update_judge_setting(original, user=request.user, **fields)
        except ValidationError as exc:
            form.add_error(None, errors_text(exc))
        else:
            if saved.pk != original.pk:
                messages.success(request, gettext("%(original)s has results, so the change was saved as %(saved)s.") % {"original": original, "saved": saved})
            else:
                messages.success(request, gettext("Saved %(saved)s.") % {"saved": saved})
            return redirect("grading:judge_setting_detail", pk=saved.pk)
    return render(request, "grading/judges/judge_setting_form.html", _setting_form_context(form, setting))


@reviewer_required
def setting_detail(request, pk):
    setting = get_object_or_404(selectors.settings_for_detail(), pk)
    kind = KINDS.get(setting.kind)
    context = {
        "config": setting,
        "versions": selectors.setting_versions(setting),
        "runs": selectors.run_list({"config": str(setting.pk)})[:20],
        "kind_help": kind.help if kind else gettext("Results imported from a file."),
        "effective_system": setting.system_prompt or (kind.default_system if kind and not setting.prompt_template else ""),
        "effective_template": setting.prompt_template or (kind.default_template if kind else ""),
        "used": services.setting_is_used(setting),
        "latest": selectors.latest_setting(setting.name),
        # issue 27: the strategy, and a few-shot version's examples (its hold-out)
        "strategy": strategies.get(setting.strategy) if setting.kind == JudgeSetting.Kind.RUBRIC else None,
        "examples": calibration.example_table(setting) if setting.calibration else [],
        "holdout_count": len(strategies.holdout_ids(setting)),
    }
    return render(request, "grading/judges/judge_setting_detail.html", context)


@admin_required
def endpoint_edit(request, pk=None):
    """Admins only: an endpoint says which key variable is read and where it is sent."""
    endpoint = get_object_or_404(LlmEndpoint, pk=pk) if pk else None
    form = EndpointForm(request.POST or None, instance=endpoint)
    if request.method == "POST" and form.is_valid():
        try:
            endpoint = services.save_endpoint(endpoint, **form.cleaned_data)
        except ValidationError as exc:
            form.add_error(None, errors_text(exc))
        else:
            messages.success(request, gettext("Saved endpoint %(endpoint)s.") % {"endpoint": endpoint})
            for warning in services.endpoint_warnings(endpoint):
                messages.warning(request, warning)
            return redirect("grading:judges_home")
    warnings = services.endpoint_warnings(endpoint) if endpoint and request.method != "POST" else []
    return render(request, "grading/judges/judge_endpoint_form.html", {"form": form, "endpoint": endpoint, "warnings": warnings})


@admin_required
@require_POST
def endpoint_test(request, pk):
    """Admins only: ask a saved endpoint (an allowed host) for its models; the key is never shown."""
    endpoint = get_object_or_404(LlmEndpoint, pk=pk)
    answer = services.test_endpoint(endpoint)
    if isinstance(answer, dict):
        names = ", ".join(answer["models"]) or "none listed"
        messages.success(request, f"{endpoint} answered: models {names}.")
    else:
        messages.error(request, f"{endpoint} could not be reached: {answer}")
    return redirect("grading:judge_endpoint_edit", pk=endpoint.pk)


# --- runs ----------------------------------------------------------------------------------

RESPONSE_FILTER_KEYS = ("source", "level", "question", "exam", "status", "gold_status", "score_min", "score_max", "q")


def _filters_from(data):
    return {key: data.get(key, "") for key in RESPONSE_FILTER_KEYS if data.get(key, "") != ""}


@reviewer_required
def run_list(request):
    page = Paginator(selectors.run_list(request.GET), 50).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request, "grading/judges/run_list.html",
        {"page": page, "filters": request.GET, "querystring": query.urlencode(), "statuses": JudgeRun.Status.choices},
    )


@reviewer_required
def run_start(request):
    data = request.POST if request.method == "POST" else request.GET
    judge_settings = selectors.runnable_settings()
    form = RunStartForm(data if request.method == "POST" else None, judge_settings=judge_settings,
                        initial={"config": request.GET.get("config")})
    filters = _filters_from(data)
    n_matching = matching_responses(filters).count()
    chosen = selectors.setting_by_id(id_param(request.GET.get("config")))
    n_holdout = selectors.holdout_count(chosen, filters)  # issue 27: never judged by that setting
    if request.method == "POST" and form.is_valid():
        try:
            run = services.start_judge_run(
                form.cleaned_data["config"], params=filters, user=request.user, note=form.cleaned_data["note"],
                mode=form.cleaned_data["mode"], batch_retry=form.cleaned_data["batch_retry"],
            )
        except ValidationError as exc:
            form.add_error(None, errors_text(exc))
        else:
            messages.success(request, gettext("Started run %(pk)s over %(n_items)s responses.") % {"pk": run.pk, "n_items": run.n_items})
            return redirect("grading:judge_run_detail", pk=run.pk)
    context = {
        "form": form,
        "filters": filters,
        "n_matching": n_matching,
        "n_holdout": n_holdout,
        **response_filter_choices(),
    }
    return render(request, "grading/judges/run_start.html", context)


def estimate_view_data(estimate):
    """An estimate with its assumptions in the reader's language (the Start page's JSON, the run page)."""
    return {**estimate, "assumptions": services.describe_estimate(estimate)} if estimate else {}


@reviewer_required
def run_estimate(request):
    """The cost estimate of a run about to start (the Start page asks it for the chosen setting
    and selection): calls, tokens, cost live and batch, with the assumptions in words. Reads only."""
    setting_id = id_param(request.GET.get("config"))
    setting = selectors.runnable_settings().filter(pk=setting_id).first() if setting_id else None
    if request.GET.get("config") and setting is None:
        return JsonResponse({"error": gettext("No such judge setting can be run.")}, status=400)
    try:
        estimate = services.estimate_judge_run(setting, params=_filters_from(request.GET))
    except ValidationError as exc:
        return JsonResponse({"error": errors_text(exc)}, status=400)
    return JsonResponse(estimate_view_data(estimate))


@reviewer_required
def run_detail(request, pk):
    run = get_object_or_404(selectors.runs_for_detail(), pk)
    page = Paginator(selectors.run_items(run, request.GET), 50).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "run": run,
        "progress": selectors.run_progress(run),
        "page": page,
        "filters": request.GET,
        "querystring": query.urlencode(),
        "states": JudgeRunItem.State.choices,
        "full_score_kind": not KINDS[run.setting.kind].verdict if run.setting.kind in KINDS else True,
        "second_opinion": selectors.cas_disagreements(run) if run.setting.second_opinion else None,
        "estimate": estimate_view_data(run.estimate),
    }
    return render(request, "grading/judges/run_detail.html", context)


JUDGE_RUN_ACTIONS = run_action_views(
    model=JudgeRun, progress=selectors.run_progress, cancel=services.cancel_judge_run,
    resume=services.resume_judge_run, back="grading:judge_run_detail", title=lambda run: _("Run %d") % run.pk,
    cancelled=_lazy("%(run)s cancelled; calls in flight finish and are kept."),
    resumed=_lazy("%(run)s resumed: everything without a finished result is queued again."),
)


@reviewer_required
def result_detail(request, pk):
    result = get_object_or_404(selectors.results_for_detail(), pk)
    return render(request, "grading/judges/judge_result_detail.html", {"result": result})


@reviewer_required
def prompt_sets(request):
    """Issue 27: prompt variants from files (named prompt sets): import one, list them with their reports."""
    from annotation.importers import ImportFormatError  # noqa: PLC0415

    from . import prompt_sets as sets  # noqa: PLC0415

    form = PromptSetImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        try:
            manifest = form.cleaned_data["manifest"]
            if manifest and manifest.size > settings.IMPORT_MAX_BYTES:
                raise ImportFormatError(gettext("The hold-out manifest is larger than %(max)s bytes.")
                                        % {"max": settings.IMPORT_MAX_BYTES})
            manifest = sets.load_manifest(manifest.read()) if manifest else None
            source = form.cleaned_data["manifest_source"]
            if source is not None and manifest is None:
                raise ImportFormatError(gettext("The source file goes with a hold-out manifest."))
            prompt_set, report = sets.import_prompt_set(
                form.cleaned_data["file"], form.cleaned_data["file"].name, name=form.cleaned_data["name"],
                holdout_absent=form.cleaned_data["holdout_absent"], manifest=manifest,
                source=source, source_name=source.name if source is not None else None,
                exam_name=form.cleaned_data["exam"] or None, user=request.user)
        except (ImportFormatError, ValidationError) as exc:
            form.add_error(None, errors_text(exc) if isinstance(exc, ValidationError) else gettext("Nothing was imported. %(error)s") % {"error": exc})
        else:
            messages.success(request, gettext(
                "Prompt set %(name)s: %(matched)s prompts attached to existing answers, %(unmatched)s records "
                "unmatched, %(holdout)s hold-out answers; nothing created."
            ) % {"name": prompt_set.name, **report})
            return redirect(f"{request.path}#set-{prompt_set.name}")
    return render(request, "grading/judges/prompt_sets.html", {"form": form, "sets": sets.prompt_set_rows()})
