"""Math in statements, rubrics and step-label quotes renders with KaTeX on the labelling,
adjudication and disagreement review pages, in a real browser, whether or not the text delimits it
(the release data has no `$`: `e^{x} - \\frac{3}{2}x^{2}`)."""
import pytest

from annotation.labelling import services
from annotation.models import Response

from ..conftest import login, screenshot
from ..factories import make_checkpoints, make_question, make_responses, make_results, make_stored_setting, set_gold
from .helpers import assert_quotes_rendered, quoted_gold

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

STATEMENT = "Let f(x)=e^{x} - \\frac{3}{2}x^{2}-ax. Discuss the monotonicity of f."
REFERENCE = "(1) f'(x)=e^{x}-3x-a ------5 points\n(2) when a\\leq 1, f is increasing ------10 points"
# The reference panel of each page (the adjudication page shows the reference without the rubric's checkpoints).
REFERENCE_PANEL = {"label": "#reference", "adjudicate": "section.panel:has(h2:text-is('Reference solution'))",
                   "review_case": "#reference"}


def bare_question():
    question = make_question(STATEMENT, location="7-01")
    question.reference_solution = REFERENCE
    question.save()
    make_checkpoints(question)
    return question


def open_page(page, live_server, which, question, annotator, reviewer):
    responses = make_responses(question, 1)
    if which == "label":
        services.assign_responses(responses=Response.objects.filter(pk=responses[0].pk), annotators=[annotator],
                                  per_response=1, strategy="round_robin")
        login(page, live_server, annotator.username)
        page.goto(f"{live_server.url}/label/{responses[0].pk}/")
    elif which == "adjudicate":
        login(page, live_server, reviewer.username)
        page.goto(f"{live_server.url}/adjudication/{responses[0].pk}/")
    else:
        set_gold(responses, [5])
        setting = make_stored_setting("rubric-judge")
        (result,) = make_results(setting, responses, [9])
        login(page, live_server, reviewer.username)
        page.goto(f"{live_server.url}/grading/review/disagreements/{result.pk}/?setting={setting.pk}")


@pytest.mark.parametrize("which", ["label", "adjudicate", "review_case"])
def test_bare_latex_statement_and_rubric_render_as_math(page, live_server, annotator, reviewer, which):
    open_page(page, live_server, which, bare_question(), annotator, reviewer)
    problem = page.locator("#problem .math")
    problem.locator(".katex").first.wait_for()
    shown = problem.inner_text()
    assert "\\frac" not in shown and "e^{x}" not in shown and "monotonicity" in shown, shown
    reference = page.locator(REFERENCE_PANEL[which]).locator(".math")
    assert reference.count() == 1
    reference.locator(".katex").first.wait_for()
    shown = reference.inner_text()
    assert "\\leq" not in shown and "e^{x}" not in shown and "increasing" in shown, shown
    screenshot(page, f"bare_latex_{which}")


def test_step_label_quotes_render_as_math_on_the_adjudication_page(page, live_server, annotator, annotator2,
                                                                    reviewer):
    question = make_question("Find $y'$.", location="7-02")
    (response,) = make_responses(question, 1)
    quoted_gold(response, annotator)
    quoted_gold(response, annotator2)
    login(page, live_server, reviewer.username)
    page.goto(f"{live_server.url}/adjudication/{response.pk}/")
    for card in page.locator(".label-card").all():
        assert_quotes_rendered(card, ".step-list .q")
    assert page.locator(".label-card").count() == 2
    screenshot(page, "adjudicate_step_quotes")
