"""A reviewer opens the methods report from the menu (formatted), switches to Markdown and LaTeX and downloads
the appendix."""
import json

import pytest

from tests.conftest import login, screenshot
from tests.factories import make_question, make_responses, make_results, make_stored_setting, set_gold

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_reviewer_opens_and_downloads_the_methods_report(page, live_server, reviewer):
    question = make_question(exam_name="Browser exam")
    responses = make_responses(question, 6)
    set_gold(responses, [1, 2, 3, 4, 5, 6])
    setting = make_stored_setting(name="browser_judge", model="m")
    make_results(setting, responses, [1, 3, 3, 5, 5, 2])

    login(page, live_server, reviewer.username)
    page.hover(".menu-group[data-group=review]")
    with page.expect_navigation():  # waits for load: autosubmit is a deferred script
        page.click("text=Methods report")
    page.wait_for_selector("#report-formatted")
    text = page.inner_text("#report-formatted")
    assert "Judge versus gold" in text and "browser_judge v1" in text and "No probes run." in text
    assert page.locator("#report-formatted h3", has_text="Judge versus gold").count() == 1
    assert page.locator("#report-formatted td", has_text="browser_judge v1").count() >= 2
    screenshot(page, "methods_report")

    page.wait_for_load_state("load")  # data-autosubmit is a deferred script: a change before it runs is lost
    page.select_option("select[name=format]", "markdown")  # data-autosubmit
    page.wait_for_selector("#report-text[data-format=markdown]", timeout=45000)  # a whole report per switch
    assert "## Judge versus gold" in page.inner_text("#report-text")

    page.wait_for_load_state("load")  # the markdown page's own script, not the last page's
    page.select_option("select[name=format]", "latex")  # data-autosubmit
    page.wait_for_selector("#report-text[data-format=latex]", timeout=45000)
    assert "\\section*{Methods}" in page.inner_text("#report-text")
    assert "browser\\_judge" in page.inner_text("#report-text")

    with page.expect_download() as info:
        page.click("#download-json")
    data = json.loads(open(info.value.path(), encoding="utf-8").read())
    assert info.value.suggested_filename == "methods-report.json"
    assert data["judges"][0]["name"] == "browser_judge" and data["judges"][0]["overall"]["n"] == 6
