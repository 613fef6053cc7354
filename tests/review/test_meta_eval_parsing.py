import json

import pytest

from grading.review.meta_eval import CATEGORIES, direction, parse_meta_eval_output

GOOD = {
    "model_score": 8, "gt_score": 5, "score_diff": 3, "analysis": "The judge ignored the missing part (3).",
    "primary_category_code": "B", "primary_category_name": "Process Norms & Completeness",
    "ood_details": {"is_ood": False, "justification": "", "suggested_new_category": None},
}


def test_bare_json():
    out = parse_meta_eval_output(json.dumps(GOOD))
    assert out.category == "B" and out.analysis.startswith("The judge") and not out.error


def test_fenced_json_with_prose_and_braces_in_strings():
    text = "Here is my analysis:\n```json\n" + json.dumps({**GOOD, "analysis": "uses {x} and }"}) + "\n```\nDone."
    out = parse_meta_eval_output(text)
    assert out.category == "B" and out.analysis == "uses {x} and }"


def test_unfenced_json_with_escaped_quotes_and_braces_in_strings():
    analysis = 'the student wrote "x}" and \\"{"'
    out = parse_meta_eval_output("Verdict: " + json.dumps({**GOOD, "analysis": analysis}) + " (end)")
    assert out.category == "B" and out.analysis == analysis and not out.error


def test_unfenced_json_inside_prose():
    out = parse_meta_eval_output("Sure. " + json.dumps({**GOOD, "primary_category_code": "c"}) + " Thanks")
    assert out.category == "C"


@pytest.mark.parametrize(
    "text, error",
    [
        ("", "no JSON"),
        ("I refuse.", "no JSON"),
        ("{not json}", "invalid JSON"),
        (json.dumps({**GOOD, "primary_category_code": "Z"}), "unknown category"),
        ("[1, 2]", "no JSON"),
    ],
)
def test_garbage_is_reported_not_raised(text, error):
    out = parse_meta_eval_output(text)
    assert out.category is None and error in out.error


def test_direction():
    assert direction(8, 5) == "over" and direction(2, 6) == "under" and direction(3, 3) == ""


def test_five_categories():
    assert list(CATEGORIES) == ["A", "B", "C", "D", "E"]
