"""A run's cost estimate as JSON (grading.judges.views.run_estimate, /grading/judges/runs/estimate.json),
asked by the Start page for the chosen setting and selection: reviewers only; an unknown or
imported setting, or an empty selection, is a 400 with a reason, never a 500."""
import pytest
from django.urls import reverse

from grading.models import JudgeRun
from tests.conftest import assert_reviewer_only
from tests.factories import make_responses, make_setting, make_stored_setting

pytestmark = pytest.mark.django_db
URL = reverse("grading:judge_run_estimate")


def test_reviewers_only_and_the_estimate_counts_the_selection(annotator, reviewer, endpoint, rubric_question):
    make_responses(rubric_question, 4)
    setting = make_setting(endpoint, price_input_per_1k="0.001", price_output_per_1k="0.002", samples=2)
    answer = assert_reviewer_only(f"{URL}?config={setting.pk}", annotator, reviewer)
    estimate = answer.json()
    assert answer.status_code == 200
    assert (estimate["setting"], estimate["n_items"], estimate["samples"], estimate["calls"]) == (setting.pk, 4, 2, 8)
    assert estimate["input_tokens"] > 0 and estimate["priced"] and float(estimate["cost_live"]) > 0
    assert estimate["assumptions"]  # the assumptions in words
    narrowed = answer.client.get(URL, {"config": setting.pk, "student": "", "q": "Answer 3"}).json()
    assert narrowed["n_items"] == 1 and narrowed["calls"] == 2
    assert not JudgeRun.objects.exists()  # it reads only


@pytest.mark.parametrize("setting_id", ["999999", "abc", str(2**70)])
def test_an_unknown_setting_is_a_400_with_a_reason(reviewer_client, endpoint, rubric_question, setting_id):
    make_responses(rubric_question, 1)
    answer = reviewer_client.get(URL, {"config": setting_id})
    assert answer.status_code == 400 and answer.json()["error"] == "No such judge setting can be run."


def test_an_imported_setting_and_an_empty_selection_are_400s(reviewer_client, endpoint, rubric_question):
    make_responses(rubric_question, 1)
    imported = make_stored_setting()
    assert reviewer_client.get(URL, {"config": imported.pk}).status_code == 400
    setting = make_setting(endpoint)
    empty = reviewer_client.get(URL, {"config": setting.pk, "source": "synthetic"})
    assert empty.status_code == 400 and empty.json()["error"] == "No response matches this selection."
    assert reviewer_client.get(URL).status_code == 400  # no setting chosen
