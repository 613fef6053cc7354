"""Step-judge validation: confusion matrices and per-model accuracies against hand-worked values."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from grading.models import JudgeSetting, StepJudgeValidation
from grading.review import selectors as sel
from grading.review import services
from tests.factories import make_question, make_responses, make_results, make_stored_setting

pytestmark = pytest.mark.django_db
K = JudgeSetting.Kind

VERDICTS = {  # r1 r2 r3 (model-x), r4 r5 (model-y); 1 = the judge passes the solution
    K.INEQ_FINAL_ANSWER: [1, 1, 0, 1, 0],
    K.INEQ_TOY_CASE: [1, 0, 1, 1, 1],
    K.INEQ_LOGICAL_GAP: [1, 1, 1, 0, 1],
    K.INEQ_NUMERICAL_APPROXIMATION: [1, 1, 1, 1, 1],
    K.INEQ_NUMERICAL_COMPUTATION: [1, 1, 0, 1, 1],
}


@pytest.fixture
def judged():
    question = make_question("Find the largest $C$ with $a+b \\geq C\\sqrt{ab}$.", location="", kind="bound")
    responses = make_responses(question, 5, source="synthetic", start=900)
    for response, model in zip(responses, ["model-x"] * 3 + ["model-y"] * 2):
        response.generator_model = model
        response.save()
    results = {}
    for kind, verdicts in VERDICTS.items():
        results[kind] = make_results(make_stored_setting(f"ineq {kind}", kind=kind), responses, verdicts)
    return {"responses": responses, "results": results}


def _mark_toy(judged, user):
    toy = judged["results"][K.INEQ_TOY_CASE]
    for result, right in zip(toy, [True, True, False, True, False]):
        services.save_step_validations(result.response, {result.pk: right}, user=user)


def test_confusion_matrix_by_hand(judged, reviewer):
    _mark_toy(judged, reviewer)
    chosen = sel.validation_judges()["chosen"]
    flaw = next(j for j in sel.validation_report(chosen, "flaw")["judges"] if j["slot"] == "toy_case")
    assert (flaw["tp"], flaw["fp"], flaw["fn"], flaw["tn"]) == (1, 0, 2, 2)
    assert flaw["accuracy"] == pytest.approx(3 / 5) and flaw["precision"] == 1.0
    assert flaw["recall"] == pytest.approx(1 / 3) and flaw["f1"] == pytest.approx(0.5)
    passes = next(j for j in sel.validation_report(chosen, "pass")["judges"] if j["slot"] == "toy_case")
    assert (passes["tp"], passes["fp"], passes["fn"], passes["tn"]) == (2, 2, 0, 1)
    assert passes["precision"] == 0.5 and passes["recall"] == 1.0 and passes["f1"] == pytest.approx(2 / 3)
    gap = next(j for j in sel.validation_report(chosen)["judges"] if j["slot"] == "logical_gap")
    assert gap["n"] == 0 and gap["accuracy"] is None and gap["f1"] is None


def test_accuracy_per_model_by_hand(judged):
    models = {m["model"]: m for m in sel.validation_report(sel.validation_judges()["chosen"])["models"]}
    x, y = models["model-x"], models["model-y"]
    assert x["answer_acc"] == pytest.approx(2 / 3) and y["answer_acc"] == pytest.approx(1 / 2)
    steps_x = {s["slot"]: s["acc"] for s in x["step_acc"]}
    steps_y = {s["slot"]: s["acc"] for s in y["step_acc"]}
    assert steps_x == pytest.approx({"toy_case": 2 / 3, "logical_gap": 1, "numerical_approximation": 1,
                                     "numerical_computation": 2 / 3})
    assert steps_y == pytest.approx({"toy_case": 1, "logical_gap": 1 / 2, "numerical_approximation": 1,
                                     "numerical_computation": 1})
    assert x["overall_acc"] == pytest.approx(1 / 3) and y["overall_acc"] == 0 and x["n_overall"] == 3


def test_overall_needs_all_five_judges(judged):
    chosen = sel.validation_judges({"judge_logical_gap": "none"})["chosen"]
    models = {m["model"]: m for m in sel.validation_report(chosen)["models"]}
    assert models["model-x"]["overall_acc"] is None and models["model-x"]["n_overall"] == 0


def test_marks_for_another_response_are_refused(judged, reviewer):
    from django.core.exceptions import ValidationError

    toy = judged["results"][K.INEQ_TOY_CASE]
    with pytest.raises(ValidationError):
        services.save_step_validations(judged["responses"][0], {toy[1].pk: True}, user=reviewer)
    assert not StepJudgeValidation.objects.exists()


def test_validation_pages(reviewer_client, annotator, judged):
    from django.test import Client

    response = judged["responses"][0]
    toy, gap = judged["results"][K.INEQ_TOY_CASE][0], judged["results"][K.INEQ_LOGICAL_GAP][0]
    url = reverse("grading:review_validation_case", args=[response.pk])
    other = Client()
    other.force_login(annotator)
    assert other.get(url).status_code == 403
    assert other.post(url, {f"mark_{toy.pk}": "right"}).status_code == 403
    page = reviewer_client.get(url)
    html = page.content.decode()
    assert "Toy case" in html and "Numerical computation" in html and f'name="mark_{toy.pk}"' in html
    saved = reviewer_client.post(url, {f"mark_{toy.pk}": "right", f"mark_{gap.pk}": "wrong", f"note_{gap.pk}": "gap at step 3",
                                       "then": "next"})
    assert saved.status_code == 302 and f"/validation/{judged['responses'][1].pk}/" in saved["Location"]
    marks = {v.result_id: (v.verdict_right, v.judge_says_pass, v.note) for v in StepJudgeValidation.objects.all()}
    assert marks == {toy.pk: (True, True, ""), gap.pk: (False, True, "gap at step 3")}
    listing = reviewer_client.get(reverse("grading:review_validation")).content.decode()
    assert "✓ right" in listing and "✗ wrong" in listing
    report = reviewer_client.get(reverse("grading:review_validation_report"))
    assert report.status_code == 200 and "model-x" in report.content.decode()
    assert "66.7%" in report.content.decode()  # Answer Acc of model-x


def test_report_query_count_is_flat(reviewer_client, judged):
    def measure():
        with CaptureQueriesContext(connection) as queries:
            reviewer_client.get(reverse("grading:review_validation_report"))
        return len(queries)

    before = measure()
    question = make_question("Another inequality", location="", kind="relation")
    more = make_responses(question, 60, source="synthetic", start=5000)
    for kind in VERDICTS:
        setting = JudgeSetting.objects.get(kind=kind)
        make_results(setting, more, [i % 2 for i in range(60)], key_prefix="more")
    assert measure() == before
