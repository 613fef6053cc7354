"""Every page and API needs login and the right role."""
import re

import pytest
from django.urls import reverse

from tests.conftest import REALMATH_HUMAN, api_client_for

pytestmark = pytest.mark.django_db

PAGES = ["home", "annotation:question_list", "annotation:response_list", "annotation:import", "api-docs"]


@pytest.mark.parametrize("name", PAGES)
def test_pages_redirect_anonymous_to_login(client, name):
    response = client.get(reverse(name))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize("url", ["/api/questions/", "/api/responses/", "/api/schema/", "/api/import/"])
def test_api_refuses_anonymous(client, url):
    assert client.get(url).status_code in (401, 403)


def test_user_without_role_is_refused(client, django_user_model):
    user = django_user_model.objects.create_user("norole", password="x-long-password-1")
    client.force_login(user)
    assert client.get(reverse("annotation:question_list")).status_code == 403
    assert api_client_for(user).get("/api/questions/").status_code == 403


def test_annotator_cannot_import(annotator_client):
    assert annotator_client.get(reverse("annotation:import")).status_code == 403
    with REALMATH_HUMAN.open("rb") as handle:
        response = annotator_client.post(reverse("annotation:import"), {"format": "realmath", "file": handle})
    assert response.status_code == 403


def test_annotator_api_import_is_403(annotator):
    with REALMATH_HUMAN.open("rb") as handle:
        response = api_client_for(annotator).post("/api/import/", {"format": "realmath", "file": handle})
    assert response.status_code == 403


def test_annotator_cannot_see_admin(annotator_client):
    response = annotator_client.get("/admin/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_reviewer_cannot_see_admin_but_admin_can(reviewer_client, client, admin_user):
    assert reviewer_client.get("/admin/").status_code == 302
    client.force_login(admin_user)
    assert client.get("/admin/").status_code == 200


def test_annotator_sees_question_list(annotator_client, sample_data):
    assert annotator_client.get(reverse("annotation:question_list")).status_code == 200


def test_schema_and_docs_for_logged_in_users(annotator_client):
    assert annotator_client.get("/api/schema/").status_code == 200
    docs = annotator_client.get("/api/docs/")
    assert docs.status_code == 200
    page = docs.content.decode()
    # Assets come from our own static files: every src/href is a local path (a plain search for
    # "cdn" is no test: the page carries a random CSRF token that can spell it).
    # The start-up script is its own request (no inline script, for the CSP).
    # The page sits in the app's layout, so its menu links are local pages; what it loads is ours.
    # /i18n/js/ is the interface's own JavaScript translation catalogue, served by the app.
    assets = re.findall(r"""<(?:script|link|img)[^>]*(?:src|href)=["']([^"']+)""", page)
    assert assets and all(url.startswith(("/static/", "/api/docs/?script", "/i18n/js/")) for url in assets), assets
    links = re.findall(r"""(?:src|href)=["']([^"']+)""", page)
    assert all(url.startswith("/") and not url.startswith("//") for url in links), links
    assert not re.search(r"https?://|[\"']//", page)
    assert not re.search(r"<script(?![^>]*\bsrc=)", page)
    script = annotator_client.get("/api/docs/?script=")
    assert script.status_code == 200 and script["Content-Type"].startswith("application/javascript")


def test_token_auth_works(annotator):
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    token = Token.objects.create(user=annotator)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    assert api.get("/api/questions/").status_code == 200
