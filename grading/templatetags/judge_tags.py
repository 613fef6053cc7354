"""Template hooks of the judges on pages other apps own (start page, response page)."""
from django import template

from accounts.roles import is_reviewer
from annotation.selectors import can_see_scores

from ..judges import selectors

register = template.Library()


@register.inclusion_tag("grading/judge_results_panel.html", takes_context=True)
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


@register.inclusion_tag("grading/judge_home_panel.html")
def judges_home_panel():
    return {"runs": selectors.run_list()[:5]}
