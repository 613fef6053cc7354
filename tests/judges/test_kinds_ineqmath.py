"""IneqMath judges: final answer (CAS first, LLM only when undecided), the four step judges,
the holistic baseline, the CAS-only judge, and the five-judge overall verdict."""
import pytest
from django.urls import reverse

from annotation.models import Response, content_hash
from grading.judges import selectors
from grading.models import JudgeResult, JudgeSetting
from tests.factories import make_question, make_setting
from tests.llm_server import Reply

from .helpers import run_now

pytestmark = pytest.mark.django_db

SOLUTIONS = {
    "exact": "By AM-GM the minimum is reached at a=b=c.\nThe answer is $C = \\frac{1}{2}$",
    "decimal": "Working it out carefully gives one half.\nThe answer is $C = 0.5$",
    "approx": "We get 2 pi roughly.\nThe answer is $C = 6.28$",
    "unreadable": "After a long computation.\nThe answer is $C = \\sum_{k} f(k)$",
}


@pytest.fixture
def bound_question(db):
    return make_question(
        "Find the largest constant $C$ such that ... for all positive $a, b, c$.",
        exam_name="IneqMath test", full_score=1, kind="bound", gold_answer="$$C = \\frac{1}{2}$$", location="",
        external_id="42",
    )


@pytest.fixture
def solutions(bound_question):
    return {
        key: Response.objects.create(
            question=bound_question, source="synthetic", student_id=key, transcript=text, transcript_hash=content_hash(text)
        )
        for key, text in SOLUTIONS.items()
    }


def result_of(setting, response):
    return JudgeResult.objects.get(setting=setting, response=response)


def test_cas_only_judge_makes_no_call(solutions, django_capture_on_commit_callbacks, llm_server):
    setting = make_setting(None, kind=JudgeSetting.Kind.CAS_FINAL_ANSWER, model="")
    run = run_now(django_capture_on_commit_callbacks, setting)
    assert run.status == "done" and llm_server.request_count == 0
    exact, decimal, approx, unreadable = (result_of(setting, solutions[k]) for k in SOLUTIONS)
    assert (exact.score, exact.step_verdicts["method"]) == (1.0, "cas")
    assert (decimal.score, decimal.step_verdicts["method"]) == (1.0, "cas")
    assert approx.score == 0.0 and approx.step_verdicts["cas"]["method"] == "strict-decimal"
    assert (unreadable.status, unreadable.parse_status, unreadable.score) == ("invalid", "undecided", None)


def test_final_answer_judge_asks_the_llm_only_when_the_cas_is_undecided(
    endpoint, solutions, django_capture_on_commit_callbacks, llm_server
):
    llm_server.default = Reply("The sum is not a closed form equal to one half.\nVerdict: False")
    setting = make_setting(endpoint, kind=JudgeSetting.Kind.INEQ_FINAL_ANSWER)
    run_now(django_capture_on_commit_callbacks, setting)
    assert llm_server.request_count == 1
    assert "\\sum_{k} f(k)" in llm_server.requests[0].text and "C = \\frac{1}{2}" in llm_server.requests[0].text
    undecided = result_of(setting, solutions["unreadable"])
    assert (undecided.status, undecided.score, undecided.step_verdicts["method"]) == ("ok", 0.0, "llm")
    assert undecided.prompt_tokens > 0
    assert result_of(setting, solutions["exact"]).score == 1.0
    assert result_of(setting, solutions["approx"]).score == 0.0


@pytest.mark.parametrize(
    "kind, flaw_words",
    [
        (JudgeSetting.Kind.INEQ_TOY_CASE, "particular"),
        (JudgeSetting.Kind.INEQ_LOGICAL_GAP, "without justification"),
        (JudgeSetting.Kind.INEQ_NUMERICAL_APPROXIMATION, "rounded"),
    ],
)
def test_step_judges_read_the_final_verdict(kind, flaw_words, endpoint, solutions, django_capture_on_commit_callbacks, llm_server):
    llm_server.default = Reply("Analysis: fine.\nFlagged step: none\nVerdict: True")
    llm_server.script("a=b=c", Reply("Analysis: only the equal case.\nFlagged step: minimum is reached at a=b=c\nVerdict: False"))
    setting = make_setting(endpoint, kind=kind)
    run_now(django_capture_on_commit_callbacks, setting)
    assert flaw_words in llm_server.requests[0].text
    assert "The answer is" in llm_server.requests[0].text and "\\frac{1}{2}$$" not in llm_server.requests[0].text  # no gold
    flagged = result_of(setting, solutions["exact"])
    assert (flagged.score, flagged.step_verdicts[kind]) == (0.0, False)
    assert flagged.step_verdicts["flagged_step"].startswith("minimum is reached")
    assert result_of(setting, solutions["decimal"]).score == 1.0


def test_numerical_computation_rechecks_equalities_with_the_cas(endpoint, solutions, django_capture_on_commit_callbacks, llm_server):
    wrong = '```json\n{"equalities": [{"step": "3+4=8", "lhs": "3+4", "rhs": "8"}, {"step": "2*3=6", "lhs": "2\\\\cdot 3", "rhs": "6"}]}\n```\nAnalysis: all fine.\nFlagged step: none\nVerdict: True'
    right = '```json\n{"equalities": [{"step": "1/2+1/2=1", "lhs": "\\\\frac{1}{2}+\\\\frac{1}{2}", "rhs": "1"}]}\n```\nVerdict: True'
    llm_server.default = Reply(right)
    llm_server.script("AM-GM", Reply(wrong))
    setting = make_setting(endpoint, kind=JudgeSetting.Kind.INEQ_NUMERICAL_COMPUTATION)
    run_now(django_capture_on_commit_callbacks, setting)
    overruled = result_of(setting, solutions["exact"])
    assert overruled.score == 0.0 and overruled.step_verdicts["decided_by"] == "cas"
    assert overruled.step_verdicts["model_verdict"] is True
    assert [c["equivalent"] for c in overruled.step_verdicts["checked_equalities"]] == [False, True]
    confirmed = result_of(setting, solutions["decimal"])
    assert confirmed.score == 1.0 and confirmed.step_verdicts["decided_by"] == "model"


def test_holistic_sees_the_gold_answer_and_samples_vote(endpoint, solutions, django_capture_on_commit_callbacks, llm_server):
    llm_server.script("AM-GM", Reply("Verdict: True"), Reply("Verdict: False"), Reply("Verdict: True"))
    llm_server.default = Reply("Verdict: False")
    setting = make_setting(endpoint, kind=JudgeSetting.Kind.INEQ_HOLISTIC, samples=3)
    run_now(django_capture_on_commit_callbacks, setting)
    assert "\\frac{1}{2}$$" in llm_server.requests[0].text
    voted = result_of(setting, solutions["exact"])
    assert voted.score == 1.0 and len(voted.samples) == 3 and voted.spread == pytest.approx(1 / 3)
    assert llm_server.request_count == 12


def test_overall_needs_all_five_judges(endpoint, solutions, django_capture_on_commit_callbacks, llm_server):
    llm_server.default = Reply("Verdict: True")
    response = solutions["exact"]
    judge_settings = [make_setting(endpoint, kind=JudgeSetting.Kind.INEQ_FINAL_ANSWER)]
    run_now(django_capture_on_commit_callbacks, judge_settings[0], response_ids=[response.pk])
    assert selectors.ineqmath_overall(selectors.results_for_response(response)) is None
    for kind in ("ineq_toy_case", "ineq_logical_gap", "ineq_numerical_approximation", "ineq_numerical_computation"):
        run_now(django_capture_on_commit_callbacks, make_setting(endpoint, kind=kind), response_ids=[response.pk])
    assert selectors.ineqmath_overall(selectors.results_for_response(response)) is True
    llm_server.default = Reply("Verdict: False")
    run_now(django_capture_on_commit_callbacks, make_setting(endpoint, kind="ineq_logical_gap"), response_ids=[response.pk])
    results = selectors.results_for_response(response)
    assert len(results) == 6
    # the newest result of each kind counts: the second logical-gap judge fails the solution
    assert selectors.ineqmath_overall(results) is False


def _rounded_third(solutions):
    """An answer giving the exact solution's question, its gold now 1/3, rounded (0.333)."""
    question = solutions["exact"].question
    question.gold_answer = "$$C = \\frac{1}{3}$$"
    question.save()
    text = "So the constant is one third.\nThe answer is $C = 0.333$"
    return Response.objects.create(question=question, source="synthetic", student_id="rounded", transcript=text,
                                   transcript_hash=content_hash(text))


def test_cas_judge_tolerance_is_a_setting(solutions, django_capture_on_commit_callbacks, llm_server):
    """6.28 for 1/2 is wrong either way; 0.5 is exact; a rounded decimal of 1/3 passes only when rounding counts."""
    rounded = _rounded_third(solutions)
    strict = make_setting(None, kind=JudgeSetting.Kind.CAS_FINAL_ANSWER, model="")
    assert strict.answer_tolerance == "strict"  # the IneqMath rule stays the default
    lenient = make_setting(None, kind=JudgeSetting.Kind.CAS_FINAL_ANSWER, model="", answer_tolerance="default")
    assert lenient.approximate_answers == "wrong"  # an approximation is not full credit unless the setting says so
    crediting = make_setting(None, kind=JudgeSetting.Kind.CAS_FINAL_ANSWER, model="", answer_tolerance="default",
                             approximate_answers="right")
    for setting in (strict, lenient, crediting):
        run_now(django_capture_on_commit_callbacks, setting)
    assert result_of(strict, rounded).score == 0.0
    assert result_of(strict, rounded).step_verdicts["cas"]["method"] == "strict-decimal"
    for setting, score in ((lenient, 0.0), (crediting, 1.0)):
        result = result_of(setting, rounded)
        assert result.score == score
        assert result.step_verdicts["cas"]["method"] == "decimal-rounding"
        assert result.step_verdicts["cas"]["approximate"] is True
        assert result.step_verdicts["method"] == "cas-approximate"
        assert "Equal up to rounding at the written place" in result.rationale
    assert "approximate" not in result_of(lenient, solutions["exact"]).step_verdicts.get("cas", {})  # 1/2 vs 1/3
    keys = {result_of(setting, rounded).cache_key for setting in (strict, lenient, crediting)}
    assert len(keys) == 3


def test_cas_judge_second_opinion_and_the_runs_disagreement_list(
    reviewer_client, solutions, django_capture_on_commit_callbacks, llm_server
):
    rounded = _rounded_third(solutions)
    setting = make_setting(None, kind=JudgeSetting.Kind.CAS_FINAL_ANSWER, model="", answer_tolerance="default",
                         second_opinion=True, approximate_answers="right")
    run = run_now(django_capture_on_commit_callbacks, setting)
    assert llm_server.request_count == 0
    result = result_of(setting, rounded)
    cas = result.step_verdicts["cas"]
    assert result.score == 1.0  # ours counts
    assert cas["equivalent"] is True and cas["second_opinion"]["equivalent"] is False
    assert cas["agreement"] == "disagree"
    assert "Our verdict / Math-Verify's verdict: equal up to rounding / not equivalent" in result.rationale
    agreeing = result_of(setting, solutions["decimal"]).step_verdicts["cas"]  # 0.5 vs 1/3: both say no
    assert agreeing["agreement"] == "agree"

    rows, counts = selectors.cas_disagreements(run)
    assert counts["disagree"] == 1 and rows[0]["result_id"] == result.pk
    html = reviewer_client.get(reverse("grading:judge_run_detail", args=[run.pk])).content.decode()
    assert 'id="cas-disagreements"' in html
    assert 'id="n-disagree">1<' in html
    assert ">0.333<" in html
