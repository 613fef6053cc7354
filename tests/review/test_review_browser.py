"""A reviewer in a real browser: metrics plots, the disagreement queue, classifying cases by keyboard."""
import pytest
from django.core.management import call_command

from annotation.models import Response
from grading.models import JudgeConfig, MetaEvaluation
from tests.conftest import DEMO_DIR, login, screenshot

from .helpers import make_results, make_setting

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_reviewer_classifies_queued_cases_by_keyboard(page, live_server, sample_data, reviewer):
    call_command("import_judge_results", str(DEMO_DIR / "meta_eval_input_examples.json"))
    config = JudgeConfig.objects.get(kind=JudgeConfig.Kind.EXTERNAL)
    login(page, live_server, reviewer.username)
    page.click("text=Judge vs human")
    page.wait_for_selector("#metrics-table")
    page.goto(f"{live_server.url}/grading/review/disagreements/?setting={config.pk}")
    assert page.inner_text("#queue-total") == "2"
    assert page.locator("#queue-table tbody tr").count() == 2
    screenshot(page, "review_queue")

    page.click("#start-review")
    page.wait_for_selector("#classify-form")
    page.wait_for_selector("#student-answer .katex")  # the student's math is rendered
    assert page.locator("#reference .checkpoint").count() == 4  # rubric checkpoints of 3-08
    assert "Overall Score" in page.inner_text("#judge-panel")
    assert page.inner_text("#delta") == "Δ +2"
    page.keyboard.press("c")
    assert page.locator("input[name=category][value=C]").is_checked()
    page.keyboard.press("b")
    assert page.locator("input[name=category][value=B]").is_checked()
    page.keyboard.press("/")
    page.keyboard.type("The judge credits part (3) although the student only states the result.")
    page.keyboard.press("Escape")
    screenshot(page, "review_case")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("text=Saved category B")
    assert page.inner_text("#delta") == "Δ +3"  # moved on to the next unclassified case
    page.keyboard.press("a")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("text=Saved category A")

    labels = {m.result.response.student_id[:8]: (m.category, m.direction, m.confirmed_by_id)
              for m in MetaEvaluation.objects.select_related("result__response")}
    assert labels == {"19a84ba4": ("B", "over", reviewer.pk), "3ffe33a0": ("A", "over", reviewer.pk)}
    assert "only states the result" in MetaEvaluation.objects.get(category="B").analysis

    page.goto(f"{live_server.url}/grading/review/disagreements/?setting={config.pk}")
    assert page.inner_text("#queue-confirmed") == "2 / 2"
    page.goto(f"{live_server.url}/grading/review/categories/")
    page.wait_for_selector("#category-cards")
    assert page.inner_text("#category-cards [data-code=A] .count") == "1"
    assert page.inner_text("#category-cards [data-code=B] .count") == "1"
    screenshot(page, "review_categories")


def test_metrics_page_draws_its_plots(page, live_server, sample_data, reviewer):
    responses = list(Response.objects.order_by("pk"))
    scores = [max(0.0, min(float(r.question.full_score), float(r.gold_score) + ((i * 7) % 5 - 2) * (1.5 if r.source == "human" else 0.5)))
              for i, r in enumerate(responses)]
    config = make_setting("demo judge")
    make_results(config, responses, scores)
    login(page, live_server, reviewer.username)
    page.goto(f"{live_server.url}/grading/review/metrics/?setting={config.pk}")
    page.wait_for_selector("#metrics-table")
    assert page.inner_text("#n-counted") == "64"
    drawn = page.evaluate(
        "() => ['plot-scatter', 'plot-fr', 'plot-delta'].map(id => !!Chart.getChart(document.getElementById(id)))"
    )
    assert drawn == [True, True, True]
    assert page.inner_text("#gap-ratio").endswith("×")
    screenshot(page, "review_metrics")
    with page.expect_download() as download:
        page.click("#csv-link")
    assert download.value.suggested_filename == f"metrics-{config.pk}.csv"
