"""The language menu (accounts.views.set_language, /accounts/language/): a GET shows the one button
and changes nothing; a POST sets the cookie, stores the choice on a logged-in user and goes back
to a local `next`; an unknown language is a 400 on GET and changes nothing on POST."""
import pytest
from django.conf import settings
from django.urls import reverse

from accounts.selectors import stored_language

pytestmark = pytest.mark.django_db
URL = reverse("set_language")


def test_a_get_shows_the_button_and_changes_nothing(annotator_client, annotator):
    page = annotator_client.get(URL, {"language": "zh-hans", "next": "/label/"})
    html = page.content.decode()
    assert page.status_code == 200 and 'value="zh-hans"' in html and 'value="/label/"' in html
    assert settings.LANGUAGE_COOKIE_NAME not in page.cookies
    assert stored_language(annotator) == ""


@pytest.mark.parametrize("language", ["", "klingon", "zh-hans-xx"])
def test_an_unknown_language_on_get_is_a_400(annotator_client, language):
    answer = annotator_client.get(URL, {"language": language})
    assert answer.status_code == 400 and "Unknown language." in answer.content.decode()


def test_a_get_with_next_to_another_host_goes_home_instead(client):
    page = client.get(URL, {"language": "en", "next": "https://elsewhere.example/"})
    assert page.status_code == 200 and page.context["next"] == "/"


def test_a_post_sets_the_cookie_and_stores_the_choice(annotator_client, annotator):
    answer = annotator_client.post(URL, {"language": "zh-hans", "next": "/label/"})
    assert answer.status_code == 302 and answer["Location"] == "/label/"
    assert answer.cookies[settings.LANGUAGE_COOKIE_NAME].value == "zh-hans"
    assert stored_language(annotator) == "zh-hans"


def test_an_unknown_language_on_post_changes_nothing(annotator_client, annotator):
    annotator_client.post(URL, {"language": "zh-hans"})
    answer = annotator_client.post(URL, {"language": "klingon", "next": "https://elsewhere.example/"})
    assert answer.status_code == 302 and "elsewhere" not in answer["Location"]
    assert stored_language(annotator) == "zh-hans"


def test_other_methods_are_refused(annotator_client):
    assert annotator_client.put(URL).status_code == 405
