"""Issue 27: prompt strategies of the rubric judge and few-shot calibration with a leakage-aware split,
against the loopback server (what each prompt holds; examples never judged; the split rule)."""
import re
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError

from annotation.models import Response, content_hash
from grading.judges import calibration, prompts, strategies
from grading.models import JudgeResult, JudgeRunItem, JudgeSetting
from tests.factories import make_question, make_setting
from tests.llm_server import Reply

from .helpers import run_now

pytestmark = pytest.mark.django_db


def _answer(question, student, text, gold):
    return Response.objects.create(question=question, student_id=student, transcript=text,
                                   transcript_hash=content_hash(text), gold_score=None if gold is None else Decimal(gold))


@pytest.fixture
def graded():
    """Question A (exam E1): 8 students with gold 0..7 out of 10, and student s-3 answering twice;
    question B (exam E2): 4 students with gold 2, 4, 6, 8."""
    qa = make_question("Question A: find x.", exam_name="E1", full_score=10, location="A-1")
    qb = make_question("Question B: find y.", exam_name="E2", full_score=10, location="B-1")
    answers = [_answer(qa, f"s-{i}", f"Text of answer A{i} by s-{i}.", i) for i in range(8)]
    answers.append(_answer(qa, "s-3", "Text of answer A3bis by s-3.", 9))
    answers += [_answer(qb, f"t-{i}", f"Text of answer B{i} by t-{i}.", 2 * (i + 1)) for i in range(4)]
    return qa, qb, answers


def _student_of_text():
    return {r.transcript: r.student_id for r in Response.objects.all()}


def _judged_text(request):
    content = request.payload["messages"][-1]["content"]
    return re.search(r"Student answer:\n(.*?)\n\nAnswer in plain text", content, re.S).group(1)


def _example_texts(request):
    content = request.payload["messages"][-1]["content"]
    return re.findall(r"Example \d+ \(expert score: [^)]*\)\n(?:This example answers[\s\S]*?)?Answer:\n(.*?)(?:\n\n|\nThe expert)", content)


def test_reason_then_score_is_todays_prompt_unchanged(endpoint, llm_server, graded, django_capture_on_commit_callbacks):
    setting = make_setting(endpoint, name="rts")
    assert (setting.strategy, setting.prompt_template, setting.system_prompt) == ("reason-then-score", "", "")
    llm_server.default = Reply("Overall Score: 4")
    run_now(django_capture_on_commit_callbacks, setting, response_ids=[graded[2][0].pk])
    content = llm_server.requests[0].payload["messages"][-1]["content"]
    assert content.startswith(prompts.RUBRIC_TEMPLATE.split("\n")[0]) and "Calibration examples" not in content


def test_verification_first_prompt_verifies_every_step_before_scoring(endpoint, llm_server, graded,
                                                                      django_capture_on_commit_callbacks):
    setting = make_setting(endpoint, name="vf", strategy="verification-first")
    assert setting.prompt_template == strategies.VERIFICATION_FIRST_TEMPLATE and setting.strategy_version == 1
    llm_server.default = Reply("1. verified\nOverall Score: 4")
    answer = graded[2][1]
    run_now(django_capture_on_commit_callbacks, setting, response_ids=[answer.pk])
    content = llm_server.requests[0].payload["messages"][-1]["content"]
    assert "For every step, check it against the problem statement and the reference solution" in content
    assert "do not think about the score until step 3" in content and "verified steps only" in content
    assert content.index("Verification.") < content.index("Only now add up the points")
    assert answer.transcript in content and answer.question.reference_solution in content
    assert "Overall Score: X" in content and "out of 10 points" in content
    assert JudgeResult.objects.get().score == 4


def test_follow_through_first_prompt_continues_then_scores_only_what_was_written(
        endpoint, llm_server, graded, django_capture_on_commit_callbacks):
    setting = make_setting(endpoint, name="ftf", strategy="follow-through-first")
    llm_server.default = Reply("Overall Score: 2")
    run_now(django_capture_on_commit_callbacks, setting, response_ids=[graded[2][1].pk])
    content = llm_server.requests[0].payload["messages"][-1]["content"]
    assert "continue the student's own reasoning" in content and "Score only what the student wrote" in content
    assert "The continuation earns nothing" in content
    assert content.index("Understand the intent first") < content.index("Score only what the student wrote")


def test_strategy_is_refused_for_other_kinds(endpoint):
    from grading.judges.forms import JudgeSettingForm

    form = JudgeSettingForm(data={"name": "x", "kind": "ineq_holistic", "strategy": "verification-first",
                                  "endpoint": endpoint.pk, "model": "m", "samples": 1, "aggregate": "mean",
                                  "parse_retries": 0, "price_input_per_1k": 0, "price_output_per_1k": 0})
    assert not form.is_valid() and "strategy" in form.errors


def test_few_shot_examples_one_strong_one_weak_recorded_and_never_judged(
        endpoint, llm_server, graded, django_capture_on_commit_callbacks):
    qa, qb, answers = graded
    setting = make_setting(endpoint, name="fs", strategy="few-shot", few_shot_seed=3)
    recorded = setting.calibration
    assert (recorded["k"], recorded["rule"], recorded["seed"]) == (2, "student", 3)
    ids_a = recorded["examples"][str(qa.pk)]
    golds = [float(Response.objects.get(pk=i).gold_score) for i in ids_a]
    assert len(ids_a) == 2 and golds[0] >= 6 and golds[1] <= 1  # one strong, one weak by gold percentile
    assert sorted(recorded["holdout"]) == sorted(ids_a + recorded["examples"][str(qb.pk)])
    # s-3 answered question A twice: neither answer may be an example for it (the other would be judged beside it)
    assert not {r.pk for r in answers if r.student_id == "s-3"} & set(ids_a)
    # the same data, rule and seed choose the same examples (reproducible); another seed may not
    assert calibration.choose_examples(k=2, rule="student", seed=3)["examples"] == recorded["examples"]

    llm_server.default = Reply("Overall Score: 5")
    run = run_now(django_capture_on_commit_callbacks, setting)
    holdout = set(recorded["holdout"])
    judged = set(JudgeRunItem.objects.filter(run=run).values_list("response_id", flat=True))
    assert judged == {r.pk for r in answers} - holdout and len(judged) == len(answers) - 4
    assert not JudgeResult.objects.filter(config=setting, response_id__in=holdout).exists()
    texts = {r.pk: r.transcript for r in answers}
    students = _student_of_text()
    assert llm_server.request_count == len(judged)
    for request in llm_server.requests:
        judged_text = _judged_text(request)
        assert judged_text not in {texts[i] for i in holdout}  # an example is never the answer judged
        shown = _example_texts(request)
        assert len(shown) == 2 and all(students[t] != students[judged_text] for t in shown)
        assert "expert score: " in request.payload["messages"][-1]["content"]


def test_split_rule_answer_allows_the_same_student_and_student_rule_drops_a_late_duplicate(
        endpoint, llm_server, graded, django_capture_on_commit_callbacks):
    qa, _, answers = graded
    loose = calibration.choose_examples(k=8, rule="answer", seed=0)
    assert {r.pk for r in answers if r.student_id == "s-3"} & set(loose["examples"][str(qa.pk)])
    setting = make_setting(endpoint, name="fs-late", strategy="few-shot")
    example = Response.objects.get(pk=setting.calibration["examples"][str(qa.pk)][0])
    late = _answer(qa, example.student_id, "A late second answer by the example's student.", None)
    llm_server.default = Reply("Overall Score: 1")
    run_now(django_capture_on_commit_callbacks, setting, response_ids=[late.pk])
    shown = _example_texts(llm_server.requests[0])
    assert example.transcript not in shown and len(shown) == 1  # the rule is checked again per prompt


def test_exam_rule_takes_examples_from_other_exams_with_their_problem(endpoint, llm_server, graded,
                                                                     django_capture_on_commit_callbacks):
    qa, qb, answers = graded
    setting = make_setting(endpoint, name="fs-exam", strategy="few-shot", split_rule="exam")
    for question, other in ((qa, qb), (qb, qa)):
        ids = setting.calibration["examples"][str(question.pk)]
        assert ids and set(Response.objects.filter(pk__in=ids).values_list("question_id", flat=True)) == {other.pk}
    llm_server.default = Reply("Overall Score: 1")
    judged = next(r for r in answers if r.question_id == qa.pk and r.pk not in setting.calibration["holdout"])
    run_now(django_capture_on_commit_callbacks, setting, response_ids=[judged.pk])
    content = llm_server.requests[0].payload["messages"][-1]["content"]
    assert "This example answers a different problem:\n" + qb.statement in content


def test_few_shot_needs_gold_scores_and_the_examples_placeholder(endpoint):
    question = make_question("No gold here.", full_score=5)
    _answer(question, "u-1", "No gold answer.", None)
    with pytest.raises(ValidationError, match="gold"):
        make_setting(endpoint, name="fs-none", strategy="few-shot")
    _answer(question, "u-2", "Gold answer.", 3)
    with pytest.raises(ValidationError, match="examples"):
        make_setting(endpoint, name="fs-bad", strategy="few-shot", prompt_template="Grade {{ response }}")


def test_comments_option_shows_the_experts_step_comments(endpoint, llm_server, graded, django_capture_on_commit_callbacks):
    from annotation.models import Label, StepLabel

    setting = make_setting(endpoint, name="fs-c", strategy="few-shot", few_shot_comments=True)
    qa = graded[0]
    example_id = setting.calibration["examples"][str(qa.pk)][0]
    label = Label.objects.create(response_id=example_id, total=5, submitted=True)
    StepLabel.objects.create(label=label, quote="x = 2", verdict="calculation_error", comment="sign lost here")
    calibration._MEMO.clear()
    judged = next(r for r in graded[2] if r.question_id == qa.pk and r.pk not in setting.calibration["holdout"])
    llm_server.default = Reply("Overall Score: 1")
    run_now(django_capture_on_commit_callbacks, setting, response_ids=[judged.pk])
    content = llm_server.requests[0].payload["messages"][-1]["content"]
    assert "The expert's step comments:\n- \"x = 2\": calculation error; sign lost here" in content


def test_editing_a_used_few_shot_setting_keeps_its_examples_unless_the_calibration_changes(
        endpoint, llm_server, graded, django_capture_on_commit_callbacks):
    from grading.judges import services

    setting = make_setting(endpoint, name="fs-v", strategy="few-shot")
    llm_server.default = Reply("Overall Score: 1")
    run_now(django_capture_on_commit_callbacks, setting, response_ids=[graded[2][4].pk])
    v2 = services.update_judge_setting(setting, temperature=0.5)
    assert v2.version == 2 and v2.calibration["examples"] == setting.calibration["examples"]
    v3 = services.update_judge_setting(v2, few_shot_k=3)
    assert v3.version == 2 or v3.calibration["k"] == 3
    assert JudgeSetting.objects.get(pk=setting.pk).calibration == setting.calibration


def test_settings_form_creates_a_few_shot_setting_and_its_page_shows_the_examples(reviewer_client, endpoint, graded):
    data = {"name": "fs-page", "kind": "rubric", "strategy": "few-shot", "few_shot_k": 2, "split_rule": "student",
            "few_shot_seed": 5, "endpoint": endpoint.pk, "model": "judge-model", "samples": 1, "aggregate": "mean",
            "parse_retries": 0, "price_input_per_1k": 0, "price_output_per_1k": 0, "temperature": 0, "max_tokens": 64}
    response = reviewer_client.post("/grading/judges/settings/new/", data, follow=True)
    assert response.status_code == 200
    setting = JudgeSetting.objects.get(name="fs-page")
    assert setting.strategy == "few-shot" and setting.calibration["seed"] == 5 and "{{ examples }}" in setting.prompt_template
    page = response.content.decode()
    assert 'id="few-shot-table"' in page and "split rule: Not the same answer, not the same student" in page
    for pk in setting.calibration["holdout"]:
        assert f"#{pk}</a>" in page
    assert "4 answers: never judged by this setting" in page
    form_page = reviewer_client.get("/grading/judges/settings/new/").content.decode()
    assert 'name="strategy"' in form_page and "rubric:verification-first" in form_page


def test_judge_setting_command_adds_strategies_and_few_shot(llm_server, graded):
    import json
    from io import StringIO

    from django.core.management import CommandError, call_command

    def add(name, *extra):
        out = StringIO()
        call_command("judge_setting", "add", "--name", name, "--kind", "rubric", "--base-url", llm_server.url,
                     "--model", "judge-model", "--api-key-env", "", "--format", "json", *extra, stdout=out)
        return json.loads(out.getvalue())

    assert add("cli-vf", "--strategy", "verification-first")["strategy"] == "verification-first"
    row = add("cli-fs", "--strategy", "few-shot", "--examples", "1", "--split-rule", "exam", "--seed", "7")
    assert row["few_shot"]["k"] == 1 and row["few_shot"]["split_rule"] == "exam" and row["few_shot"]["seed"] == 7
    assert row["few_shot"]["n_holdout"] == 2
    with pytest.raises(CommandError, match="invalid choice"):
        add("cli-bad", "--strategy", "guess-first")


def test_api_creates_a_few_shot_setting_and_shows_its_calibration(endpoint, graded):
    from rest_framework.test import APIClient

    from tests.conftest import make_user

    client = APIClient()
    client.force_authenticate(make_user("api-reviewer", "reviewer"))
    answer = client.post("/api/judge-configs/", {
        "name": "api-fs", "kind": "rubric", "endpoint": endpoint.pk, "model": "m", "strategy": "few-shot",
        "few_shot_seed": 2, "calibration": {"holdout": [1]}}, format="json")
    assert answer.status_code == 201, answer.content
    body = answer.json()
    assert body["strategy"] == "few-shot" and body["calibration"]["seed"] == 2 and len(body["calibration"]["holdout"]) == 4
