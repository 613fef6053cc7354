"""The review API: reviewers only; queue, metrics, confirm with version check, validation marks."""
import pytest
from django.urls import reverse

from grading.models import JudgeSetting, LlmEndpoint, MetaEvaluation, StepJudgeValidation
from tests.conftest import api_client_for
from tests.factories import make_question, make_responses, make_results, make_stored_setting, set_gold

pytestmark = pytest.mark.django_db


@pytest.fixture
def cases():
    question = make_question("API problem", location="A-01")
    responses = make_responses(question, 3, source="human")
    set_gold(responses, [5, 5, 5])
    setting = make_stored_setting("api-judge")
    return {"config": setting, "results": make_results(setting, responses, [8, 5, 1]), "responses": responses}


ENDPOINTS = [
    ("get", "api-review-metrics", {}),
    ("get", "api-review-disagreements", {}),
    ("get", "api-review-categories", {}),
    ("get", "api-review-meta-eval-run-list", {}),
    ("get", "api-review-validation-report", {}),
    ("post", "api-review-meta-eval-run-list", {}),
]


@pytest.mark.parametrize("method, name, kwargs", ENDPOINTS)
def test_annotators_get_403(annotator, cases, method, name, kwargs):
    response = getattr(api_client_for(annotator), method)(reverse(name, kwargs=kwargs), {}, format="json")
    assert response.status_code == 403


def test_annotator_cannot_confirm_or_mark(annotator, cases):
    api = api_client_for(annotator)
    result = cases["results"][0]
    url = reverse("api-review-meta-evaluation", kwargs={"result_id": result.pk})
    assert api.post(url, {"category": "A"}, format="json").status_code == 403
    assert api.get(url).status_code == 403
    url = reverse("api-review-validation", kwargs={"response_id": result.response_id})
    assert api.post(url, {"marks": {str(result.pk): True}}, format="json").status_code == 403
    assert not MetaEvaluation.objects.exists() and not StepJudgeValidation.objects.exists()


def test_anonymous_gets_403(client, cases):
    assert client.get(reverse("api-review-disagreements")).status_code in (401, 403)


def test_queue_and_metrics(reviewer, cases):
    api = api_client_for(reviewer)
    queue = api.get(reverse("api-review-disagreements"), {"setting": cases["config"].pk}).json()
    assert queue["count"] == 2
    assert sorted((row["judge_score"], row["gold"], row["delta"], row["direction"]) for row in queue["results"]) == [
        (1.0, 5.0, -4.0, "under"), (8.0, 5.0, 3.0, "over")]
    assert api.get(reverse("api-review-disagreements"), {"threshold": "4"}).json()["count"] == 1
    assert api.get(reverse("api-review-disagreements"), {"threshold": "lots"}).status_code == 400
    assert api.get(reverse("api-review-disagreements"), {"setting": "424242"}).status_code == 404
    metrics = api.get(reverse("api-review-metrics"), {"setting": cases["config"].pk}).json()
    assert metrics["n_counted"] == 3 and metrics["overall"]["mse"] == pytest.approx((9 + 0 + 16) / 3)


def test_confirm_then_stale_version_gets_409(reviewer, cases):
    api = api_client_for(reviewer)
    result = cases["results"][0]
    url = reverse("api-review-meta-evaluation", kwargs={"result_id": result.pk})
    assert api.get(url).status_code == 404
    saved = api.post(url, {"category": "c", "analysis": "missing case", "version": 0}, format="json")
    assert saved.status_code == 200, saved.content
    assert saved.json()["category"] == "C" and saved.json()["version"] == 1
    stale = api.post(url, {"category": "A", "version": 0}, format="json")
    assert stale.status_code == 409 and stale.json()["version"] == 1
    assert api.post(url, {"category": "Q"}, format="json").status_code == 400
    assert api.get(url).json()["category"] == "C"
    rows = api.get(reverse("api-review-disagreements"), {"category": "C"}).json()["results"]
    assert [row["result"] for row in rows] == [result.pk]
    assert api.get(reverse("api-review-categories")).json()["counts"] == [0, 0, 1, 0, 0]


def test_prelabel_run_validation(reviewer, cases):
    api = api_client_for(reviewer)
    url = reverse("api-review-meta-eval-run-list")
    assert api.post(url, {"endpoint": 999, "model": "m"}, format="json").status_code == 400
    endpoint = LlmEndpoint.objects.create(name="e", base_url="http://127.0.0.1:9/v1", api_key_env="REALMATH_LLM_KEY_NOT_SET_ANYWHERE")
    refused = api.post(url, {"endpoint": endpoint.pk, "model": "m", "setting": cases["config"].pk}, format="json")
    assert refused.status_code == 400 and "REALMATH_LLM_KEY_NOT_SET_ANYWHERE" in str(refused.json())


def test_validation_marks_and_report(reviewer, cases):
    question = make_question("Prove $a^2+b^2 \\geq 2ab$.", location="", kind="relation")
    responses = make_responses(question, 2, source="synthetic", start=300)
    toy = make_stored_setting("toy", kind=JudgeSetting.Kind.INEQ_TOY_CASE)
    results = make_results(toy, responses, [1, 0])
    api = api_client_for(reviewer)
    url = reverse("api-review-validation", kwargs={"response_id": responses[0].pk})
    assert api.post(url, {"marks": {str(results[0].pk): False}}, format="json").json() == {"saved": 1}
    assert api.post(url, {"marks": {str(results[1].pk): True}}, format="json").status_code == 400  # other response
    assert api.post(url, {"marks": {"x": True}}, format="json").status_code == 400
    report = api.get(reverse("api-review-validation-report")).json()
    toy_row = next(j for j in report["judges"] if j["slot"] == "toy_case")
    # the judge passed it, the expert says that was wrong: with "flaw" positive that is a false negative
    assert (toy_row["tp"], toy_row["fp"], toy_row["fn"], toy_row["tn"]) == (0, 0, 1, 0)
    assert api.get(reverse("api-review-validation-report"), {"positive": "odd"}).status_code == 400
