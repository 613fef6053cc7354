import pytest

from annotation.models import Question

from ..conftest import login, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_login_open_question_and_see_rendered_katex(page, live_server, sample_data, annotator):
    login(page, live_server, annotator.username)
    page.click("text=Questions")
    page.click("#question-table a >> nth=0")
    page.wait_for_selector("#problem")
    question = Question.objects.order_by("exam__name", "location", "id").first()
    assert f"/questions/{question.pk}/" in page.url
    # The reference solution and statement carry $...$ math in the sample; KaTeX renders it.
    page.wait_for_selector(".checkpoint")
    screenshot(page, "question_page")


def test_student_math_is_rendered_by_katex(page, live_server, sample_data, reviewer):
    login(page, live_server, reviewer.username)
    from annotation.models import Response

    response = Response.objects.filter(source="human", transcript__contains="$").first()
    page.goto(f"{live_server.url}/responses/{response.pk}/")
    page.wait_for_selector("#transcript .katex")
    assert page.locator("#transcript .katex").count() > 3
    screenshot(page, "response_page")
