"""Template hooks of the judges on pages other apps own (start page, response page)."""
from django import template

from accounts.roles import is_reviewer
from annotation.selectors import can_see_scores

from ..judges import selectors

register = template.Library()


@register.inclusion_tag("grading/judges/judge_results_panel.html", takes_context=True)
def judge_results_panel(context, response):
    """Judge results of a response: for reviewers, and for annotators only when the blind rule allows."""
    user = context["request"].user
    visible = can_see_scores(user, response)
    results = selectors.results_for_response(response) if visible else []
    return {
        "visible": visible,
        "results": results,
        "overall": selectors.ineqmath_overall(results) if results else None,
        "response": response,
        "is_reviewer": is_reviewer(user),
        "open": context["request"].GET.get("judges") == "open",
    }


@register.inclusion_tag("grading/judges/judge_home_panel.html")
def judges_home_panel():
    return {"runs": selectors.run_list()[:5]}


@register.inclusion_tag("grading/review/rubric_rejudge_panel.html", takes_context=True)
def rubric_rejudge_panel(context, question):
    """On the question page, for reviewers, once its rubric was edited: the settings that judged
    it against an older rubric version, and the button that re-judges it with them."""
    user = context["request"].user
    shown = is_reviewer(user) and question.rubric_version > 1
    return {
        "shown": shown,
        "question": question,
        "stale": selectors.stale_settings(question) if shown else [],
        "csrf_token": context.get("csrf_token"),
    }
