"""Issue 27 in a real browser: create a few-shot setting on the settings form, look at its examples, run it and a
reason-then-score setting from the pages, open their paired comparison (hold-outs excluded and counted)."""
import re

import pytest
from django.core.management import call_command

from grading.models import JudgeRun, JudgeSetting
from tests.conftest import REALMATH_HUMAN, login, screenshot
from tests.factories import make_endpoint, make_setting
from tests.llm_server import Reply, message_text

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def scored(payload):
    text = message_text(payload)
    score = 2 + len(text) % 6 if "Calibration examples" in text else 1 + len(text) % 5
    return Reply(f"Reasoning.\n\nOverall Score: {score}\n\nBrief Explanation: scripted.")


def _run_from_page(page, live_server, setting):
    page.goto(f"{live_server.url}/grading/judges/settings/{setting.pk}/")
    with page.expect_navigation():
        page.click("text=Run this setting")
    page.wait_for_selector("#run-form")
    with page.expect_navigation():
        page.click("#run-form button[type=submit]")
    page.wait_for_url(re.compile(r"/grading/judges/runs/\d+/$"))
    page.wait_for_function("() => document.getElementById('p-status').textContent.startsWith('Done')")


def test_few_shot_setting_examples_runs_and_comparison(page, live_server, llm_server, reviewer):
    call_command("import_realmath", str(REALMATH_HUMAN))
    llm_server.default = scored
    endpoint = make_endpoint(llm_server, name="local server")
    rts = make_setting(endpoint, name="reason-then-score")
    login(page, live_server, reviewer.username)

    page.goto(f"{live_server.url}/grading/judges/settings/new/")
    page.fill("#config-form input[name=name]", "few-shot k2")
    page.select_option("#config-form select[name=kind]", "rubric")
    page.select_option("#config-form select[name=strategy]", "few-shot")
    page.click("#use-default")  # the strategy's template fills the prompt
    assert "{{ examples }}" in page.input_value("#config-form textarea[name=prompt_template]")
    page.select_option("#config-form select[name=endpoint]", str(endpoint.pk))
    page.fill("#config-form input[name=model]", "judge-model")
    page.fill("#config-form input[name=few_shot_seed]", "3")
    screenshot(page, "few_shot_form")
    with page.expect_navigation():
        page.click("#config-form button[type=submit]")
    page.wait_for_selector("#few-shot-table")
    few = JudgeSetting.objects.get(name="few-shot k2")
    assert few.strategy == "few-shot" and len(few.calibration["holdout"]) == 4
    assert page.locator("#few-shot-table tbody tr").count() == 4
    assert "4 answers: never judged by this setting" in page.inner_text("#config-holdout")
    page.locator("#few-shot-table details summary").first.click()
    screenshot(page, "few_shot_examples")

    _run_from_page(page, live_server, few)
    _run_from_page(page, live_server, rts)
    assert JudgeRun.objects.get(config=few).n_items == 28 and JudgeRun.objects.get(config=rts).n_items == 32

    page.goto(f"{live_server.url}/grading/review/compare/?setting={rts.pk}&setting={few.pk}")
    page.wait_for_selector(f"#pair-{rts.pk}-{few.pk}")
    section = page.inner_text(f"#pair-{rts.pk}-{few.pk}")
    assert "28 answers of 2 questions scored by both" in section
    assert "4 hold-out answers" in section
    screenshot(page, "strategies_compared")
