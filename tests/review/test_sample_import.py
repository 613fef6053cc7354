"""The released sample end to end: judge outputs imported with `import_judge_results` fill the
queue with exactly the |Δ| ≥ 2 cases; the released label examples show their categories.

By hand, from fixtures/demo: the four meta-eval input records are the answers of students
0b637a34 (3-08, gold 8 in realmath_eval.json, judge 8), 19a84ba4 (3-08, gold 6, judge 8),
3ffe33a0 (3-08, gold 7, judge 10) and 164abb33 (3-07, gold 8, judge 8). The input file's own
`gt` says 5 and 6 for the first and last (the importer notes the difference; the dataset's gold
counts), so against the gold only 19a84ba4 (Δ +2) and 3ffe33a0 (Δ +3) disagree by two or more.
"""
import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from grading.models import JudgeSetting, MetaEvaluation
from grading.review import selectors as sel
from tests.conftest import DEMO_DIR

pytestmark = pytest.mark.django_db

INPUT = DEMO_DIR / "meta_eval_input_examples.json"
LABELS = DEMO_DIR / "meta_eval_labels_examples.json"


def _run(*args):
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.fixture
def imported(sample_data):
    _run("import_judge_results", str(INPUT))
    return JudgeSetting.objects.get(kind=JudgeSetting.Kind.EXTERNAL)


def test_queue_holds_exactly_the_cases_two_points_apart(imported):
    queue = sel.disagreement_queue(sel.Scope(setting=imported), 2)
    assert sorted((r.response.student_id[:8], r.score, r.gold) for r in queue) == [
        ("19a84ba4", 8.0, 6.0), ("3ffe33a0", 10.0, 7.0)
    ]
    lines = [json.loads(line) for line in _run("disagreements", "--setting", imported.name).splitlines()]
    assert sorted((row["student_id"][:8], row["gold"], row["judge_score"], row["delta"]) for row in lines) == [
        ("19a84ba4", 6.0, 8.0, 2.0), ("3ffe33a0", 7.0, 10.0, 3.0)
    ]
    assert all(row["category"] is None and row["response"] for row in lines)
    assert len(_run("disagreements", "--setting", imported.name, "--threshold", "0").splitlines()) == 4
    assert _run("disagreements", "--setting", imported.name, "--threshold", "3.5") == ""


def test_metrics_command_json(imported):
    report = json.loads(_run("metrics", "--setting", imported.name, "--format", "json", "--bootstrap", "200"))
    # deltas 0, +2, +3, 0 -> MSE 13/4, FR_2 2/4
    assert report["n_counted"] == 4 and report["overall"]["mse"] == pytest.approx(13 / 4)
    assert report["overall"]["fr_2"] == pytest.approx(0.5) and report["overall"]["over"] == 2
    assert {row["label"] for row in report["by_source"]} == {"Human"}
    assert report["gap"]["mse_ratio"] is None  # no synthetic answer was judged
    with pytest.raises(CommandError):
        _run("metrics", "--setting", "no such judge")


def test_label_examples_show_their_categories(imported):
    out = _run("import_meta_eval_labels", str(LABELS))
    assert "4 labels: 2 matched" in out and "2 unmatched" in out
    # sample 1: student 46e81f4a answered 3-07 (gold 9), the label says 3-09 and gt 6
    assert "(sample 1): student 46e81f4a69db has response #" in out and "none with gold 6" in out
    assert "(sample 2): no response by student 6008c53be1894ead933c44a8af53c61a" in out
    labelled = {
        m.result.response.student_id[:8]: (m.category, m.direction, m.judge_score, m.gold_score, m.proposed_by)
        for m in MetaEvaluation.objects.select_related("result__response")
    }
    assert labelled == {"32076523": ("A", "over", 6.0, 3.0, "import"), "07aed84a": ("A", "under", 4.0, 6.0, "import")}
    setting = JudgeSetting.objects.get(name="released meta-eval labels")
    rows = [json.loads(line) for line in _run("disagreements", "--setting", setting.name).splitlines()]
    assert sorted((row["student_id"][:8], row["category"], row["delta"]) for row in rows) == [
        ("07aed84a", "A", -2.0), ("32076523", "A", 3.0)
    ]
    summary = sel.category_summary()
    assert summary["counts"] == [2, 0, 0, 0, 0]
    # importing again changes nothing; with the input file sample 4 is tried by sample_id first
    again = _run("import_meta_eval_labels", str(LABELS), "--input", str(INPUT))
    assert "2 matched (0 new, 0 updated, 2 unchanged)" in again and MetaEvaluation.objects.count() == 2


def test_an_expert_label_is_never_overwritten_by_an_import(imported, reviewer):
    from grading.review import services as review_services

    _run("import_meta_eval_labels", str(LABELS))
    meta = MetaEvaluation.objects.get(result__response__student_id__startswith="32076523")
    review_services.confirm_meta_evaluation(meta.result, user=reviewer, category="B", base_version=meta.version)
    # the importer may still update labels it wrote itself, never one a person confirmed
    out = _run("import_meta_eval_labels", str(LABELS))
    assert "kept the expert's B over the file's A" in out
    assert MetaEvaluation.objects.get(pk=meta.pk).category == "B"


def test_no_create_reports_instead(imported):
    out = _run("import_meta_eval_labels", str(LABELS), "--no-create")
    assert "0 matched" in out and "no judge result with score 6 on response #" in out
    assert not MetaEvaluation.objects.exists()


def test_bad_label_file_imports_nothing(imported, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"detailed_results": 3}')
    with pytest.raises(CommandError, match="Nothing was imported"):
        _run("import_meta_eval_labels", str(bad))
    bad.write_text("not json")
    with pytest.raises(CommandError, match="Nothing was imported"):
        _run("import_meta_eval_labels", str(bad))
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps({"detailed_results": [{"sample_id": 9, "primary_category_code": "Z", "gt": 1, "model_score": 4}]}))
    assert "no usable category ('Z')" in _run("import_meta_eval_labels", str(odd))
