"""The language menu in a real browser (issue 39): on the login page its two choices stand apart
and read clearly (not "English简体中文" in light blue on light grey); the choice made there is the
language of the pages after the login, over the account's earlier one; in the header the choices
are links that switch through app.js, and "the form's submit button" on a page is never one."""
import pytest

from accounts.models import Preference
from tests.conftest import PASSWORD, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CONTRAST = """(el) => {
  const rgb = (s) => s.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const lum = (c) => { const v = c.map((x) => { x /= 255; return x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4); });
                       return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]; };
  let bg = el, back = 'rgba(0, 0, 0, 0)';
  while (bg && (back = getComputedStyle(bg).backgroundColor) === 'rgba(0, 0, 0, 0)') { bg = bg.parentElement; }
  const a = lum(rgb(getComputedStyle(el).color)), b = lum(rgb(back));
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}"""


def test_the_login_pages_choice_wins_and_the_menu_reads_clearly(page, live_server, annotator):
    Preference.objects.create(user=annotator, language="en")
    page.goto(f"{live_server.url}/accounts/login/")
    links = page.locator(".login-languages a.language-link")
    assert links.count() == 2
    first, second = links.nth(0).bounding_box(), links.nth(1).bounding_box()
    assert second["x"] - (first["x"] + first["width"]) >= 8  # a visible gap between the two
    for i in range(2):
        assert links.nth(i).evaluate(CONTRAST) >= 4.5  # WCAG AA for text
    screenshot(page, "login_languages")
    page.click(".login-languages a[data-language=zh-hans]")
    page.wait_for_selector("html[lang=zh-Hans]")
    assert page.inner_text("h1") == "登录"
    page.fill("input[name=username]", annotator.username)
    page.fill("input[name=password]", PASSWORD)
    page.click("form.stack button[type=submit]")
    page.wait_for_url(lambda url: "/accounts/login/" not in url)
    assert page.get_attribute("html", "lang") == "zh-Hans"  # not the account's earlier English
    assert Preference.objects.get(user=annotator).language == "zh-hans"

    # The header: the first submit button of the page is not a language choice; the link switches.
    assert page.locator("header a.language-link").count() == 1
    assert page.locator("header .language-menu button").count() == 0
    page.click("header a.language-link[data-language=en]")
    page.wait_for_selector("html[lang=en]")
    assert Preference.objects.get(user=annotator).language == "en"
