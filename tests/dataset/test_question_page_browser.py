import pytest
from django.core.management import call_command

from annotation.models import Question
from tests.conftest import INEQMATH_SAMPLE, login, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_login_open_question_and_see_rendered_katex(page, live_server, sample_data, annotator):
    call_command("import_ineqmath", str(INEQMATH_SAMPLE))
    login(page, live_server, annotator.username)
    page.hover(".menu-group[data-group=data]")
    page.click(".menu-group[data-group=data] >> text=Questions")
    question = Question.objects.get(external_id="0")
    page.click(f"#question-table a[href='/questions/{question.pk}/'] >> nth=0")
    page.wait_for_selector("#problem")
    assert f"/questions/{question.pk}/" in page.url
    # The IneqMath statement is LaTeX between $...$ and $$...$$: KaTeX must have rendered it.
    page.wait_for_selector("#problem .katex")
    assert page.locator("#problem .katex-display").count() >= 1
    assert "\\frac" not in page.inner_text("#problem")
    screenshot(page, "question_page")


def test_rubric_checkpoints_are_highlighted(page, live_server, sample_data, annotator):
    login(page, live_server, annotator.username)
    question = Question.objects.get(location="3-08")
    page.goto(f"{live_server.url}/questions/{question.pk}/")
    assert page.locator("#reference .checkpoint").count() == 4
    screenshot(page, "question_rubric_page")


def test_student_math_is_rendered_by_katex(page, live_server, sample_data, reviewer):
    login(page, live_server, reviewer.username)
    from annotation.models import Response

    response = Response.objects.filter(source="human", transcript__contains="$").first()
    page.goto(f"{live_server.url}/responses/{response.pk}/")
    page.wait_for_selector("#transcript .katex")
    assert page.locator("#transcript .katex").count() > 3
    screenshot(page, "response_page")


def test_bare_latex_statement_and_rubric_render_as_math(page, live_server, annotator):
    """Release statements carry LaTeX without delimiters; it must still render (and be escaped)."""
    from tests.factories import make_question

    question = make_question("已知函数f(x)=e^{x}-\\frac{3}{2}x^{2}-ax，讨论f(x)的单调性。<b>bold?</b>")
    question.reference_solution = "(1) f'(x)=e^{x}-3x-a ------5 points\n(2) 当 a\\leq 1 时 ... ------10 points"
    question.save()
    login(page, live_server, annotator.username)
    page.goto(f"{live_server.url}/questions/{question.pk}/")
    page.wait_for_selector("#problem .katex")
    problem = page.inner_text("#problem")
    assert "\\frac" not in problem and "讨论" in problem and "<b>bold?</b>" in problem  # escaped, not HTML
    assert page.locator("#problem b").count() == 0
    page.wait_for_selector("#reference .katex")
    assert "\\leq" not in page.inner_text("#reference")
    screenshot(page, "question_bare_latex")
