"""'Test connection' on the endpoint form: admins only, POST only, an allowed host only, and the
key never appears in what the page says."""
import pytest
from django.test import Client
from django.urls import reverse

from tests.factories import API_KEY_ENV

pytestmark = pytest.mark.django_db


def url(endpoint):
    return reverse("grading:judge_endpoint_test", args=[endpoint.pk])


def test_admin_tests_an_endpoint_and_sees_its_models(admin_client_, endpoint, monkeypatch):
    monkeypatch.setenv(API_KEY_ENV, "sk-secret-value-123")
    form = admin_client_.get(reverse("grading:judge_endpoint_edit", args=[endpoint.pk])).content.decode()
    assert 'id="test-connection"' in form
    answer = admin_client_.post(url(endpoint), follow=True)
    html = answer.content.decode()
    assert "answered: models test-model" in html and "sk-secret-value-123" not in html


def test_refused_host_and_dead_endpoint_are_said_in_words(admin_client_, endpoint, settings):
    settings.LLM_ALLOWED_HOSTS = ["llm.example.org"]
    html = admin_client_.post(url(endpoint), follow=True).content.decode()
    assert "could not be reached" in html and "not in REALMATH_LLM_ALLOWED_HOSTS" in html
    settings.LLM_ALLOWED_HOSTS = []
    endpoint.base_url = "http://127.0.0.1:9/v1"  # nothing listens there
    endpoint.save()
    html = admin_client_.post(url(endpoint), follow=True).content.decode()
    assert "could not be reached" in html


def test_only_admins_may_and_only_by_post(reviewer, admin_client_, endpoint):
    other = Client()
    other.force_login(reviewer)
    assert other.post(url(endpoint)).status_code == 403
    assert admin_client_.get(url(endpoint)).status_code == 405
