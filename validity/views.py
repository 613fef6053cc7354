"""The Validity view (reviewers: it shows judge scores beside golds). Thin: the form reads the
query string, selectors read the rows, `report` computes, services write the draws."""
from django.contrib import messages
from django.http import JsonResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext, ngettext
from django.views.decorators.http import require_POST

from accounts.decorators import reviewer_required

from . import selectors, services
from .forms import ValidityForm
from .report import for_selection


def _selection_error(code):
    return {
        "setting": gettext("No such judge setting."), "exam": gettext("No such exam."),
        "question": gettext("No such question with answers."),
        "source": gettext("Answers are human, synthetic or all."), "second": gettext("No such second setting."),
    }[code]


def build(params_source):
    """(form, selection, report or None, error) for a query string."""
    settings = selectors.settings_with_results()
    data = params_source.copy()
    if not data.get("setting") and data.get("run"):  # from the review pages' run scope
        data["setting"] = selectors.setting_of_run(data.get("run")) or ""
    if not data.get("setting") and settings:
        data["setting"] = str(settings[0].pk)
    form = ValidityForm(data, settings=settings)
    if not settings:
        return form, None, None, gettext("No judge setting has results yet: run a judge first.")
    if not form.is_valid():
        return form, None, None, None
    try:
        selection = selectors.selection_from(form.cleaned_data)
    except selectors.SelectionError as exc:
        return form, None, None, _selection_error(str(exc))
    return form, selection, for_selection(selection, form.parameters()), None


@reviewer_required
def validity_page(request):
    form, selection, built, error = build(request.GET)
    if built is not None and request.GET.get("format") == "json":
        return JsonResponse(built[0], json_dumps_params={"ensure_ascii": False, "indent": 1})
    return render(request, "validity/validity.html", {
        "form": form, "error": error, "selection": selection, "report": built[0] if built else None,
        "draws": selectors.draws(selection.setting) if selection else [],
        "query": request.GET.urlencode(),
    })


@reviewer_required
@require_POST
def validity_assign(request):
    """Draw and assign: golds at random (`golds`, with `n`), third labels for the Alternative
    Annotator Test (`aat`), or the answers the judge may not grade alone (`deferred`)."""
    query = request.POST.get("query", "")
    back = f"{reverse('validity:page')}?{query}" if query else reverse("validity:page")
    form, selection, built, error = build(QueryDict(query))
    if built is None:
        messages.error(request, error or gettext("Choose a judge setting first."))
        return redirect(back)
    report, rows = built
    seed = form.parameters().seed
    action = request.POST.get("action")
    try:
        if action == "golds":
            try:
                n = int(str(request.POST.get("n", "")).strip())
            except ValueError:
                n = 0
            if n < 1 or n > 100_000:
                messages.error(request, gettext("Give how many golds to draw: a whole number from 1 to 100000."))
                return redirect(back)
            draw, result = services.draw_golds(selection, rows, n, seed=seed, user=request.user)
        elif action == "aat":
            draw, result = services.assign_for_alt_test(selection, rows, seed=seed, user=request.user)
        elif action == "deferred":
            draw, result = services.assign_deferred(selection, report["deferral"].get("human_answers") or [], seed=seed,
                                                    user=request.user)
        else:
            messages.error(request, gettext("Unknown action."))
            return redirect(back)
    except services.DrawError as exc:
        messages.error(request, gettext("No annotator is active: add one first.") if str(exc) == "annotators"
                       else gettext("No answer to draw from in this selection."))
        return redirect(back)
    messages.success(request, ngettext(
        "Drawn with seed %(seed)s: %(n)s answer sent to the experts (%(created)s new assignments).",
        "Drawn with seed %(seed)s: %(n)s answers sent to the experts (%(created)s new assignments).",
        len(draw.response_ids)) % {"seed": draw.seed, "n": len(draw.response_ids), "created": result.created})
    return redirect(back)

