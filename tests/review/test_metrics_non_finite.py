"""A judge score stored before imports were range-checked (1e308, issue 40, item 3) must not make
the metrics API answer 500 ("Out of range float values are not JSON compliant") nor put inf or
nan into the metrics page, its CSV or the API's JSON."""
import json

import pytest
from django.urls import reverse

from tests.conftest import api_client_for
from tests.factories import make_question, make_responses, make_results, make_stored_setting, set_gold

pytestmark = pytest.mark.django_db


@pytest.fixture
def poisoned():
    question = make_question("Find $x$.", full_score=10)
    responses = make_responses(question, 6)
    set_gold(responses, [5, 6, 7, 8, 9, 4])
    setting = make_stored_setting()
    make_results(setting, responses, [5, 6, 1e308, 8, 9, 4])
    return setting


def test_the_metrics_api_answers_with_finite_numbers_or_null(reviewer, poisoned):
    answer = api_client_for(reviewer).get("/api/review/metrics/", {"setting": poisoned.pk})
    assert answer.status_code == 200
    text = answer.content.decode()
    assert "Infinity" not in text and "NaN" not in text
    report = json.loads(text)  # strict JSON
    assert report["n_counted"] == 5
    assert {"reason": "out_of_range", "label": "score out of range", "n": 1} in report["left_out"]


def test_the_metrics_page_and_csv_show_no_inf_or_nan(reviewer_client, poisoned):
    page = reviewer_client.get(reverse("grading:review_metrics"), {"setting": poisoned.pk})
    assert page.status_code == 200
    csv = reviewer_client.get(reverse("grading:review_metrics_csv"), {"setting": poisoned.pk})
    assert csv.status_code == 200
    for body in (page.content.decode(), csv.content.decode()):
        lowered = body.lower()
        assert ">inf<" not in lowered and ">nan<" not in lowered and ",inf" not in lowered and ",nan" not in lowered
