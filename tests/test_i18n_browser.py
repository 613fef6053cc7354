"""The main journeys in Simplified Chinese in a real browser, at 1280 px and at 800 px: label an
answer, adjudicate, start a judge run, open the disagreement queue, export. On every page: the
interface (also what the scripts write) has no English outside data, nothing is wider than the
window, math is rendered where there is math, and the keyboard shortcuts are the English ones.
Screenshots land in test-artifacts/i18n/.
"""
import re

import pytest
from django.contrib.auth import get_user_model

from accounts.services import set_user_language
from tests.factories import API_KEY_ENV, make_endpoint, make_setting
from tests.llm_server import LlmServer, Reply

from .conftest import SCREENSHOT_DIR
from .test_i18n_pages import Data, english_left, visible_text
from .test_layout_browser import PASSWORDS, _demo_with_cases

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

def _scored(payload):
    return Reply("The first checkpoints are reached; $x = 2$ is right.\n\nOverall Score: 6\n\nBrief Explanation: partial.")


def _check(page, where, data, problems, *, math=False, skip=()):
    page.wait_for_load_state("load")
    page.evaluate("() => document.fonts.ready.then(() => true)")
    html = page.evaluate(
        "(skip) => { const c = document.documentElement.cloneNode(true);"
        " skip.forEach(s => c.querySelectorAll(s).forEach(e => e.remove())); return c.outerHTML; }", list(skip))
    left = english_left(visible_text(html), data)
    if left:
        problems.append(f"{where}: English {sorted(set(left))[:20]}")
    if 'lang="zh-Hans"' not in html:
        problems.append(f"{where}: not in Chinese")
    scroll, inner = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    if scroll > inner:
        problems.append(f"{where}: {scroll} px wide in a {inner} px window")
    clipped = page.evaluate(
        "() => [...document.querySelectorAll('button, .button, .menu-title, th, label')]"
        ".filter(e => e.offsetParent && e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflow !== 'visible')"
        ".map(e => e.textContent.trim().slice(0, 30))")
    if clipped:
        problems.append(f"{where}: cut text {clipped[:5]}")
    if math and page.locator(".katex").count() == 0:
        problems.append(f"{where}: no rendered math")
    SCREENSHOT_DIR.joinpath("i18n").mkdir(parents=True, exist_ok=True)
    width = page.viewport_size["width"]
    page.screenshot(path=str(SCREENSHOT_DIR / "i18n" / f"{width}-{where}.png"), full_page=True)


@pytest.mark.parametrize("width", [1280, 800])
def test_main_journeys_in_chinese(browser, live_server, width, settings, tmp_path, monkeypatch):
    settings.EXPORT_ROOT = tmp_path / "exports"
    monkeypatch.setenv(API_KEY_ENV, "sk-test-not-a-real-key")
    data = _demo_with_cases()
    problems = []
    with LlmServer() as llm:
        llm.default = _scored
        setting = make_setting(make_endpoint(llm, name="本地模型服务", max_concurrency=8), name="rubric-walk",
                               model="judge-walk")
        text = Data()
        context = browser.new_context(viewport={"width": width, "height": 900}, locale="zh-CN")
        page = context.new_page()
        page.set_default_timeout(20000)
        errors = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))

        # The login page follows the browser (zh-CN) before anyone logs in.
        page.goto(f"{live_server.url}/accounts/login/")
        _check(page, "login", text, problems)
        assert page.locator("h1").inner_text() == "登录"

        # Label an answer (annotator1): the queue, "n" for the next one, points, submit.
        _log_in(page, live_server, "annotator1")
        assert set(page.locator(".menu-group > .menu-title").all_inner_texts()) == {"数据", "标注", "评判模型"}
        page.goto(f"{live_server.url}/label/")
        _check(page, "label-queue", text, problems)
        page.keyboard.press("n")
        page.wait_for_url(re.compile(r"/label/\d+/"))
        page.wait_for_selector("#group-0.focused")
        page.wait_for_selector("#transcript .katex")
        page.keyboard.press("?")  # the key list (in Chinese, keys unchanged) hides and shows again
        page.wait_for_selector("#shortcuts[hidden]", state="attached")
        page.keyboard.press("?")
        page.wait_for_selector("#shortcuts:not([hidden])")
        assert "下一个 / 上一个小题" in page.inner_text("#shortcuts")
        page.keyboard.press("j")
        page.wait_for_selector("#group-1.focused")
        page.keyboard.press("k")
        page.wait_for_selector("#group-0.focused")
        page.keyboard.press("1")  # a point on (1): the draft saves itself, the status line says so
        page.wait_for_function("() => document.getElementById('save-status').textContent.includes('草稿已于')")
        _check(page, "label", text, problems, math=True)

        # Adjudicate (reviewer): the queue, the case, pick a label with "1", Ctrl+Enter.
        _log_in(page, live_server, "reviewer")
        page.goto(f"{live_server.url}/adjudication/")
        page.wait_for_selector("#adjudication-table")
        _check(page, "adjudication-queue", text, problems)
        page.locator("#adjudication-table tbody tr a").first.click()
        page.wait_for_selector("#adjudicate-form")
        page.wait_for_selector("#transcript .katex")
        page.keyboard.press("1")
        assert page.locator(".label-card.chosen").count() == 1
        _check(page, "adjudicate", text, problems, math=True)
        page.keyboard.press("Control+Enter")
        page.wait_for_url(lambda url: f"/adjudication/{data['response'].pk}/" not in url)
        assert "已设定作答" in page.inner_text(".messages")

        # Start a judge run: "s" on the judges page, the setting, Ctrl+Enter; the live progress in Chinese.
        page.goto(f"{live_server.url}/grading/judges/")
        page.wait_for_selector("#config-table")
        _check(page, "judges", text, problems)
        page.keyboard.press("s")
        page.wait_for_selector("#run-form")
        page.select_option("select[name=level]", "high")
        page.click("text=更新选择")
        page.wait_for_selector("#run-form")
        page.select_option("#run-form select[name=config]", str(setting.pk))
        page.fill("#run-form input[name=note]", "中文界面走查")
        _check(page, "judge-run-start", text, problems)
        with page.expect_navigation(timeout=90000):
            page.keyboard.press("Control+Enter")
        assert re.search(r"/grading/judges/runs/\d+/$", page.url), (page.url, page.inner_text("main")[:500])
        page.wait_for_function("() => document.getElementById('p-status').textContent.startsWith('已完成')")
        text = Data()  # with the run's results: the judge's rationales are data
        _check(page, "judge-run", text, problems)

        # The disagreement queue and one case (A-E keep their codes, names in Chinese).
        page.goto(f"{live_server.url}/grading/review/disagreements/")
        page.wait_for_selector("table")
        _check(page, "disagreements", text, problems)
        assert "错误严重程度与后续推理" in page.content()
        page.goto(f"{live_server.url}/grading/review/categories/")
        page.wait_for_selector("canvas")
        _check(page, "categories", text, problems)

        # Export: start a JSONL export; its page follows the job to the end, in Chinese.
        page.goto(f"{live_server.url}/export/")
        _check(page, "export", text, problems)
        page.check("input[name=format][value=jsonl]")
        page.click("#export-form button[type=submit]")
        page.wait_for_url(re.compile(r"/export/\d+/$"))
        page.wait_for_function("() => document.getElementById('export-status').textContent === '已完成'")
        _check(page, "export-job", text, problems)
        context.close()
    assert not errors, errors
    assert not problems, "\n".join(problems)


def _log_in(page, live_server, username):
    user = get_user_model().objects.get(username=username)
    set_user_language(user, "zh-hans")
    page.context.clear_cookies()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORDS[username])
    page.click("form.stack button[type=submit]")
    page.wait_for_url(lambda url: "/accounts/login/" not in url)
