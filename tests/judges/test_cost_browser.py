"""The judge-run Start page shows the cost estimate before Start is pressed, for the chosen
setting and selection, in English and in Chinese (screenshots in test-artifacts/)."""
from decimal import Decimal

import pytest

from accounts.services import set_user_language
from tests.conftest import login, screenshot
from tests.factories import make_question, make_responses, make_setting

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _wait_estimate(page):
    # the estimate builds every prompt; on a loaded 2-core machine allow more than the default 15 s
    page.wait_for_selector("#run-estimate[data-ready]", timeout=45000)


def test_start_page_shows_the_estimate(page, live_server, llm_server, endpoint, reviewer):
    question = make_question("Find all x with $x^2 = 4$.")
    question.sub_questions.all().delete()
    make_responses(question, 4)
    make_responses(question, 2, source="synthetic", start=50)
    priced = make_setting(endpoint, name="rubric-priced", model="local-judge", system_prompt="You grade.",
                          prompt_template="Grade: {{ response }}", samples=2, max_tokens=300,
                          price_input_per_1k=Decimal("1.0"), price_output_per_1k=Decimal("2.0"))
    unpriced = make_setting(endpoint, name="rubric-unpriced", model="gpt-4o-mini")
    login(page, live_server, reviewer.username)
    page.goto(f"{live_server.url}/grading/judges/runs/new/?source=human&config={priced.pk}")
    _wait_estimate(page)
    assert page.inner_text("#e-calls") == "8"
    assert page.inner_text("#e-tin") == "144"  # 4 prompts of 18 tokens, 2 samples each (tests/judges/test_cost.py)
    assert page.inner_text("#e-tout") == "2,400"
    assert page.inner_text("#e-live") == "4.9440" and page.inner_text("#e-batch") == "2.4720"
    assert "max_tokens cap" in page.inner_text("#estimate-assumptions")
    assert not page.is_visible("#estimate-unpriced")
    screenshot(page, "judge_run_start_estimate")
    page.select_option("#run-form select[name=config]", str(unpriced.pk))
    _wait_estimate(page)
    assert page.is_visible("#estimate-unpriced")
    assert "No prices set on this setting" in page.inner_text("#estimate-unpriced")
    assert "tiktoken o200k_base" in page.inner_text("#estimate-assumptions")
    screenshot(page, "judge_run_start_estimate_unpriced")
    assert llm_server.request_count == 0  # estimating sends nothing

    set_user_language(reviewer, "zh-hans")
    page.goto(f"{live_server.url}/grading/judges/runs/new/?source=human&config={priced.pk}")
    _wait_estimate(page)
    assert page.inner_text("#run-estimate h2") == "费用估算"
    assert page.inner_text("#e-calls") == "8" and page.inner_text("#e-live") == "4.9440"
    status = page.inner_text("#estimate-status")
    assert "4" in status and not any(word in status for word in ("Estimated", "answers"))
    assumptions = page.inner_text("#estimate-assumptions")
    assert "max_tokens" in assumptions and "Output" not in assumptions
    screenshot(page, "judge_run_start_estimate_zh")
    page.goto(f"{live_server.url}/grading/judges/runs/new/?q=nothing-matches&config={priced.pk}")
    _wait_estimate(page)
    assert page.inner_text("#estimate-status") == "没有作答符合此选择。"
    assert llm_server.request_count == 0

    # Start it: the run page sets the estimate kept at the start beside what was spent
    from tests.llm_server import Reply

    llm_server.default = Reply("Reasoning.\n\nOverall Score: 3")
    page.goto(f"{live_server.url}/grading/judges/runs/new/?source=human&config={priced.pk}")
    _wait_estimate(page)
    with page.expect_navigation():
        page.click("#run-form button[type=submit]")
    page.wait_for_function("() => document.getElementById('s-calls').textContent === '8'", timeout=45000)
    assert page.inner_text("#est-calls") == "8" and page.inner_text("#est-tin") == "144"
    assert page.inner_text("#est-live") == "4.9440" and page.inner_text("#est-batch") == "2.4720"
    assert page.inner_text("#run-estimate h2") == "估算与实际花费"
    assert llm_server.request_count == 8
    screenshot(page, "judge_run_estimate_vs_spent_zh")
