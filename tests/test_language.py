"""The interface language: chosen per person, kept across sessions, defaulted from the browser."""
import pytest
from django.urls import reverse

from accounts.models import Preference

from .conftest import PASSWORD

pytestmark = pytest.mark.django_db


def _log_in(client, username, **headers):
    return client.post(reverse("login"), {"username": username, "password": PASSWORD}, follow=True, **headers)


def test_a_users_choice_survives_logout_and_login(client, annotator):
    _log_in(client, annotator.username)
    assert 'lang="en"' in client.get(reverse("home")).content.decode()
    answer = client.post(reverse("set_language"), {"language": "zh-hans", "next": reverse("annotation:label_queue")})
    assert answer.status_code == 302 and answer["Location"] == reverse("annotation:label_queue")
    assert Preference.objects.get(user=annotator).language == "zh-hans"
    page = client.get(reverse("annotation:label_queue")).content.decode()
    assert 'lang="zh-Hans"' in page and "我的标注队列" in page

    client.post(reverse("logout"))
    client.cookies.clear()  # another browser: no language cookie, an English Accept-Language
    login_page = client.get(reverse("login"), HTTP_ACCEPT_LANGUAGE="en-US,en;q=0.9").content.decode()
    assert "Log in" in login_page
    _log_in(client, annotator.username, HTTP_ACCEPT_LANGUAGE="en-US,en;q=0.9")
    page = client.get(reverse("annotation:label_queue"), HTTP_ACCEPT_LANGUAGE="en-US,en;q=0.9").content.decode()
    assert "我的标注队列" in page and "My labelling queue" not in page

    client.post(reverse("set_language"), {"language": "en", "next": "/"})
    assert Preference.objects.get(user=annotator).language == "en"
    assert "My labelling queue" in client.get(reverse("annotation:label_queue")).content.decode()


def test_without_a_choice_the_browser_language_applies(client, annotator):
    _log_in(client, annotator.username)
    page = client.get(reverse("annotation:label_queue"), HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9,en;q=0.5")
    assert "我的标注队列" in page.content.decode()
    page = client.get(reverse("annotation:label_queue"), HTTP_ACCEPT_LANGUAGE="fr-FR,fr;q=0.9")
    assert "My labelling queue" in page.content.decode()  # neither offered: LANGUAGE_CODE (en)
    assert not Preference.objects.filter(user=annotator).exists()


def test_the_login_page_offers_both_languages(client):
    page = client.get(reverse("login")).content.decode()
    assert 'data-language="en"' in page and 'data-language="zh-hans"' in page and "简体中文" in page and "English" in page
    answer = client.post(reverse("set_language"), {"language": "zh-hans", "next": reverse("login")})
    assert answer.status_code == 302
    assert "登录" in client.get(reverse("login")).content.decode()  # the cookie, before anyone logs in


def test_an_unknown_language_or_a_foreign_next_changes_nothing(client, annotator):
    _log_in(client, annotator.username)
    answer = client.post(reverse("set_language"), {"language": "xx", "next": "/"})
    assert answer.status_code == 302
    assert not Preference.objects.filter(user=annotator).exists()
    answer = client.post(reverse("set_language"), {"language": "zh-hans", "next": "https://evil.example/"})
    assert answer["Location"] == "/"
    # GET changes nothing: a language it does not know is a 400; else a page with one button.
    assert client.get(reverse("set_language")).status_code == 400
    page = client.get(reverse("set_language"), {"language": "zh-hans", "next": "https://evil.example/"})
    assert page.status_code == 200 and 'name="next" value="/"' in page.content.decode()
    assert "简体中文" in page.content.decode()


def test_the_choice_made_on_the_login_page_wins_over_the_accounts_earlier_one(client, annotator):
    """Issue 39: an account that chose Chinese earlier; on the login page the person picks
    English; after the login the pages are in English, and English is now the account's choice."""
    Preference.objects.create(user=annotator, language="zh-hans")
    client.post(reverse("set_language"), {"language": "en", "next": reverse("login")})
    _log_in(client, annotator.username)
    assert "My labelling queue" in client.get(reverse("annotation:label_queue")).content.decode()
    assert Preference.objects.get(user=annotator).language == "en"
    # Without a choice on the login page, the account's choice applies (another browser, Chinese).
    Preference.objects.filter(user=annotator).update(language="zh-hans")
    client.post(reverse("logout"))
    client.cookies.clear()
    _log_in(client, annotator.username, HTTP_ACCEPT_LANGUAGE="en-US,en;q=0.9")
    assert "我的标注队列" in client.get(reverse("annotation:label_queue")).content.decode()


def test_the_language_menu_is_links_not_submit_buttons(client, annotator):
    """Issue 39: an automation that presses a form's submit button must not switch the
    language: the menu's choices are links; its form (posted by app.js) has no button."""
    import re

    for page in (client.get(reverse("login")), (_log_in(client, annotator.username), client.get(reverse("home")))[1]):
        html = page.content.decode()
        menu = html[html.index('<nav class="language-menu"'):]
        menu = menu[:menu.index("</nav>")]
        assert "<button" not in menu and 'class="language-link' in menu
        assert re.search(r'href="/accounts/language/\?language=(en|zh-hans)&amp;next=', menu)


def test_the_javascript_catalogue_follows_the_language(client, annotator):
    _log_in(client, annotator.username)
    client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    catalog = client.get(reverse("javascript-catalog")).content.decode()
    assert "\\u6392\\u961f\\u4e2d" in catalog or "排队中" in catalog  # "Queued" -> 排队中
    client.post(reverse("set_language"), {"language": "en", "next": "/"})
    assert "排队中" not in client.get(reverse("javascript-catalog")).content.decode()
