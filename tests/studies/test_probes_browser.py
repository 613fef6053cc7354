"""The probe page in a real browser: start probes from the menu, watch the run finish, read the
rates, open an item's diff with both judge outputs and the answers' math rendered, then open the
methods report and find the rates there."""
import re

import pytest

from studies.models import ProbeRun
from tests.conftest import login, screenshot
from tests.factories import make_question, make_results, make_setting, set_gold

from .helpers import FAIR, make_answers

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_run_probes_and_open_a_diff(page, live_server, llm_server, endpoint, reviewer):
    llm_server.default = FAIR
    answers = make_answers(make_question(), 4)
    setting = make_setting(endpoint, name="rubric-fair")
    login(page, live_server, reviewer.username)
    page.hover(".menu-group[data-group=review]")
    page.click(".menu-group[data-group=review] >> text=Perturbation probes")
    page.wait_for_selector("#probe-form")
    page.select_option("#probe-form select[name=setting]", str(setting.pk))
    assert page.locator("#probe-form input[name=probes]:checked").count() == 0  # nothing ticked at first
    for name in ("drop-final-answer", "notation-swap"):
        page.check(f"#probe-form input[value={name}]")
    # The cost before starting: 4 answers × 2 probes, one sample each.
    page.wait_for_function("() => document.getElementById('probe-calls').dataset.calls === '8'")
    assert page.inner_text("#probe-calls").startswith("Starting makes up to 8 judge call(s)")
    screenshot(page, "studies_probe_start")
    page.click("#start-probes")
    page.wait_for_url(re.compile(r"/grading/studies/probes/runs/\d+/$"))
    run = ProbeRun.objects.get()
    page.wait_for_function("() => document.getElementById('p-status').textContent.startsWith('Done')")
    assert page.inner_text("#p-count") == f"{run.n_items} / {run.n_items}"
    row = page.locator("#probe-rates tr[data-probe=drop-final-answer]")
    assert row.locator(".rate").inner_text() == "1.000"
    assert page.locator("#probe-rates tr[data-probe=notation-swap] .rate").inner_text() == "0.000"
    screenshot(page, "studies_probe_run")
    page.click("#probe-rates tr[data-probe=drop-final-answer] a")
    page.click("#probe-items a >> nth=0")
    page.wait_for_selector("#probe-diff")
    assert page.locator("#probe-diff tr.diff-delete").count() == 1
    assert "Overall Score: 8" in page.inner_text("#original-output")
    assert "Overall Score: 3" in page.inner_text("#derived-output")
    page.wait_for_selector("#original-text .katex")  # the answer's math is rendered
    assert page.inner_text("#detected") == "detected"
    screenshot(page, "studies_probe_item")
    page.goto(f"{live_server.url}/grading/studies/probes/")
    assert "Done" in page.inner_text("#probe-runs")

    # The methods report (the setting's run over these answers, as a judge run would leave it).
    set_gold(answers, [8] * len(answers))
    make_results(setting, answers, [8] * len(answers), key_prefix="walk")
    page.hover(".menu-group[data-group=review]")
    page.click(".menu-group[data-group=review] >> text=Methods report")
    page.wait_for_selector("#report-formatted")
    assert "No probes run." not in page.inner_text("#report-formatted")
    row = page.locator("#report-formatted tr", has_text="drop-final-answer")
    assert [cell.strip() for cell in row.locator("td").all_inner_texts()][:5] == [
        "rubric-fair v1", "drop-final-answer", "4", "4", "1.000 (not estimable: 1 question)"]  # one question
    screenshot(page, "studies_methods_report")


def test_the_call_estimate_follows_the_newest_choice_and_speaks_chinese(page, live_server, endpoint, reviewer):
    """Ticking and unticking quickly: only the answer to the newest request is shown (a late
    answer to an older one once left a stale figure), in the reader's language."""
    from accounts.services import set_user_language

    make_answers(make_question(), 3)
    setting = make_setting(endpoint, name="rubric-estimate")
    set_user_language(reviewer, "zh-hans")
    login(page, live_server, reviewer.username)
    page.goto(f"{live_server.url}/grading/studies/probes/")
    page.select_option("#probe-form select[name=setting]", str(setting.pk))
    for _ in range(3):
        for name in ("drop-final-answer", "notation-swap", "arithmetic-slip"):
            page.check(f"#probe-form input[value={name}]")
        page.uncheck("#probe-form input[value=arithmetic-slip]")
    # 3 answers x 2 probes ticked at the end
    page.wait_for_function("() => document.getElementById('probe-calls').dataset.calls === '6'")
    page.wait_for_timeout(500)  # late answers to the older requests would arrive by now
    assert page.get_attribute("#probe-calls", "data-calls") == "6"
    assert page.inner_text("#probe-calls").startswith("开始后最多产生 6 次评判调用")


def test_the_call_estimate_follows_a_typed_limit(page, live_server, endpoint, reviewer):
    """Issue 39: a limit typed in the field counts at once (the input event), not only once the
    field loses focus: the figure of the previous limit stayed until the next change."""
    make_answers(make_question(), 4)
    setting = make_setting(endpoint, name="rubric-limit")
    login(page, live_server, reviewer.username)
    page.goto(f"{live_server.url}/grading/studies/probes/")
    page.select_option("#probe-form select[name=setting]", str(setting.pk))
    page.check("#probe-form input[value=drop-final-answer]")
    page.wait_for_function("() => document.getElementById('probe-calls').dataset.calls === '4'")
    page.click("#probe-form input[name=limit]")
    page.keyboard.type("2")  # the focus stays in the field: no change event yet
    page.wait_for_function("() => document.getElementById('probe-calls').dataset.calls === '2'", timeout=5000)
    assert page.evaluate("() => document.activeElement.name") == "limit"
