"""The login page (accounts.views.LoginView, /accounts/login/): open to everyone; a right password
logs in and goes on to `next` or home, a wrong one shows the form's error; a language chosen on
the login page is stored on the account at login."""
import pytest
from django.test import Client
from django.urls import reverse

from accounts.selectors import stored_language
from accounts.views import LOGIN_PAGE_LANGUAGE
from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db
URL = reverse("login")


def test_the_page_renders_its_form_to_anyone(client):
    page = client.get(URL)
    html = page.content.decode()
    assert page.status_code == 200
    assert 'name="username"' in html and 'name="password"' in html and "csrfmiddlewaretoken" in html


def test_a_right_password_logs_in_and_goes_on_to_next(client, annotator):
    answer = client.post(f"{URL}?next=/label/", {"username": annotator.username, "password": PASSWORD})
    assert answer.status_code == 302 and answer["Location"] == "/label/"
    assert client.session["_auth_user_id"] == str(annotator.pk)
    home = Client().post(URL, {"username": annotator.username, "password": PASSWORD})
    assert home["Location"] == reverse("home")


def test_a_wrong_password_is_refused_with_the_forms_error(client, annotator):
    answer = client.post(URL, {"username": annotator.username, "password": "not-the-password"})
    assert answer.status_code == 200 and answer.context["form"].errors
    assert "_auth_user_id" not in client.session
    assert "Your username and password didn't match." in answer.content.decode()


def test_next_to_another_host_is_not_followed(client, annotator):
    answer = client.post(f"{URL}?next=https://elsewhere.example/", {"username": annotator.username, "password": PASSWORD})
    assert answer.status_code == 302 and answer["Location"] == reverse("home")


def test_a_language_chosen_on_the_login_page_is_stored_at_login(client, annotator):
    client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    assert client.session[LOGIN_PAGE_LANGUAGE] == "zh-hans"
    client.post(URL, {"username": annotator.username, "password": PASSWORD})
    assert stored_language(annotator) == "zh-hans"
    assert LOGIN_PAGE_LANGUAGE not in client.session
