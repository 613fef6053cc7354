"""The judge pages in a real browser: start a run, watch the live progress bar, cancel and
resume with the keyboard, read results on the response page, fill a setting's default prompt."""
import re

import pytest
from django.core.management import call_command

from annotation.models import Response
from grading.judges import services
from grading.models import JudgeRun
from tests.conftest import REALMATH_HUMAN, login, screenshot
from tests.factories import make_endpoint, make_setting
from tests.llm_server import Reply

from .helpers import score_by_answer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def scored(payload):
    from tests.llm_server import message_text

    text = message_text(payload)
    score = 3 + len(text) % 5
    return Reply(f"The student reaches the first checkpoints; $f(\\alpha) = \\frac{{1}}{{2}}$ is right.\n\nOverall Score: {score}\n\nBrief Explanation: partial credit.")


def test_start_a_run_from_the_pages(page, live_server, llm_server, reviewer):
    call_command("import_realmath", str(REALMATH_HUMAN))
    llm_server.default = scored
    endpoint = make_endpoint(llm_server, name="local vLLM", max_concurrency=8)
    setting = make_setting(endpoint, name="rubric-gpt", model="gpt-judge", price_input_per_1k="0.0025", price_output_per_1k="0.01")
    login(page, live_server, reviewer.username)
    page.hover(".menu-group[data-group=judges]")
    with page.expect_navigation():  # waits for load: the shortcut handler is a deferred script
        page.click(".menu-group[data-group=judges] >> text=Judges and settings")
    page.wait_for_selector("#config-table")
    screenshot(page, "judges_home")
    page.keyboard.press("s")
    page.wait_for_selector("#run-form")
    page.select_option("select[name=level]", "high")
    page.click("text=Update selection")
    page.wait_for_selector("#run-form")
    page.select_option("#run-form select[name=config]", str(setting.pk))
    page.fill("#run-form input[name=note]", "high-level answers only")
    screenshot(page, "judge_run_start")
    page.keyboard.press("Control+Enter")
    page.wait_for_url(re.compile(r"/grading/judges/runs/\d+/$"))
    run = JudgeRun.objects.get()
    page.wait_for_function("() => document.getElementById('p-status').textContent.startsWith('Done')")
    assert page.inner_text("#p-count") == f"{run.n_items} / {run.n_items}"
    assert page.locator("#results-table tbody tr").count() == run.n_items
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    page.wait_for_selector("#raw-output")
    assert "Overall Score" in page.inner_text("#raw-output")
    page.go_back()
    page.wait_for_selector("#results-table .katex")  # the rationale's math is rendered
    screenshot(page, "judge_run_done")

    page.goto(f"{live_server.url}/grading/judges/settings/new/")
    page.select_option("select[name=kind]", "ineq_logical_gap")
    assert "unjustified" in page.inner_text("#kind-help")
    page.click("#use-default")
    assert "Flagged step" in page.input_value("textarea[name=prompt_template]")
    screenshot(page, "judge_setting_form")


def test_live_progress_cancel_and_resume(page, live_server, llm_server, reviewer, django_capture_on_commit_callbacks):
    call_command("import_realmath", str(REALMATH_HUMAN))
    llm_server.default = score_by_answer({})
    endpoint = make_endpoint(llm_server, max_concurrency=4)
    setting = make_setting(endpoint, name="rubric-live")
    run = services.start_judge_run(setting, chunk_size=8, enqueue=False)
    ids = list(run.items.order_by("id").values_list("pk", flat=True))
    login(page, live_server, reviewer.username)
    page.goto(f"{live_server.url}/grading/judges/runs/{run.pk}/")
    assert page.inner_text("#p-count") == f"0 / {run.n_items}"
    services.process_judge_chunk(run.pk, run.epoch, ids[:8], task_id="browser-1")
    page.wait_for_function(f"() => document.getElementById('p-count').textContent === '8 / {run.n_items}'")
    width = page.evaluate("parseFloat(document.getElementById('p-bar').style.width)")
    assert width == pytest.approx(800 / run.n_items, abs=0.1)
    screenshot(page, "judge_run_progress")

    asked = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
    page.keyboard.press("c")  # asked first; saying no leaves the run running
    page.wait_for_timeout(300)
    assert asked and asked[0].startswith("Cancel this run?")
    assert JudgeRun.objects.get(pk=run.pk).status == "running"
    page.once("dialog", lambda dialog: dialog.accept())
    # The cancel form's answer is a new page; wait for it (the old page's poll can show the
    # cancel first, and a key pressed there would be lost in the navigation).
    with page.expect_navigation():
        page.keyboard.press("c")
    page.wait_for_selector("text=cancelled; calls in flight finish")
    assert JudgeRun.objects.get(pk=run.pk).status == "cancelled"
    assert page.is_disabled("#cancel-button") and not page.is_disabled("#resume-button")
    with page.expect_navigation():
        page.keyboard.press("u")
    page.wait_for_function("() => document.getElementById('p-status').textContent.startsWith('Done')", timeout=30000)
    run.refresh_from_db()
    assert (run.status, run.epoch) == ("done", 2)
    assert run.items.filter(state="ok").count() == run.n_items
    screenshot(page, "judge_run_resumed")


def test_response_page_shows_judge_results(page, live_server, llm_server, reviewer, django_capture_on_commit_callbacks):
    call_command("import_realmath", str(REALMATH_HUMAN))
    llm_server.default = scored
    endpoint = make_endpoint(llm_server)
    response = Response.objects.order_by("id").first()
    for name in ("gemini-judge", "qwen-judge"):
        services.run_inline(services.start_judge_run(make_setting(endpoint, name=name), response_ids=[response.pk], enqueue=False))
    login(page, live_server, reviewer.username)
    page.goto(f"{live_server.url}/responses/{response.pk}/")
    page.wait_for_selector("#judge-results")
    assert page.locator("#judge-results summary .tag").count() == 2
    assert not page.is_visible("#judge-results table")
    page.click("#judge-results summary")
    assert page.locator("#judge-results tbody tr").count() == 2
    page.wait_for_selector("#judge-results .katex")
    page.locator("#judge-results").scroll_into_view_if_needed()
    screenshot(page, "response_judge_results")
