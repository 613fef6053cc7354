"""accounts.views.profile, /accounts/profile/: one's own account page (name, role, language,
password) and API token: made, shown once, used by the API, renewed and revoked; login needed."""
import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

pytestmark = pytest.mark.django_db
URL = reverse("profile")


def test_needs_login():
    assert Client().get(URL).status_code == 302
    assert Client().post(URL, {"action": "create"}).status_code == 302
    assert not Token.objects.exists()


def test_make_use_renew_and_revoke(annotator_client, annotator):
    page = annotator_client.get(URL).content.decode()
    assert "You have no API token." in page
    made = annotator_client.post(URL, {"action": "create"})
    key = Token.objects.get(user=annotator).key
    assert key in made.content.decode()  # shown once, in the answer that made it
    assert key not in annotator_client.get(URL).content.decode()  # never again

    api = Client(HTTP_AUTHORIZATION=f"Token {key}")
    assert api.get("/api/questions/").status_code == 200

    annotator_client.post(URL, {"action": "create"})
    new_key = Token.objects.get(user=annotator).key
    assert new_key != key and api.get("/api/questions/").status_code in (401, 403)  # the old one stops working

    assert annotator_client.post(URL, {"action": "revoke"}).status_code == 302
    assert not Token.objects.filter(user=annotator).exists()
    assert Client(HTTP_AUTHORIZATION=f"Token {new_key}").get("/api/questions/").status_code in (401, 403)


def test_unknown_action_is_refused(annotator_client, annotator):
    assert annotator_client.post(URL, {"action": "steal"}).status_code == 400
    assert not Token.objects.exists()


def test_api_docs_have_the_menu(annotator_client):
    page = annotator_client.get(reverse("api-docs")).content.decode()
    assert 'aria-label="Main menu"' in page and 'id="swagger-ui"' in page and URL in page


def test_the_account_page_shows_who_and_is_reached_from_the_header(annotator_client, annotator):
    page = annotator_client.get(reverse("home")).content.decode()
    assert f'href="{URL}" class="who-link"' in page  # the user name in the header
    account = annotator_client.get(URL).content.decode()
    assert f'<dd id="account-name">{annotator.username}</dd>' in account
    assert 'id="account-role">annotator<' in account and reverse("password_change") in account


def test_the_first_address_leads_to_the_account_page(annotator_client):
    answer = annotator_client.get(reverse("api_token"))
    assert answer.status_code == 302 and answer["Location"] == URL
