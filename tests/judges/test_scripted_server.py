"""The scripted server (tests/llm_server.py, default answers from llm.scripted)
answers every prompt the app sends in the form the app expects: each judge kind, the
meta-evaluator, synthetic generation and the vision OCR engine, through the real services and
the real openai client, with no scripting in the test."""
import json
from decimal import Decimal

import pytest
from django.core.management import call_command

from annotation.models import Question, Response
from equivalence import extract_answer
from grading.generation import services as generation
from grading.judges.kinds import INEQMATH_STEP_KINDS, JudgeSpec
from grading.models import JudgeResult, JudgeSetting, MetaEvalProposal
from grading.review import selectors as review_selectors
from grading.review import services as review_services
from llm import scripted
from tests.conftest import INEQMATH_SAMPLE
from tests.factories import make_setting

from .helpers import run_now

pytestmark = pytest.mark.django_db


@pytest.fixture
def ineqmath_answers(endpoint, django_capture_on_commit_callbacks):
    """The IneqMath sample's 12 problems, each with one synthetic answer written by the scripted model."""
    call_command("import_ineqmath", str(INEQMATH_SAMPLE))
    questions = Question.objects.filter(kind__in=["bound", "relation"])
    with django_capture_on_commit_callbacks(execute=True):
        run = generation.start_generation_run(endpoint=endpoint, models=["scripted"], temperatures=[0], questions=questions)
    run.refresh_from_db()
    assert run.status == "done" and run.items.filter(state="ok").count() == 12
    return Response.objects.filter(question__in=questions, source="synthetic")


def test_synthetic_answers_end_as_the_prompt_asks(ineqmath_answers):
    for response in ineqmath_answers.select_related("question"):
        kind = response.question.kind
        found = extract_answer(response.transcript, kind=kind)
        assert found, (kind, response.transcript)
        if kind == "relation":
            assert found in "ABCDEF"  # an option letter of the prompt


@pytest.mark.parametrize("kind", [*INEQMATH_STEP_KINDS, "ineq_holistic", "ineq_final_answer"])
def test_every_ineqmath_judge_reads_the_scripted_answers(kind, endpoint, ineqmath_answers, llm_server,
                                                         django_capture_on_commit_callbacks):
    llm_server.reset()
    setting = make_setting(endpoint, kind=kind)
    run = run_now(django_capture_on_commit_callbacks, setting)
    results = JudgeResult.objects.filter(run=run)
    assert run.status == "done" and results.count() == 12
    assert set(results.values_list("status", flat=True)) == {"ok"}, list(results.values("parse_status", "raw_output"))
    assert set(results.values_list("score", flat=True)) <= {0.0, 1.0}
    if kind in INEQMATH_STEP_KINDS:
        assert llm_server.request_count == 12
        assert all(kind in r.step_verdicts for r in results)
    if kind == "ineq_numerical_computation":  # the listed equalities came back and the CAS checked them
        for result in results:
            checks = result.step_verdicts["checked_equalities"]
            assert checks  # every scripted answer states sums and products
            wrong = [c for c in checks if c["equivalent"] is False]
            assert result.score == (0.0 if wrong else 1.0)
            assert all(c["lhs"] == "3*4" for c in wrong)


def test_final_answer_llm_fallback_reads_the_scripted_verdict():
    """When the CAS cannot decide, the judge asks the LLM; the scripted model answers True/False."""
    from grading.judges.kinds import JudgeInput, get_kind
    from grading.judges.parsing import parse_verdict

    kind = get_kind("ineq_final_answer")
    spec = JudgeSpec(kind="ineq_final_answer", model="m")
    for answer, gold, expected in (("$C = 2$", "$$C = 2$$", True), ("$C = 5$", "$$C = 2$$", False)):
        judge_input = JudgeInput(response_id=1, problem="Find the largest C.", reference="", full_score=1,
                                 response=f"Work.\nThe answer is {answer}", question_kind="bound", gold_answer=gold)
        messages = kind.messages(spec, judge_input)
        assert scripted.prompt_kind(messages) == scripted.FINAL_ANSWER
        assert parse_verdict(scripted.answer(messages)).value is expected


def test_rubric_and_replay_runs_score_every_answer(endpoint, sample_data, django_capture_on_commit_callbacks):
    for kind in (JudgeSetting.Kind.RUBRIC, JudgeSetting.Kind.REPLAY):
        setting = make_setting(endpoint, kind=kind)
        run = run_now(django_capture_on_commit_callbacks, setting, params={"source": "human"})
        results = list(JudgeResult.objects.filter(run=run).select_related("response__question"))
        assert len(results) == 32 and {r.status for r in results} == {"ok"}, kind
        assert all(0 <= r.score <= float(r.response.question.full_score) for r in results)
        assert len({r.score for r in results}) > 3  # not one constant score


def test_meta_evaluator_gets_json_it_can_read(endpoint, sample_data, django_capture_on_commit_callbacks):
    """The issue's '47 of 47: no JSON object in the output': every case now gets a category."""
    setting = make_setting(endpoint, kind=JudgeSetting.Kind.RUBRIC)
    run_now(django_capture_on_commit_callbacks, setting)
    scope = review_selectors.Scope(setting=setting)
    cases = review_selectors.disagreement_queue(scope, 2).count()
    assert cases > 0
    with django_capture_on_commit_callbacks(execute=True):
        meta_run = review_services.start_meta_eval_run(endpoint=endpoint, model="meta", scope=scope, threshold=2)
    proposals = MetaEvalProposal.objects.filter(run=meta_run)
    assert proposals.count() == cases
    assert set(proposals.values_list("status", flat=True)) == {"ok"}, list(proposals.values("error"))[:3]
    for proposal in proposals.select_related("meta_evaluation__result__response"):
        result = proposal.meta_evaluation.result
        gold = float(result.response.gold_score)
        assert proposal.data["gt_score"] == gold and proposal.data["model_score"] == result.score
        assert proposal.category in ("ABC" if result.score > gold else "DA")


def test_vision_ocr_engine_gets_a_transcription(llm_server, settings, monkeypatch):
    from ocr import synthetic
    from ocr.engines import get_engine

    settings.OCR_VISION_BASE_URL = llm_server.url
    settings.OCR_VISION_MODEL = "scripted-vision"
    settings.OCR_VISION_API_KEY_ENV = "REALMATH_LLM_KEY_OCR_TEST"
    monkeypatch.setenv("REALMATH_LLM_KEY_OCR_TEST", "k")
    result = get_engine("vision").recognise(synthetic.render_page(["x = 2"], width=300))
    assert "$x = 2$" in result.text
    assert scripted.prompt_kind(llm_server.requests[-1].payload["messages"]) == scripted.TRANSCRIPTION


@pytest.mark.parametrize("messages, kind", [
    ([{"role": "user", "content": "Say hello."}], scripted.OTHER),
    ([{"role": "user", "content": "Give a score out of 7 points.\nOverall Score: X"}], scripted.RUBRIC),
    ([{"role": "user", "content": json.dumps({"primary_category_code": "A"})}], scripted.META_EVALUATION),
])
def test_prompt_kinds_of_other_texts(messages, kind):
    assert scripted.prompt_kind(messages) == kind
    assert scripted.answer(messages) == scripted.answer(messages)  # deterministic


def test_rubric_score_stays_in_range():
    from grading.judges.parsing import parse_score

    for n in range(30):
        text = f"Grade it.\nStudent answer:\n{'x' * n * 400}\n\nAnswer in plain text: Overall Score: X out of 4 points"
        parsed = parse_score(scripted.answer([{"role": "user", "content": text}]), full_score=Decimal(4))
        assert parsed.status == "ok" and 0 <= parsed.score <= 4
