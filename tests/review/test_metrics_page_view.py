"""The metrics page (grading.review.views.metrics_page, /grading/review/metrics/), with the roles of every review page."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from grading.models import JudgeResult
from tests.factories import make_responses, make_results

from .conftest import _grow

pytestmark = pytest.mark.django_db


PAGES = [
    ("grading:review_metrics", []),
    ("grading:review_metrics_csv", []),
    ("grading:review_disagreements", []),
    ("grading:review_categories", []),
    ("grading:review_validation", []),
    ("grading:review_validation_report", []),
]


@pytest.mark.parametrize("name, args", PAGES)
def test_anonymous_is_sent_to_login(client, name, args):
    response = client.get(reverse(name, args=args))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


@pytest.mark.parametrize("name, args", PAGES)
def test_annotators_are_refused(annotator_client, cases, name, args):
    assert annotator_client.get(reverse(name, args=args)).status_code == 403


@pytest.mark.parametrize("name, args", PAGES)
def test_reviewers_and_admins_may(reviewer_client, cases, name, args):
    assert reviewer_client.get(reverse(name, args=args)).status_code == 200


def test_metrics_page_shows_figures_and_left_out(reviewer_client, cases):
    extra = make_responses(cases["question"], 2, source="human", start=90)
    make_results(cases["config"], extra[:1], [None], status=JudgeResult.Status.INVALID)
    make_results(cases["config"], extra[1:], [4])  # no gold
    page = reviewer_client.get(reverse("grading:review_metrics"), {"setting": cases["config"].pk})
    html = page.content.decode()
    assert page.context["report"]["n_counted"] == 5
    # deltas 3, -2, 0, 1, -1 -> MSE 15/5 = 3
    assert page.context["report"]["overall"]["mse"] == pytest.approx(3.0)
    assert "1</strong> judge output unreadable" in html and "1</strong> no gold score" in html
    assert 'id="plot-scatter"' in html and 'id="metrics-plots"' in html


def test_unknown_setting_is_404(reviewer_client, cases):
    assert reviewer_client.get(reverse("grading:review_metrics"), {"setting": "99999"}).status_code == 404
    assert reviewer_client.get(reverse("grading:review_disagreements"), {"run": "x"}).status_code == 404


@pytest.mark.parametrize("name", ["grading:review_metrics", "grading:review_disagreements"])
def test_page_query_count_is_flat(reviewer_client, name):
    small, large = _grow(5, "small"), _grow(300, "large")
    counts = []
    for setting in (small, large):
        with CaptureQueriesContext(connection) as queries:
            assert reviewer_client.get(reverse(name), {"setting": setting.pk}).status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1], counts


def test_odd_input_never_fails(reviewer_client, cases):
    big = "9" * 30
    assert reviewer_client.get(reverse("grading:review_metrics"), {"setting": big}).status_code == 404
    assert reviewer_client.get(reverse("grading:review_disagreements"), {"question": big, "exam": "x"}).status_code == 200
    assert reviewer_client.get(reverse("grading:review_categories"), {"setting": big}).status_code == 200
    url = reverse("grading:review_case", args=[cases["results"][0].pk])
    response = reviewer_client.post(url, {"category": "A", "version": "abc"})
    assert response.status_code == 200 and "whole number" in response.content.decode()
    response = reviewer_client.post(reverse("grading:review_meta_eval_run_start"), {"endpoint": "abc", "setting": cases["config"].pk})
    assert response.status_code == 302
