"""The API's answer to a missing or bad credential (issue 39): 401 with `WWW-Authenticate: Token`,
as a client expects; a logged-in session still works (with its CSRF check on writes), and a
person without the role is still refused with 403."""
import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("headers", [{}, {"HTTP_AUTHORIZATION": "Token not-a-real-key"},
                                     {"HTTP_AUTHORIZATION": "Token"}])
def test_a_missing_or_bad_token_is_a_401_naming_the_scheme(headers):
    answer = Client(**headers).get("/api/questions/")
    assert answer.status_code == 401
    assert answer["WWW-Authenticate"] == "Token"


def test_a_good_token_and_a_session_work(annotator, annotator_client):
    key = Token.objects.create(user=annotator).key
    assert Client(HTTP_AUTHORIZATION=f"Token {key}").get("/api/questions/").status_code == 200
    assert annotator_client.get("/api/questions/").status_code == 200


def test_a_session_write_still_needs_its_csrf_token(annotator):
    client = Client(enforce_csrf_checks=True)
    client.force_login(annotator)
    assert client.post("/api/labels/next/", {}, content_type="application/json").status_code == 403


def test_a_known_user_without_the_role_is_a_403(reviewer, annotator):
    key = Token.objects.create(user=annotator).key
    answer = Client(HTTP_AUTHORIZATION=f"Token {key}").get(reverse("api-review-disagreements"))
    assert answer.status_code == 403 and "WWW-Authenticate" not in answer
