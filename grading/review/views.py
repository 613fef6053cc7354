"""Pages of the judge-vs-human review (reviewers and admins only): metrics, the disagreement
queue and its review screen, category counts, and step-judge validation."""
import csv
import json
from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.functional import lazy
from django.utils.translation import gettext, gettext_lazy, ngettext
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy as _lazy
from django.views.decorators.http import require_POST

from accounts.decorators import reviewer_required
from annotation import selectors as annotation_selectors
from annotation.models import Response
from annotation.selectors import question_choices, reference_segments
from core.csv_cells import safe_row
from core.ids import id_param
from core.shortcuts import found_or_404, get_object_or_404

from ..judges import selectors as judge_selectors
from ..judges import services as judge_services
from ..judges.services import RunRefused
from ..labels import label
from ..models import MetaEvalRun
from ..runs.views import run_action_views
from ..uncertainty_text import interval as interval_text
from ..uncertainty_text import p_value as p_text
from . import selectors, services
from .meta_eval import CATEGORIES, CATEGORY_DISPLAY

# The queue's filters (one FilterSet: grading.review.selectors.QueueFilter) and the page's own order.
QUEUE_FILTERS = (*selectors.QUEUE_FILTERS, "order")
ATTRIBUTIONS = {"ocr": gettext_lazy("OCR (raw text only)"), "judge": gettext_lazy("judge"), "both": lazy(label, str)("attribution", "both"), "none": gettext_lazy("not attributed")}


SCOPE_SESSION_KEY = "review_setting"


def _scope_or_404(request, params=None):
    """The scope the page is about; a setting chosen on the page is remembered for the person's
    next visit without one (the session), else the newest setting with results to compare."""
    params = request.GET if params is None else params
    try:
        scope = selectors.resolve_scope(params, preferred=request.session.get(SCOPE_SESSION_KEY))
    except selectors.ScopeError as exc:
        raise Http404(str(exc)) from exc
    if scope.setting is not None and (params.get("setting") or params.get("run")):
        request.session[SCOPE_SESSION_KEY] = scope.setting.pk
    return scope


def _scope_context(scope):
    return {
        "scope": scope,
        "settings_list": selectors.settings_with_results(),
        "runs": selectors.recent_runs(),
        "scope_query": urlencode(scope.query()),
    }


# --- metrics -------------------------------------------------------------------------------

def _fmt(value, percent=False):
    if value is None:
        return "—"
    return f"{value * 100:.1f}%" if percent else f"{value:.3f}"


def _fmt_ci(bounds, percent=False, note=""):
    """An interval in brackets, or why there is none ("not estimable: 1 question")."""
    return interval_text(bounds, lambda value: _fmt(value, percent), note=note)


def _display_row(entry):
    """One metrics table row as text (percentages for failure rates, intervals in brackets, the
    reason where an interval is not estimable)."""
    note = (entry.get("uncertainty") or {}).get("note", "")
    return {
        "key": entry.get("key"), "label": entry.get("label", "All"), "n": entry["n"],
        "mse": _fmt(entry["mse"]), "mse_ci": _fmt_ci(entry.get("mse_ci"), note=note),
        "mae": _fmt(entry["mae"]), "signed": _fmt(entry["mean_signed_error"]),
        "signed_ci": _fmt_ci(entry.get("mean_signed_error_ci"), note=note),
        "fr": [(_fmt(entry[f"fr_{d}"], True), _fmt_ci(entry.get(f"fr_{d}_ci"), True, note=note)) for d in range(1, 6)],
        "unit": (entry.get("uncertainty") or {}).get("unit"),
        "pearson": _fmt(entry["pearson"]), "spearman": _fmt(entry["spearman"]),
        "over": entry["over"], "under": entry["under"],
    }


def _display_report(report):
    gap = report["gap"]
    return {
        "overall": _display_row({"label": "All", **report["overall"]}),
        "groups": [
            (gettext("By source"), [_display_row(e) for e in report["by_source"]]),
            (gettext("By level"), [_display_row(e) for e in report["by_level"]]),
            (gettext("By batch (exam)"), [_display_row(e) for e in report["by_exam"]]),
            (gettext("By question"), [_display_row(e) for e in report["by_question"]]),
        ],
        "gap": {
            "ratio": "—" if gap["mse_ratio"] is None else f"{gap['mse_ratio']:.2f}×",
            "ratio_ci": interval_text(gap["mse_ratio_ci"], lambda value: f"{value:.2f}",
                                      unbounded=(gap.get("uncertainty") or {}).get("ratio_unbounded", False),
                                      note=(gap.get("uncertainty") or {}).get("note", "")),
            "fr2_human": _fmt(gap["fr2_human"], True), "fr2_synthetic": _fmt(gap["fr2_synthetic"], True),
            "fr2_difference_ci": _fmt_ci(gap["fr2_difference_ci"], True,
                                         note=(gap.get("uncertainty") or {}).get("note", "")),
        },
    }


@reviewer_required
def metrics_page(request):
    scope = _scope_or_404(request)
    report = selectors.metrics_report(scope)
    context = {
        **_scope_context(scope), "report": report, "display": _display_report(report), "tab": "metrics",
        "ledger": [_display_ledger_row(row) for row in report["sub_question_ledger"]],
    }
    return render(request, "grading/review/metrics.html", context)


def _display_ledger_row(row):
    return {
        **row, "mae_text": _fmt(row["mae"]), "fr_1_text": _fmt(row["fr_1"], True),
        "signed_text": _fmt(row["mean_signed_error"]),
        "max_text": "—" if row["max_points"] is None else f"{row['max_points']:g}",
    }


@reviewer_required
def metrics_csv(request):
    scope = _scope_or_404(request)
    rows = selectors.metrics_table(selectors.metrics_report(scope))
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    name = f"metrics-{scope.run.pk if scope.run else scope.setting.pk if scope.setting else 'none'}"
    response["Content-Disposition"] = f'attachment; filename="{name}.csv"'
    writer = csv.writer(response)
    for row in rows:
        writer.writerow(safe_row(["" if value is None else value for value in row]))
    return response


# --- disagreement queue --------------------------------------------------------------------

def _queue_params(request):
    params = {key: request.GET.get(key, "") for key in QUEUE_FILTERS if request.GET.get(key)}
    threshold = selectors.parse_threshold(request.GET.get("threshold"))
    return params, threshold


def _queue_query(scope, threshold, params, **extra):
    return urlencode({**scope.query(), "threshold": f"{threshold:g}", **params, **extra})


@reviewer_required
def disagreement_list(request):
    scope = _scope_or_404(request)
    params, threshold = _queue_params(request)
    if threshold is None:
        messages.error(request, gettext("The threshold must be a number of points ≥ 0; showing the default of 2."))
        threshold = selectors.DEFAULT_THRESHOLD
    for name, errors in selectors.queue_filter_errors(params).items():
        messages.error(request, _("Filter %(name)s left out: %(errors)s") % {"name": name, "errors": " ".join(errors)})
    queue = selectors.disagreement_queue(scope, threshold, params)
    page = Paginator(selectors.queue_page_rows(queue, order=params.get("order", "id")), 50).get_page(
        request.GET.get("page")
    )
    context = {
        **_scope_context(scope),
        "threshold": threshold,
        "filters": params,
        "page": page,
        "stats": selectors.queue_stats(queue),
        "proposal_counts": selectors.proposal_counts(queue),
        "query": _queue_query(scope, threshold, params),
        "questions": question_choices(),
        "categories": CATEGORY_DISPLAY,
        "states": selectors.QUEUE_STATES,
        "attributions": ATTRIBUTIONS,
        "sources": Response.Source.choices,
        "endpoints": judge_selectors.endpoint_list(),
        "meta_runs": [selectors.meta_eval_run_progress(run) for run in selectors.recent_meta_eval_runs(5)],
    }
    return render(request, "grading/review/disagreement_list.html", context)


@reviewer_required
def disagreement_review(request, pk):
    scope = _scope_or_404(request)
    params, threshold = _queue_params(request)
    threshold = selectors.DEFAULT_THRESHOLD if threshold is None else threshold
    case = found_or_404(selectors.review_case, pk, message="No such judge result.")
    queue = selectors.disagreement_queue(scope, threshold, params)
    query = _queue_query(scope, threshold, params)
    error, stale = None, False
    if request.method == "POST":
        try:
            services.confirm_meta_evaluation(
                case["result"], user=request.user, category=request.POST.get("category"),
                analysis=request.POST.get("analysis", ""), is_ood=request.POST.get("is_ood") == "on",
                base_version=request.POST.get("version") or 0,
            )
        except services.StaleMetaEvaluation as exc:
            error, stale = str(exc), True
        except ValidationError as exc:
            error = " ".join(exc.messages)
        else:
            messages.success(request, gettext("Saved category %(upper)s for case %(pk)s.") % {"upper": request.POST.get('category', '').upper(), "pk": pk})
            around = selectors.neighbours(queue, pk, params.get("order", "id"))
            target = around["next_todo"] if request.POST.get("then") == "next" and around["next_todo"] else pk
            return redirect(f"{reverse('grading:review_case', args=[target])}?{query}")
        case = selectors.review_case(pk)
    around = selectors.neighbours(queue, pk, params.get("order", "id"))
    stats = selectors.queue_stats(queue)
    context = {
        **case,
        "scope": scope,
        "threshold": threshold,
        "query": query,
        "around": around,
        "stats": stats,
        "in_queue": queue.filter(pk=pk).exists(),
        "segments": reference_segments(case["question"]),
        "categories": CATEGORY_DISPLAY,
        "history": selectors.meta_history(case["meta"]),
        "error": error,
        "posted": request.POST if error else None,
        "selected_category": _selected_category(request.POST if error else None, case),
    }
    return render(request, "grading/review/disagreement_review.html", context, status=409 if stale else 200)


def _selected_category(posted, case):
    """The category ticked when the screen opens: what was just posted, else the saved one, else the LLM's."""
    if posted and posted.get("category"):
        return posted["category"].upper()
    if case["meta"] is not None and case["meta"].category:
        return case["meta"].category
    return case["latest_proposal"].category if case["latest_proposal"] else ""


@reviewer_required
@require_POST
def start_meta_eval_run(request):
    scope = _scope_or_404(request, request.POST)
    threshold = selectors.parse_threshold(request.POST.get("threshold"))
    shown = {key: request.POST.get(key) for key in QUEUE_FILTERS if request.POST.get(key)}
    # The run asks about the filtered cases whatever their state; the list comes back as it was.
    params = {key: value for key, value in shown.items() if key not in ("state", "order")}
    endpoint = judge_selectors.endpoint_by_id(id_param(request.POST.get("endpoint")))
    back = f"{reverse('grading:review_disagreements')}?{_queue_query(scope, threshold or 2, shown)}"
    if endpoint is None or threshold is None:
        messages.error(request, gettext("Choose an endpoint and a threshold ≥ 0."))
        return redirect(back)
    try:
        run = services.start_meta_eval_run(
            endpoint=endpoint, model=request.POST.get("model", ""), scope=scope, threshold=threshold,
            params=params, user=request.user, only_open=request.POST.get("all") != "on",
        )
    except RunRefused as exc:
        messages.error(request, " ".join(exc.messages))
        return redirect(back)
    messages.success(request, gettext("The meta-evaluator is proposing categories for %(n_items)s cases.") % {"n_items": run.n_items})
    return redirect(back)


META_EVAL_RUN_ACTIONS = run_action_views(
    model=MetaEvalRun, progress=selectors.meta_eval_run_progress, cancel=services.cancel_meta_eval_run,
    resume=services.resume_meta_eval_run, back=lambda run: reverse("grading:review_disagreements"),
    title=lambda run: _("Meta-evaluation run %d") % run.pk, cancelled=_lazy("%(run)s cancelled."),
    resumed=_lazy("%(run)s resumed: every case without an answer is asked again."),
)


def moved_permanently(pattern_name):
    """The page's old address (``prelabel/``, before the meta-evaluation run had one name):
    a 308, so a posted form is posted again, with its body, to the new address."""

    def view(request, **kwargs):
        target = reverse(pattern_name, kwargs=kwargs)
        if request.META.get("QUERY_STRING"):
            target = f"{target}?{request.META['QUERY_STRING']}"
        return PermanentRedirect308(target)

    return view


class PermanentRedirect308(HttpResponseRedirect):
    status_code = 308


# --- rubric re-judging ----------------------------------------------------------------------

def _display_side(side):
    if side is None:
        return None
    return {**side, "mse_text": _fmt(side["mse"]), "fr_2_text": _fmt(side["fr_2"], True),
            "versions_text": ", ".join(f"v{v}" for v in side["rubric_versions"])}


@reviewer_required
def rubric_rejudge(request, question_pk):
    """After a rubric edit: re-judge the question with the settings that used an older rubric
    version (POST), and MSE, FR_2 and category counts before and after, per setting (GET)."""
    question = get_object_or_404(annotation_selectors.questions_with_exam(), pk=question_pk)
    if request.method == "POST":
        chosen = [id_param(value) for value in request.POST.getlist("setting")]
        made, refused = judge_services.rejudge_question(
            question, setting_ids=[pk for pk in chosen if pk is not None], user=request.user,
        )
        for setting, why in refused:
            messages.error(request, gettext("%(config)s: not re-judged. %(why)s") % {"config": setting, "why": why})
        if made:
            messages.success(request, ngettext("Re-judging %(sum)s results in %(n_made)s run; the figures below fill in as they finish.", "Re-judging %(sum)s results in %(n_made)s runs; the figures below fill in as they finish.", len(made)) % {"sum": sum(run.n_items for run in made), "n_made": len(made)})
        elif not refused:
            messages.info(request, gettext("Nothing to re-judge: no chosen setting has results against an older rubric."))
        return redirect("grading:review_rubric_rejudge", question_pk=question.pk)
    comparison = selectors.rubric_comparison(question)
    rows = [{**row, "before": _display_side(row["before"]), "after": _display_side(row["after"])}
            for row in comparison["settings"]]
    context = {
        "question": question, "comparison": comparison, "rows": rows,
        "stale": judge_selectors.stale_settings(question), "categories": CATEGORY_DISPLAY,
    }
    return render(request, "grading/review/rubric_rejudge.html", context)


# --- categories ----------------------------------------------------------------------------

@reviewer_required
def category_page(request):
    params = {"setting": request.GET.get("setting", "")}
    summary = selectors.category_summary(params)
    context = {
        "summary": summary,
        "cards": list(zip(summary["categories"], summary["counts"])),
        "groupings": [
            (gettext("By judge"), summary["by_judge"]), (gettext("By source"), summary["by_source"]),
            (gettext("By question"), summary["by_question"]), (gettext("By direction"), summary["by_direction"]),
            (gettext("By origin of the label"), summary["by_origin"]),
        ],
        "confusion_rows": list(zip(CATEGORIES, summary["prelabel"]["confusion"])),
        "settings_list": selectors.settings_with_results(),
        "selected_setting": params["setting"],
        "tab": "categories",
    }
    return render(request, "grading/review/review_categories.html", context)


# --- step-judge validation -----------------------------------------------------------------

def _judge_picker(judges):
    """[(slot, label, setting versions with results, the chosen one)] for the judge picker."""
    return [
        (slot, label, judges["available"][slot], judges["chosen"][slot])
        for slot, label, _ in selectors.JUDGE_SLOTS
    ]


def _validation_query(judges, extra=None):
    chosen = {f"judge_{slot}": setting.pk for slot, setting in judges["chosen"].items() if setting is not None}
    return urlencode({**chosen, **(extra or {})})


@reviewer_required
def validation_list(request):
    judges = selectors.validation_judges(request.GET)
    params = {"state": request.GET.get("state", ""), "question": request.GET.get("question", "")}
    ids = selectors.validation_response_ids(judges["chosen"], params)
    page = Paginator(ids, 50).get_page(request.GET.get("page"))
    context = {
        "picker": _judge_picker(judges),
        "slots": [(slot, label) for slot, label, _ in selectors.JUDGE_SLOTS if judges["chosen"].get(slot)],
        "tab": "validation",
        "page": page,
        "rows": selectors.validation_rows(judges["chosen"], list(page.object_list)),
        "query": _validation_query(judges),
        "filters": params,
    }
    return render(request, "grading/review/validation_list.html", context)


@reviewer_required
def validation_case(request, pk):
    judges = selectors.validation_judges(request.GET)
    case = found_or_404(selectors.validation_case, pk, judges["chosen"], message="No such response.")
    query = _validation_query(judges)
    if request.method == "POST":
        marks, notes = {}, {}
        for item in case["judges"]:
            result = item["result"]
            if result is None:
                continue
            value = request.POST.get(f"mark_{result.pk}", "")
            if value in ("right", "wrong", "clear"):
                marks[result.pk] = {"right": True, "wrong": False, "clear": None}[value]
                notes[result.pk] = request.POST.get(f"note_{result.pk}", "")
        try:
            saved = services.save_step_validations(case["response"], marks, user=request.user, notes=notes)
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
        else:
            messages.success(request, gettext("Saved %(saved)s verdict mark(s) for response %(pk)s.") % {"saved": saved, "pk": pk})
            ids = selectors.validation_response_ids(judges["chosen"])
            following = ids.filter(response_id__gt=pk).first() if request.POST.get("then") == "next" else None
            return redirect(f"{reverse('grading:review_validation_case', args=[following or pk])}?{query}")
    ids = selectors.validation_response_ids(judges["chosen"])
    context = {
        **case,
        "segments": reference_segments(case["question"]) if case["question"].reference_solution else [],
        "previous": ids.filter(response_id__lt=pk).order_by("-response_id").first(),
        "next": ids.filter(response_id__gt=pk).first(),
        "query": query,
        "tab": "validation",
    }
    return render(request, "grading/review/validation_case.html", context)


@reviewer_required
def validation_report(request):
    judges = selectors.validation_judges(request.GET)
    positive = request.GET.get("positive") if request.GET.get("positive") in selectors.POSITIVE_CLASSES else "flaw"
    report = selectors.validation_report(judges["chosen"], positive)
    for model in report["models"]:
        model["answer_text"], model["overall_text"] = _fmt(model["answer_acc"], True), _fmt(model["overall_acc"], True)
        for step in model["step_acc"]:
            step["text"] = _fmt(step["acc"], True)
    context = {
        "picker": _judge_picker(judges),
        "report": report,
        "tab": "validation_report",
        "positive_classes": selectors.POSITIVE_CLASSES,
        "query": _validation_query(judges),
        "step_labels": [label for slot, label, _ in selectors.JUDGE_SLOTS if slot in selectors.STEP_SLOTS and judges["chosen"].get(slot)],
    }
    return render(request, "grading/review/validation_report.html", context)


# --- compare settings, paired -------------------------------------------------------------------

@reviewer_required
def compare_page(request):
    """Two or more judge setting versions on the answers each pair of them scored: paired
    differences with cluster-bootstrap intervals, sign and permutation tests; `format=json`
    downloads the same figures."""
    raw = request.GET.getlist("setting")
    chosen = [pk for pk in (id_param(v) for v in raw) if pk is not None]
    exam = annotation_selectors.exam_by_id(id_param(request.GET.get("exam")))
    seed = id_param(request.GET.get("seed")) or 0
    data, error = None, None
    if len(chosen) < len(raw):
        error = _("%(value)s is not a setting id.") % {"value": next(v for v in raw if id_param(v) is None)}
    elif raw:
        try:
            data = selectors.compare_settings(selectors.resolve_settings(chosen), exam=exam, seed=seed)
        except selectors.CompareError as exc:
            error = str(exc)
    if data is not None and request.GET.get("format") == "json":
        response = HttpResponse(json.dumps(data, indent=2, ensure_ascii=False), content_type="application/json; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="compare-settings.json"'
        return response
    for pair in (data or {}).get("pairs", []):
        _display_comparison(pair["overall"])
        for row in pair["by_source"]:
            _display_comparison(row)
        cases = pair["cases"]
        pair["case_lists"] = [
            (_("A within 1 of gold, B off by 2 or more"), cases["n_a_close_b_off"], cases["a_close_b_off"]),
            (_("B within 1 of gold, A off by 2 or more"), cases["n_b_close_a_off"], cases["b_close_a_off"]),
        ]
    return render(request, "grading/review/compare.html", {
        "tab": "compare", "data": data, "error": error, "chosen": set(chosen), "exam": exam, "seed": seed,
        "resampling_text": selectors.METHOD_TEXT.get((data or {}).get("resampling"), (data or {}).get("resampling")),
        "rule_text": selectors.METHOD_TEXT.get(((data or {}).get("selection") or {}).get("rule"), ""),
        "settings_list": selectors.settings_with_results(), "exams": annotation_selectors.exams_by_name(),
        "measures": comparison_rows(), "json_query": request.GET.urlencode(),
    }, status=400 if error else 200)


def comparison_rows():
    return [("MSE", "mse"), ("MAE", "mae"), (_("|Bias|, absolute mean signed error"), "abs_bias"),
            (_("Bias, mean signed error (its B − A shows the direction, not closeness)"), "bias"),
            *((f"FR_{d}", f"fr_{d}") for d in (1, 2, 3, 4, 5)), (_("Pearson r"), "pearson")]


def _display_comparison(result):
    """Texts of one paired comparison (overall or a source): each interval or why there is none,
    the p-values at their resolution."""
    note = result.get("interval_note", "")
    for measure in (result.get("measures") or {}).values():
        measure["ci_text"] = _fmt_ci(measure["ci"], note=measure.get("ci_note") or note)
    permutation = result.get("permutation") or {}
    permutation["p_text"] = p_text(permutation.get("p_value"), permutation.get("resolution"))
    sign = result.get("sign_test") or {}
    sign["p_text"] = p_text(sign.get("p_value"))
