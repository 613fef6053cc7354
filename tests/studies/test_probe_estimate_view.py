"""The probe form's call estimate as JSON (studies.views.probe_estimate,
/grading/studies/probes/estimate.json): answers x ticked probes x samples; reviewers only; bad
or partial input is estimated from what is valid, never a 500."""
import pytest
from django.urls import reverse

from studies.models import ProbeRun
from tests.conftest import assert_reviewer_only
from tests.factories import make_question, make_setting

from .helpers import make_answers

pytestmark = pytest.mark.django_db
URL = reverse("studies:probe_estimate")


def test_reviewers_only_and_the_calls_are_answers_times_probes_times_samples(annotator, reviewer, endpoint):
    question = make_question()
    make_answers(question, 3)
    setting = make_setting(endpoint, samples=2)
    query = f"?setting={setting.pk}&probes=drop-final-answer&probes=notation-swap"
    estimate = assert_reviewer_only(URL + query, annotator, reviewer).json()
    assert estimate == {"answers": 3, "probes": 2, "items": 6, "samples": 2, "calls": 12}
    limited = assert_reviewer_only(URL + query + "&limit=1", annotator, reviewer).json()
    assert (limited["answers"], limited["calls"]) == (1, 4)
    assert not ProbeRun.objects.exists()  # it reads only


@pytest.mark.parametrize("query", ["", "?setting=abc&probes=no-such-probe", f"?setting={2**70}&limit=-5",
                                   "?question=xyz&exam=0&limit=999999999999"])
def test_bad_input_is_estimated_from_what_is_valid(reviewer_client, query):
    make_answers(make_question(), 2)
    answer = reviewer_client.get(URL + query)
    assert answer.status_code == 200
    estimate = answer.json()
    assert estimate["probes"] == 0 and estimate["calls"] == 0 and estimate["samples"] == 1
