"""The provider-call log page in Chromium, in English and in Chinese: the menu, the filters, the totals."""
from datetime import UTC, datetime

import pytest

from accounts.services import set_user_language
from egress.models import ProviderCall
from tests.conftest import login, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def seed():
    rows = [("api.openai.com", "judge", 14_200, [101]), ("api.openai.com", "judge", 13_900, [102]),
            ("api.openai.com", "meta-eval", 22_000, [101]), ("vision.example.org", "vision-ocr", 412_000, []),
            ("127.0.0.1:8001", "embeddings", 3_100, [101, 102])]
    for n, (host, purpose, sent, answers) in enumerate(rows):
        ProviderCall.objects.create(host=host, method="POST", path="/v1/chat/completions", purpose=purpose,
                                    answer_ids=answers, page_ids=[7] if purpose == "vision-ocr" else [],
                                    bytes_sent=sent, bytes_received=900, status=200 if n != 2 else 429,
                                    started=datetime(2026, 11, 3 + n, 9, 30, tzinfo=UTC), duration_ms=420)


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_an_admin_finds_the_log_in_the_menu_and_filters_it(page, live_server, admin_user, language):
    seed()
    set_user_language(admin_user, language)
    login(page, live_server, admin_user.username)
    page.click("[data-group=admin] .menu-title")
    page.click("a[href='/provider-calls/']")
    page.wait_for_selector("#calls")
    assert page.locator("#calls tbody tr").count() == 5
    hosts = page.locator("#host-totals tbody tr td:first-child").all_inner_texts()
    assert hosts[0] == "vision.example.org" and len(hosts) == 3
    screenshot(page, f"egress-call-log-{language}")
    if language == "zh-hans":
        assert "服务商调用" in page.locator("h1").inner_text()
    page.select_option("select[name=purpose]", "judge")
    page.click("#call-filters button[type=submit]")
    page.wait_for_url(lambda url: "purpose=judge" in url)
    assert page.locator("#calls tbody tr").count() == 2
    assert page.locator("#host-totals tbody tr").all_inner_texts()[0].startswith("api.openai.com")
    href = page.get_attribute("#export-link", "href")
    assert href.endswith("export.json?purpose=judge&host=&since=&until=") or "purpose=judge" in href
    page.fill("input[name=since]", "2026-11-10")
    page.fill("input[name=until]", "2026-11-01")
    page.click("#call-filters button[type=submit]")
    page.wait_for_selector("#call-filters .error")
    screenshot(page, f"egress-call-log-bad-filter-{language}")
    assert page.locator("#calls tbody tr").count() >= 1  # the bad date is not applied
