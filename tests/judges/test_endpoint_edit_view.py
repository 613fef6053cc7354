"""The endpoint form (grading.judges.views.endpoint_edit, /grading/judges/endpoints/new/): a variable name, never a key."""
import pytest
from django.urls import reverse

from grading.models import LlmEndpoint
from tests.factories import API_KEY_ENV

pytestmark = pytest.mark.django_db


def test_endpoint_form_keeps_keys_out(admin_client_, llm_server):
    url = reverse("grading:judge_endpoint_create")
    page = admin_client_.post(url, {"name": "bad", "base_url": llm_server.url, "api_key_env": "sk-live-123",
                                    "max_concurrency": 4, "requests_per_minute": 0, "tokens_per_minute": 0,
                                    "timeout_seconds": 30, "max_attempts": 3})
    assert "not a key" in page.content.decode() and not LlmEndpoint.objects.exists()
    admin_client_.post(url, {"name": "good", "base_url": llm_server.url, "api_key_env": API_KEY_ENV,
                             "max_concurrency": 4, "requests_per_minute": 60, "tokens_per_minute": 0,
                             "timeout_seconds": 30, "max_attempts": 3})
    endpoint = LlmEndpoint.objects.get(name="good")
    assert endpoint.requests_per_minute == 60
    home = admin_client_.get(reverse("grading:judges_home")).content.decode()
    assert API_KEY_ENV in home and "sk-test-not-a-real-key" not in home
