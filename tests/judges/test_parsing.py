"""Scores and verdicts read from real-looking model output."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grading.judges.parsing import parse_json_object, parse_score, parse_verdict


@pytest.mark.parametrize(
    "text, score",
    [
        ("Overall Score: 8\n\nBrief Explanation: ...", 8),
        ("**Overall Score:** 7.5", 7.5),
        ("**Overall Score: [6]**", 6),
        ("Overall score is 9/13.", 9),
        ("OVERALL SCORE = (4) points", 4),
        ("Overall Score (out of 13): 11", 11),
        ("### Overall Score\n5", 5),
        ("Overall Score：3", 3),
        ("Reasoning...\nFinal Score: 2 / 10", 2),
        ("Total score: **10**", 10),
        ("The grade is <score>4</score>.", 4),
        ('```json\n{"score": 3, "reason": "ok"}\n```', 3),
        ('{"overall_score": "6/10"}', 6),
        ("Some analysis.\nScore: 7", 7),
        ("Overall Score: [X] where X is the score\n...\nOverall Score: 5", 5),
        ("<think>Maybe Overall Score: 9? no.</think>\nOverall Score: 3", 3),
    ],
)
def test_scores_in_the_forms_models_write(text, score):
    parsed = parse_score(text, full_score=13)
    assert parsed.status == "ok", parsed
    assert parsed.score == score


def test_first_overall_score_wins_and_bounds_are_checked():
    assert parse_score("Overall Score: 4\n...\nOverall Score: 6", full_score=10).score == 4
    high = parse_score("Overall Score: 14", full_score=13)
    assert (high.status, high.score, high.raw_value) == ("out_of_range", None, 14)
    assert parse_score("Overall Score: -2", full_score=13).status == "out_of_range"
    assert parse_score("Overall Score: 13", full_score=13).score == 13


@pytest.mark.parametrize("text", ["", "I cannot grade this.", "The student did well.", "<think>Overall Score: 5", "Score of 5 maybe"])
def test_unparseable(text):
    assert parse_score(text, full_score=10).status == "unparseable"


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=400))
def test_parse_score_never_raises(text):
    parsed = parse_score(text, full_score=10)
    assert parsed.status in {"ok", "unparseable", "out_of_range"}
    if parsed.status == "ok":
        assert 0 <= parsed.score <= 10


@pytest.mark.parametrize(
    "text, value",
    [
        ("Analysis: ...\nFlagged step: none\nVerdict: True", True),
        ("Analysis: ...\nFlagged step: 'setting a=b=c gives'\nVerdict: False", False),
        ("**Final verdict:** [False]", False),
        ("...\nTherefore the answer is \\boxed{True}", True),
        ("Step review done.\n\nFalse", False),
        ("Verdict: False\n\nOn reflection...\nVerdict: True", True),
        ('{"verdict": false, "flagged_step": "x"}', False),
        ("<think>Verdict: True</think>\nVerdict: False", False),
        ("Conclusion: Yes, the answers are equivalent.", True),
    ],
)
def test_verdicts(text, value):
    parsed = parse_verdict(text)
    assert parsed.status == "ok" and parsed.value is value


def test_verdict_flagged_step_and_unparseable():
    assert parse_verdict("Flagged step: a = b = 1 so the bound is 3\nVerdict: False").flagged_step.startswith("a = b")
    assert parse_verdict("The solution seems fine overall.").status == "unparseable"


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=400))
def test_parse_verdict_never_raises(text):
    assert parse_verdict(text).status in {"ok", "unparseable"}


def test_json_object_finding():
    assert parse_json_object('noise {"a": {"b": "}"}} more') == {"a": {"b": "}"}}
    assert parse_json_object("```json\n[1, 2]\n```") == [1, 2]
    assert parse_json_object("{broken") is None
