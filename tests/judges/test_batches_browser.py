"""A batch run from the pages: chosen on the Start page, its provider batch's progress and ETA
on the run page as the loopback Batch API answers, then done."""
import re
import time

import pytest
from django.db import OperationalError

from accounts.services import set_user_language
from grading.judges import services
from grading.models import JudgeRun
from tests.conftest import login, screenshot
from tests.factories import make_endpoint, make_question, make_responses, make_setting
from tests.llm_batches import BatchApi

from .helpers import score_by_answer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def look(run_id, step=services.advance_batch_run):
    """A look at the run from the test's thread. The live server's in-memory SQLite shares its
    cache between threads with table locks and no waiting: a page read at the same moment
    fails the write at once ("database table is locked"). A look is safe to repeat (that is the
    crash safety under test elsewhere), so it is simply repeated."""
    for _ in range(50):
        try:
            return step(JudgeRun.objects.get(pk=run_id))
        except OperationalError as exc:
            if "locked" not in str(exc):
                raise
            time.sleep(0.1)
    pytest.fail("the database stayed locked")


def test_start_a_batch_run_and_follow_its_progress(page, live_server, llm_server, reviewer, settings):
    settings.LLM_BATCH_POLL_SECONDS = 0.05
    llm_server.default = score_by_answer({})
    batches = BatchApi(llm_server, delay=8).install()
    question = make_question("Batch browser problem: find x.", full_score=10)
    make_responses(question, 12)
    endpoint = make_endpoint(llm_server, name="batch provider")
    setting = make_setting(endpoint, name="rubric-batch", price_input_per_1k="0.0025", price_output_per_1k="0.01")
    login(page, live_server, reviewer.username)
    page.goto(f"{live_server.url}/grading/judges/runs/new/?config={setting.pk}&question={question.pk}")
    page.wait_for_selector("#run-form")
    page.select_option("#run-form select[name=config]", str(setting.pk))
    page.check("#run-form input[name=mode][value=batch]")
    page.select_option("#run-form select[name=batch_retry]", "batch")
    screenshot(page, "judge_run_start_batch")
    page.click("#run-form button[type=submit]")
    page.wait_for_url(re.compile(r"/grading/judges/runs/\d+/$"))
    run = JudgeRun.objects.get()
    assert (run.mode, run.batch_retry, run.n_items) == ("batch", "batch", 12)
    assert "batch (cheaper, slower)" in page.inner_text("#batch-progress")

    look(run.pk)  # the requests written, the batch created
    page.wait_for_function("() => document.querySelector('#batch-parts td[data-status]') !== null")
    page.wait_for_timeout(2500)
    look(run.pk)  # the provider has answered a part
    page.wait_for_function("() => document.querySelector('#batch-parts td[data-status=in_progress]') !== null")
    page.wait_for_function("() => /\\d/.test(document.getElementById('p-eta').textContent)")
    eta = page.inner_text("#p-eta")
    assert re.search(r"\d+ s", eta), eta
    answered = page.inner_text("#p-batch-count")
    assert re.fullmatch(r"\d+ / 12", answered) and answered != "0 / 12"
    assert page.inner_text("#p-count") == "0 / 12"
    screenshot(page, "judge_run_batch_progress")

    look(run.pk, lambda run: services.run_batch_inline(run, timeout=30))
    page.wait_for_function("() => document.getElementById('p-status').textContent.startsWith('Done')", timeout=30000)
    page.wait_for_selector("#batch-parts td[data-status=completed]")
    assert page.inner_text("#p-batch-count") == "12 / 12"
    assert page.locator("#results-table tbody tr").count() == 12
    assert batches.count("POST", "/batches") == 1 and llm_server.count() == 0
    assert page.inner_text("#s-cost") == page.inner_text("#p-cost"), "spent at the batch price, in the batch row"
    assert page.locator("tr:has(#s-cost) th").inner_text() == "cost, batch"
    screenshot(page, "judge_run_batch_done")

    set_user_language(reviewer, "zh-hans")  # the same page in Chinese
    page.goto(f"{live_server.url}/grading/judges/runs/{run.pk}/")
    page.wait_for_selector("#batch-parts td[data-status=completed]")
    assert "批处理（更便宜，更慢）" in page.inner_text("#batch-progress")
    assert page.inner_text("#batch-parts td[data-status=completed]") == "已完成"
    screenshot(page, "judge_run_batch_done_zh")
