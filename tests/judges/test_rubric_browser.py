"""A reviewer edits a rubric, re-judges the question from its page, reads before and after, and
sees the per-sub-question ledger drawn on the metrics page (Chromium, loopback LLM server)."""
import re

import pytest

from annotation.models import Question
from grading.models import JudgeResult
from tests.conftest import login, screenshot
from tests.factories import make_checkpoints, make_imported_gold, make_question, make_responses, make_setting, set_gold
from tests.llm_server import Reply, message_text

from .helpers import run_now

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_edit_rubric_rejudge_and_read_the_ledger(page, live_server, reviewer, endpoint, llm_server,
                                                  django_capture_on_commit_callbacks):
    problems = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    question = make_question("Browser question: solve $x^2 = 4$.", location="W-01")
    make_checkpoints(question)
    responses = make_responses(question, 3)
    set_gold(responses, [5, 5, 5])
    make_imported_gold(responses, total=5)  # experts: (1) = 5 on every answer

    def judge(payload):
        edited = "------4 points" in message_text(payload)
        score = 4 if edited else 8
        return Reply(f'Overall Score: {score}\n```json\n{{"sub_scores": {{"(1)": {score / 2}, "(2)": {score / 2}}}}}\n```')

    llm_server.default = judge
    setting = make_setting(endpoint, name="browser-judge")
    run_now(django_capture_on_commit_callbacks, setting)
    assert llm_server.request_count == 3

    login(page, live_server, reviewer.username)
    page.goto(f"{live_server.url}/questions/{question.pk}/")
    page.click("#edit-rubric")
    page.fill("textarea[name=reference_solution]", "(1) x = 2 ------4 points\n(2) x = -2 ------10 points")
    page.fill("input[name=note]", "(1) is worth 4")
    page.click("#rubric-form button[type=submit]")
    page.wait_for_selector("#question-rejudge-form")
    assert Question.objects.get(pk=question.pk).rubric_version == 2
    assert "browser-judge v1 (3)" in page.inner_text("#question-rejudge-form")
    page.click("#question-rejudge-button")
    page.wait_for_selector("#rejudge-table")
    assert llm_server.request_count == 6
    assert JudgeResult.objects.filter(rubric_version=2).count() == 3
    row = page.locator(f"#rejudge-table tr[data-setting='{setting.pk}']")
    assert row.locator(".before-mse").inner_text() == "9.000" and row.locator(".after-mse").inner_text() == "1.000"
    screenshot(page, "rubric_rejudge")

    page.goto(f"{live_server.url}/grading/review/metrics/?setting={setting.pk}")
    page.wait_for_selector("#ledger-table")
    assert re.search(r"\(1\)", page.inner_text("#ledger-table"))
    assert page.evaluate("Chart.getChart(document.getElementById('plot-ledger')) !== undefined")
    screenshot(page, "metrics_ledger")
    assert problems == []
