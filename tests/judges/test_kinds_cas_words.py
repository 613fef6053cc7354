"""The CAS final-answer judge on answers written in words (issue 26): no database, no LLM."""
import pytest

from grading.judges.kinds import KINDS, JudgeInput, JudgeSpec


def no_call(messages):  # the CAS kind never calls an LLM
    raise AssertionError("the CAS judge called an LLM")


def evaluate(response, gold, **spec):
    judge_input = JudgeInput(response_id=1, problem="", reference="", response=response, full_score=1.0,
                             question_kind="", gold_answer=gold)
    return KINDS["cas_final_answer"].evaluate(JudgeSpec(kind="cas_final_answer", **spec), judge_input, no_call)


@pytest.mark.parametrize("response, gold, score", [
    ("解：……所以最大值为 2，最小值为 -1。", "最小值为 -1，最大值为 2", 1.0),
    ("解：……所以最大值为 -1，最小值为 2。", "最小值为 -1，最大值为 2", 0.0),
    ("解得 x = 2 或 x = -1（舍去）。", "x = 2", 1.0),
    ("Therefore, the maximum value is 2 and the minimum value is -1.", "max 2, min -1", 1.0),
    ("所以答案为 12个", "12元", 0.0),
])
def test_worded_answers_are_scored_by_what_they_say(response, gold, score):
    outcome = evaluate(response, gold)
    assert (outcome.status, outcome.score) == ("ok", score), outcome.rationale


def test_an_approximation_scores_as_the_setting_says():
    default = evaluate("The answer is 3.14", r"\pi", answer_tolerance="default")
    assert default.score == 0.0 and default.step_verdicts["method"] == "cas-approximate"
    assert "not credited" in default.rationale
    credited = evaluate("The answer is 3.14", r"\pi", answer_tolerance="default", approximate_answers="right")
    assert credited.score == 1.0 and credited.step_verdicts["cas"]["approximate"] is True
    strict = evaluate("The answer is 3.14", r"\pi")  # the IneqMath rule: not the exact value
    assert strict.score == 0.0 and strict.step_verdicts["method"] == "cas"
    fingerprints = {KINDS["cas_final_answer"].fingerprint(JudgeSpec(kind="cas_final_answer", answer_tolerance="default", approximate_answers=value),
                                                         JudgeInput(1, "", "", "The answer is 3.14", 1.0, "", gold_answer=r"\pi"))
                    for value in ("wrong", "right")}
    assert len(fingerprints) == 2  # crediting approximations re-judges
