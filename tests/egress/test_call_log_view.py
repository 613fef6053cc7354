"""The provider-call log page: admins only, filters (bad values shown and not applied), totals per host."""
from datetime import UTC, datetime

import pytest
from django.urls import reverse

from accounts.services import set_user_language
from egress.models import ProviderCall

pytestmark = pytest.mark.django_db
URL = reverse("egress:call_log")


def call(host, purpose, sent, when, answers=(), status=200):
    return ProviderCall.objects.create(host=host, method="POST", path="/v1/chat/completions", purpose=purpose,
                                       answer_ids=list(answers), bytes_sent=sent, bytes_received=100, status=status,
                                       started=when, duration_ms=50)


@pytest.fixture
def calls(db):
    return [
        call("api.openai.com", "judge", 1000, datetime(2026, 11, 3, 10, tzinfo=UTC), [11]),
        call("api.openai.com", "meta-eval", 500, datetime(2026, 11, 5, 10, tzinfo=UTC), [12]),
        call("vision.example.org", "vision-ocr", 70000, datetime(2026, 11, 5, 11, tzinfo=UTC)),
        call("127.0.0.1:8001", "", 10, datetime(2026, 11, 6, 9, tzinfo=UTC), status=0),
    ]


def test_anonymous_is_sent_to_log_in(client):
    answer = client.get(URL)
    assert answer.status_code == 302 and reverse("login") in answer["Location"]


@pytest.mark.parametrize("who", ["annotator_client", "reviewer_client"])
def test_other_roles_are_refused(request, who):
    assert request.getfixturevalue(who).get(URL).status_code == 403


def test_admins_see_every_call_and_the_totals_by_host(admin_client_, calls):
    answer = admin_client_.get(URL)
    assert answer.status_code == 200
    by_host = {row["host"]: row for row in answer.context["by_host"]}
    assert by_host["api.openai.com"] == {"host": "api.openai.com", "calls": 2, "bytes_sent": 1500, "bytes_received": 200}
    assert [row["host"] for row in answer.context["by_host"]][0] == "vision.example.org"  # most sent first
    assert answer.context["page"].paginator.count == 4
    page = answer.content.decode()
    assert "vision.example.org" in page and "Unlabelled" in page and "70000" in page


def test_sizes_in_brackets_follow_the_language(admin_client_, admin_user, calls):
    """"70000 (68.4 KB)" in English, full-width brackets in Chinese (issue 39)."""
    assert "(68.4\xa0KB)</span>" in admin_client_.get(URL).content.decode()
    set_user_language(admin_user, "zh-hans")
    page = admin_client_.get(URL).content.decode()
    assert "（68.4\xa0KB）</span>" in page and "（100\xa0字节）</span>" in page and "(68.4" not in page

@pytest.mark.parametrize("query, expected", [
    ({"purpose": "judge"}, {"judge"}),
    ({"purpose": "unlabelled"}, {""}),
    ({"host": "api.openai.com"}, {"judge", "meta-eval"}),
    ({"since": "2026-11-05"}, {"meta-eval", "vision-ocr", ""}),
    ({"since": "2026-11-04", "until": "2026-11-05"}, {"meta-eval", "vision-ocr"}),
])
def test_filters(admin_client_, calls, query, expected):
    answer = admin_client_.get(URL, query)
    assert {c.purpose for c in answer.context["page"]} == expected


@pytest.mark.parametrize("query, shown", [
    ({"purpose": "everything"}, "Select a valid choice"),
    ({"since": "yesterday"}, "Enter a valid date"),
    ({"since": "2026-13-45"}, "Enter a valid date"),
    ({"since": "2026-11-06", "until": "2026-11-01"}, "The end date is before the start date"),
    ({"host": "h" * 300}, "at most 255 characters"),
    ({"page": "-3"}, None),
    ({"page": "9" * 40}, None),
    ({"since": "2026-11-05\x00"}, None),
])
def test_a_bad_filter_is_shown_and_not_applied_never_a_500(admin_client_, calls, query, shown):
    answer = admin_client_.get(URL, query)
    assert answer.status_code in (200, 400)
    if answer.status_code == 200:
        assert answer.context["page"].paginator.count >= 1
        if shown:
            assert shown in answer.content.decode() and "This filter is not applied" in answer.content.decode()


@pytest.mark.parametrize("who, shown", [("admin_client_", True), ("reviewer_client", False),
                                        ("annotator_client", False)])
def test_the_menu_shows_the_log_to_admins_only(request, who, shown):
    assert (URL in request.getfixturevalue(who).get(reverse("home")).content.decode()) is shown


def test_django_admin_lists_the_calls_read_only(admin_client_, calls):
    answer = admin_client_.get(reverse("admin:egress_providercall_changelist"))
    assert answer.status_code == 200 and "vision.example.org" in answer.content.decode()
    assert admin_client_.get(reverse("admin:egress_providercall_add")).status_code == 403
