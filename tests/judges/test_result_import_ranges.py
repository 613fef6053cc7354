"""Judge results imported from a file (grading/judges/result_import.py): a score outside
[0, the question's full score] is never a score (issue 40, item 3: 1e308 overflowed the
setting's metrics); it is stored as an invalid result, as the paper's scorer counts it, and the
report names the record and the field. Huge numbers of any length are no crash."""
import pytest

from annotation.models import Response
from grading.judges.result_import import import_judge_results
from grading.models import JudgeResult

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("field, text", [
    ("model_score", "1e308"), ("model_score", "-1"), ("score", "10.5"), ("judge_score", "1" + "0" * 400),
    ("model_score", "-" + "9" * 5001), ("pred_score", '"NaN"'), ("model_score", '"1e999"'),
])
def test_a_score_outside_the_range_is_an_invalid_result_named_by_record_and_field(sample_data, field, text):
    response = Response.objects.order_by("id").first()
    assert float(response.question.full_score) == 10
    body = (f'[{{"response_id": {response.pk}, "model_score": 3}},'
            f' {{"response_id": {response.pk}, "{field}": {text}, "model": "other", "gt": {text}}}]')
    report = import_judge_results(body, "results.json")
    assert report.created == 2 and report.invalid_scores == 1
    bad = JudgeResult.objects.get(setting__name="imported: other")
    assert bad.status == JudgeResult.Status.INVALID and bad.score is None
    assert JudgeResult.objects.get(setting__name="imported: unknown").score == 3.0
    assert any(w["message"].startswith(f"record 1: field '{field}' is ") for w in report.warnings), report.warnings


@pytest.mark.parametrize("model_score, gt", [("1" + "0" * 400, "5"), ('"1e999"', "5"), ("3", '"nan"'), ("3", "-" + "9" * 400)])
def test_a_meta_evaluation_label_with_a_score_no_float_holds_is_reported_not_a_crash(model_score, gt):
    """float(10**400) raised OverflowError inside the label import (issue 40, item 3)."""
    from grading.review.services import import_meta_eval_labels

    body = (f'[{{"sample_id": "s1", "primary_category_code": "A", "model_score": {model_score}, "gt": {gt},'
            ' "student_id_mapped": "nobody"}]')
    report = import_meta_eval_labels(body.encode(), "labels.json")
    assert report.matched == 0 and report.unmatched[0]["reason"] == "gt or model_score missing"
