"""Issue 27 in the methods report: strategies, few-shot examples and hold-out counts, and paired differences."""
import pytest

from grading.report import document
from grading.report import selectors as report
from tests.factories import make_question, make_responses, make_results, make_stored_setting, set_gold

from .helpers import untraced_figures

pytestmark = pytest.mark.django_db


def test_report_lists_strategies_examples_and_paired_differences(db):
    question = make_question("Report problem.", location="R-1")
    answers = make_responses(question, 8)
    set_gold(answers, [4] * 8)
    rts = make_stored_setting("rts", kind="rubric")
    few = make_stored_setting("few", kind="rubric", strategy="few-shot", calibration={
        "k": 2, "rule": "student", "seed": 4, "examples": {str(question.pk): [answers[0].pk, answers[1].pk]},
        "holdout": [answers[0].pk, answers[1].pk]})
    make_results(rts, answers, [6] * 8)
    make_results(few, answers[2:], [5] * 6)
    data = report.report_data(bootstrap=100)
    [pair] = data["comparison"]["pairs"]
    assert (pair["n_common"], pair["n_holdout_excluded"]) == (6, 2)  # rts scored them, few never did: left out
    # the baseline is the reason-then-score setting: A; few-shot is B, one point closer to gold
    assert data["comparison"]["baseline"] == "rts v1"
    assert (pair["a"], pair["b"]) == ("rts v1", "few v1") and pair["measures"]["mae"]["difference"] == pytest.approx(-1.0)
    [judge] = [j for j in data["judges"] if j["name"] == "few"]
    assert judge["few_shot"]["n_holdout"] == 2 and judge["few_shot"]["seed"] == 4
    for fmt in ("markdown", "latex"):
        text = document.build(data, fmt)
        assert "Prompt strategies" in text and "Settings compared, paired" in text
        assert f"{answers[0].pk}, {answers[1].pk}" in text and "few-shot" in text
        assert untraced_figures(text, data) == []
