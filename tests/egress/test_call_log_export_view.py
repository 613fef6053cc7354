"""The provider-call log as JSON: admins only, the page's filters, a 400 for bad ones, never the content."""
import json
from datetime import UTC, datetime

import pytest
from django.urls import reverse

from egress.models import ProviderCall

pytestmark = pytest.mark.django_db
URL = reverse("egress:call_log_export")


@pytest.fixture
def calls(db):
    rows = [("api.openai.com", "judge", 1000, 3, [11, 12]), ("vision.example.org", "vision-ocr", 70000, 5, []),
            ("api.openai.com", "embeddings", 300, 6, [13])]
    return [ProviderCall.objects.create(host=h, method="POST", path="/v1/x", purpose=p, answer_ids=a, page_ids=[9],
                                        bytes_sent=s, bytes_received=10, status=200,
                                        started=datetime(2026, 11, d, tzinfo=UTC)) for h, p, s, d, a in rows]


def read(answer):
    assert answer.status_code == 200 and answer["Content-Type"] == "application/json"
    return json.loads(b"".join(answer.streaming_content))


def test_anonymous_is_sent_to_log_in(client):
    assert client.get(URL).status_code == 302


@pytest.mark.parametrize("who", ["annotator_client", "reviewer_client"])
def test_other_roles_are_refused(request, who):
    assert request.getfixturevalue(who).get(URL).status_code == 403


def test_every_call_oldest_first_with_totals(admin_client_, calls):
    data = read(admin_client_.get(URL))
    assert [c["purpose"] for c in data["calls"]] == ["judge", "vision-ocr", "embeddings"]
    first = data["calls"][0]
    assert set(first) == {"id", "started", "host", "method", "path", "purpose", "answer_ids", "page_ids", "bytes_sent",
                          "bytes_received", "status", "error", "duration_ms"}
    assert first["answer_ids"] == [11, 12] and first["started"].startswith("2026-11-03")
    assert {t["host"]: t["bytes_sent"] for t in data["totals_by_host"]} == {"api.openai.com": 1300,
                                                                           "vision.example.org": 70000}
    assert data["filters"] == {"purpose": None, "host": None, "since": None, "until": None}


def test_the_same_filters_as_the_page(admin_client_, calls):
    data = read(admin_client_.get(URL, {"host": "api.openai.com", "since": "2026-11-04"}))
    assert [c["purpose"] for c in data["calls"]] == ["embeddings"]
    assert data["filters"] == {"purpose": None, "host": "api.openai.com", "since": "2026-11-04", "until": None}
    assert read(admin_client_.get(URL, {"purpose": "vision-ocr"}))["calls"][0]["bytes_sent"] == 70000
    assert read(admin_client_.get(URL, {"purpose": "unlabelled"}))["calls"] == []


@pytest.mark.parametrize("query, field", [({"purpose": "all"}, "purpose"), ({"until": "31/12/2026"}, "until"),
                                          ({"since": "2026-11-06", "until": "2026-11-01"}, "until")])
def test_bad_filters_are_a_400_naming_them(admin_client_, calls, query, field):
    answer = admin_client_.get(URL, query)
    assert answer.status_code == 400 and field in answer.json()["fields"]
