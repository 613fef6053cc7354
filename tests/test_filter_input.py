"""Malformed numbers in query parameters never answer 500.

"²" and "٣" are digits to Python's str.isdigit and int() but no database id; "NaN", "Infinity",
"sNaN" and "1E+999999" are decimals no database compares with. Pages ignore a filter they cannot
read (as they ignore "abc"); the response API answers 400 naming the parameter.
"""
import pytest
from django.test import Client

from annotation.models import Response

from .factories import make_question, make_responses

pytestmark = pytest.mark.django_db

SPECIAL = ["²", "NaN", "-Infinity", "sNaN", "1E+999999"]

# Every route that reads a number from its query string, with the parameters it reads.
ROUTES = {
    "/responses/": ["question", "exam", "score_min", "score_max", "page"],
    "/api/responses/": ["question", "exam", "score_min", "score_max", "page"],
    "/export/": ["question", "exam", "score_min", "score_max"],
    "/grading/judges/runs/new/": ["question", "exam", "score_min", "score_max", "config"],
    "/grading/judges/runs/": ["config", "page"],
    "/api/judge-results/": ["response", "config", "run"],
    "/adjudication/": ["question", "exam", "threshold"],
    "/api/adjudication/queue/": ["question", "exam", "threshold"],
    "/agreement/": ["question", "exam"],
    "/api/agreement/": ["question", "exam"],
    "/grading/review/metrics/": ["setting", "run"],
    "/grading/review/metrics.csv": ["setting", "run"],
    "/api/review/metrics/": ["setting", "run"],
    "/grading/review/disagreements/": ["setting", "run", "question", "exam", "threshold"],
    "/api/review/disagreements/": ["setting", "run", "question", "exam", "threshold"],
    "/grading/review/categories/": ["setting"],
    "/api/review/categories/": ["setting"],
    "/grading/review/validation/": ["question"],
    "/grading/report/": ["setting"],
}


@pytest.fixture
def reviewer_web(reviewer):
    client = Client(raise_request_exception=False)
    client.force_login(reviewer)
    question = make_question()
    make_responses(question, 3, gold=5)
    return client


@pytest.mark.parametrize("route", ROUTES)
def test_malformed_numbers_never_answer_500(reviewer_web, route):
    failures = [
        (name, value, code)
        for name in ROUTES[route]
        for value in SPECIAL
        if (code := reviewer_web.get(route, {name: value}).status_code) >= 500
    ]
    assert not failures


def test_response_api_refuses_malformed_numbers(reviewer_web):
    for name in ("question", "exam", "score_min", "score_max"):
        for value in ("²", "NaN", "Infinity", "-Infinity", "sNaN", "1.5e", "0x10", *(["٣"] if name in ("question", "exam") else [])):
            response = reviewer_web.get("/api/responses/", {name: value})
            assert response.status_code == 400 and name in response.json(), (name, value)


def test_response_page_ignores_malformed_numbers(reviewer_web):
    every = Response.objects.count()
    for name in ("question", "exam", "score_min", "score_max"):
        for value in ("²", "NaN", "Infinity", "sNaN", "abc"):
            assert reviewer_web.get("/responses/", {name: value}).context["page"].paginator.count == every


def test_score_bounds_beyond_any_score(reviewer_web):
    """A bound no score reaches selects as such (clamped, so that no database overflows)."""
    every = Response.objects.count()
    for params, expected in [
        ({"score_min": "1E+999999"}, 0), ({"score_max": "1E+999999"}, every),
        ({"score_min": "-1E+999999"}, every), ({"score_max": "-1E+999999"}, 0), ({"score_min": "100000"}, 0),
        ({"score_min": "1e40"}, 0), ({"score_max": "-1e40"}, 0), ({"score_min": "-1e40"}, every),
    ]:
        assert reviewer_web.get("/responses/", params).context["page"].paginator.count == expected, params
        api = reviewer_web.get("/api/responses/", params)
        if "1E+999999" in params.values():  # above what the API's number filter takes (1e50)
            assert api.status_code == 400
        else:
            assert api.json()["count"] == expected, params
