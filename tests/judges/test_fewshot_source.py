"""Issue 34: where a few-shot setting's examples come from. The paper shows real students' answers (its 28
hold-outs) beside every judged answer, human or synthetic: that is the default; "same" limits them to the
judged answer's own source, "any" takes every gold-scored answer (settings saved before)."""
import re
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError

from annotation.models import Response, content_hash
from grading.judges import calibration
from grading.models import JudgeSetting
from tests.factories import make_question, make_setting
from tests.llm_server import Reply

from .helpers import run_now

pytestmark = pytest.mark.django_db


def _answer(question, student, text, gold, source):
    return Response.objects.create(question=question, student_id=student, transcript=text, source=source,
                                   transcript_hash=content_hash(text), gold_score=Decimal(gold))


@pytest.fixture
def mixed():
    """One question: 6 human answers (gold 0..5 of 10) and 6 synthetic ones (gold 4..9): the synthetic
    answers hold the top of the range, so a source-blind choice takes its strong example from them."""
    question = make_question("Question M: find z.", exam_name="E1", full_score=10, location="M-1")
    humans = [_answer(question, f"h-{i}", f"Human answer {i}.", i, "human") for i in range(6)]
    synthetic = [_answer(question, f"model_t_0.7_{i}", f"Synthetic answer {i}.", i + 4, "synthetic") for i in range(6)]
    return question, humans, synthetic


def _sources(ids):
    return set(Response.objects.filter(pk__in=ids).values_list("source", flat=True))


def test_default_takes_real_students_answers_for_every_judged_answer(endpoint, llm_server, mixed,
                                                                      django_capture_on_commit_callbacks):
    question, humans, synthetic = mixed
    setting = make_setting(endpoint, name="fs", strategy="few-shot")
    assert setting.few_shot_source == "human" and setting.calibration["source"] == "human"
    ids = setting.calibration["examples"][str(question.pk)]
    assert len(ids) == 2 and _sources(ids) == {"human"}
    llm_server.default = Reply("Overall Score: 5")
    run_now(django_capture_on_commit_callbacks, setting)
    human_texts = {r.transcript for r in humans}
    shown_beside_synthetic = 0
    for request in llm_server.requests:
        content = request.payload["messages"][-1]["content"]
        shown = re.findall(r"Example \d+ \(expert score: [^)]*\)\nAnswer:\n(.*?)\n", content)
        assert len(shown) == 2 and set(shown) <= human_texts
        shown_beside_synthetic += "Synthetic answer" in content.split("Student answer:")[-1]
    assert shown_beside_synthetic == 6  # the synthetic answers are calibrated on human examples, as in the paper


def test_same_source_shows_human_examples_to_human_answers_and_synthetic_to_synthetic(endpoint, mixed):
    question, humans, synthetic = mixed
    setting = make_setting(endpoint, name="fs-same", strategy="few-shot", few_shot_source="same")
    by_source = setting.calibration["examples_by_source"]
    assert _sources(by_source["human"][str(question.pk)]) == {"human"}
    assert _sources(by_source["synthetic"][str(question.pk)]) == {"synthetic"}
    assert len(setting.calibration["holdout"]) == 4
    judged_human = next(r for r in humans if r.pk not in setting.calibration["holdout"])
    judged_synthetic = next(r for r in synthetic if r.pk not in setting.calibration["holdout"])
    assert _sources(calibration.shown_examples(setting, judged_human)) == {"human"}
    assert _sources(calibration.shown_examples(setting, judged_synthetic)) == {"synthetic"}
    # its human examples are the default's: the same seed draws the same human answers
    assert by_source["human"] == calibration.choose_examples(seed=0)["examples"]


def test_any_source_is_the_choice_before_issue_34(endpoint, mixed):
    question, _, _ = mixed
    setting = make_setting(endpoint, name="fs-any", strategy="few-shot", few_shot_source="any")
    ids = setting.calibration["examples"][str(question.pk)]
    strong = Response.objects.get(pk=ids[0])
    assert strong.source == "synthetic" and strong.gold_score >= 8  # the top of the range is synthetic here
    # a calibration recorded before the option existed reads as "any"
    assert calibration.source_of({"k": 2, "examples": {}}) == "any"


def test_no_human_gold_refuses_the_default_and_says_how_to_go_on(endpoint):
    question = make_question("Question S: only models answered.", exam_name="E1", full_score=10, location="S-1")
    for i in range(4):
        _answer(question, f"model_t_0_{i}", f"Only synthetic {i}.", i, "synthetic")
    with pytest.raises(ValidationError, match="No real student's answer with a gold score"):
        make_setting(endpoint, name="fs-none", strategy="few-shot")
    assert make_setting(endpoint, name="fs-none", strategy="few-shot", few_shot_source="same").calibration["examples"]


def test_changing_the_source_of_a_used_setting_chooses_again(endpoint, mixed):
    from grading.judges import services

    question, _, _ = mixed
    setting = make_setting(endpoint, name="fs-edit", strategy="few-shot")
    edited = services.update_judge_setting(setting, few_shot_source="any")
    assert edited.calibration["source"] == "any"
    assert JudgeSetting.ExampleSource.HUMAN.label.endswith("(the paper's design)")


def test_the_api_takes_and_shows_the_examples_source(endpoint, mixed):
    from rest_framework.test import APIClient

    from tests.conftest import make_user

    client = APIClient()
    client.force_authenticate(make_user("api-reviewer", "reviewer"))
    answer = client.post("/api/judge-settings/", {
        "name": "api-fs-same", "kind": "rubric", "endpoint": endpoint.pk, "model": "m", "strategy": "few-shot",
        "few_shot_source": "same"}, format="json")
    assert answer.status_code == 201, answer.content
    body = answer.json()
    assert body["few_shot_source"] == "same" and set(body["calibration"]["examples_by_source"]) == {"human", "synthetic"}
    refused = client.post("/api/judge-settings/", {"name": "api-fs-bad", "kind": "rubric", "endpoint": endpoint.pk,
                                                    "model": "m", "strategy": "few-shot", "few_shot_source": "robots"},
                          format="json")
    assert refused.status_code == 400 and "few_shot_source" in refused.json()
