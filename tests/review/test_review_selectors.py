"""Metrics and the disagreement queue from database rows, against figures worked out by hand."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from grading.models import JudgeResult, JudgeRun, JudgeRunItem
from grading.review import selectors as sel
from tests.factories import make_question, make_responses, make_results, make_stored_setting, set_gold

pytestmark = pytest.mark.django_db


@pytest.fixture
def fixture_scores():
    """Human (judge, gold): (8, 5) (3, 5) (5, 5); synthetic: (6, 5) (5, 5) (4, 4); plus three left out."""
    q1 = make_question("Problem one", location="3-07", level="low")
    q2 = make_question("Problem two", location="3-08", level="high", exam_name="Batch 2")
    human = make_responses(q1, 2, source="human") + make_responses(q2, 1, source="human", start=10)
    synthetic = make_responses(q1, 2, source="synthetic", start=20) + make_responses(q2, 1, source="synthetic", start=30)
    extra = make_responses(q2, 3, source="human", start=40)
    set_gold(human + synthetic + extra, [5, 5, 5, 5, 5, 4, 5, 5, None])
    setting = make_stored_setting()
    results = make_results(setting, human + synthetic, [8, 3, 5, 6, 5, 4])
    make_results(setting, extra[:1], [None], status=JudgeResult.Status.INVALID)
    make_results(setting, extra[1:2], [None], status=JudgeResult.Status.ERROR)
    make_results(setting, extra[2:], [7])  # no gold
    return {"config": setting, "results": results, "human": human, "synthetic": synthetic, "q1": q1, "q2": q2}


def test_metrics_by_hand(fixture_scores):
    report = sel.metrics_report(sel.Scope(setting=fixture_scores["config"]), bootstrap=200)
    assert report["n_results"] == 9 and report["n_counted"] == 6
    assert {row["reason"]: row["n"] for row in report["left_out"]} == {"invalid": 1, "error": 1, "no_gold": 1}
    overall = report["overall"]
    # deltas 3, -2, 0, 1, 0, 0
    assert overall["mse"] == pytest.approx(14 / 6)
    assert overall["mae"] == pytest.approx(6 / 6)
    assert overall["mean_signed_error"] == pytest.approx(2 / 6)
    assert overall["fr_1"] == pytest.approx(3 / 6) and overall["fr_2"] == pytest.approx(2 / 6)
    assert overall["fr_3"] == pytest.approx(1 / 6) and overall["fr_4"] == 0
    # answers of two questions: no interval (core.uncertainty.MIN_CLUSTERS), the reason given
    assert overall["mse_ci"] == [None, None] and overall["uncertainty"]["note"] == "not estimable: 2 questions"
    # 0 of 6 at the boundary is not estimable either below 5 questions (no Wilson on dependent answers)
    assert overall["fr_4_ci"] == [None, None] and overall["uncertainty"]["wilson"] == []
    by_source = {row["key"]: row for row in report["by_source"]}
    assert by_source["human"]["mse"] == pytest.approx(13 / 3) and by_source["human"]["fr_2"] == pytest.approx(2 / 3)
    assert by_source["synthetic"]["mse"] == pytest.approx(1 / 3) and by_source["synthetic"]["fr_2"] == 0
    assert report["gap"]["mse_ratio"] == pytest.approx(13.0)
    assert report["gap"]["fr2_human"] == pytest.approx(2 / 3) and report["gap"]["fr2_synthetic"] == 0
    by_question = {row["label"]: row for row in report["by_question"]}
    q1 = fixture_scores["q1"]
    # question one: (8,5) (3,5) (6,5) (5,5) -> squares 9 4 1 0
    assert by_question[f"3-07 · question #{q1.pk}"]["mse"] == pytest.approx(14 / 4) and by_question[f"3-07 · question #{q1.pk}"]["n"] == 4
    assert {row["label"] for row in report["by_exam"]} == {"Test exam", "Batch 2"}
    assert {row["key"]: row["n"] for row in report["by_level"]} == {"low": 4, "high": 2}
    assert report["plots"]["fr_curve"]["human"] == pytest.approx([2 / 3, 2 / 3, 1 / 3, 0, 0])
    assert report["plots"]["delta_histogram"]["human"] == {-2.0: 1, 0.0: 1, 3.0: 1}
    assert sorted(report["plots"]["scatter"]["synthetic"]) == [[4.0, 4.0, 1], [5.0, 5.0, 1], [5.0, 6.0, 1]]


def test_csv_table_has_a_row_per_group(fixture_scores):
    report = sel.metrics_report(sel.Scope(setting=fixture_scores["config"]), bootstrap=50)
    table = sel.metrics_table(report)
    header = table[0]
    groups = [row[header.index("group")] for row in table[1:]]
    assert groups == ["all", "source", "source", "level", "level", "exam", "exam", "question", "question"]
    assert table[1][header.index("mse")] == pytest.approx(14 / 6)
    assert "fr_2_ci_low" in header and "mse_ci_high" in header


def test_newest_result_per_response_counts(fixture_scores):
    setting, human = fixture_scores["config"], fixture_scores["human"]
    make_results(setting, human[:1], [5], key_prefix="changed-text")  # the transcript changed; judged again
    report = sel.metrics_report(sel.Scope(setting=setting), bootstrap=0)
    assert report["n_counted"] == 6
    assert report["overall"]["mse"] == pytest.approx(5 / 6)  # the 3-point miss is gone


def test_run_scope_uses_the_runs_items(fixture_scores):
    setting, results = fixture_scores["config"], fixture_scores["results"]
    run = JudgeRun.objects.create(setting=setting, n_items=2)
    JudgeRunItem.objects.bulk_create(
        [JudgeRunItem(run=run, response_id=r.response_id, result=r, state="ok") for r in results[:2]]
    )
    scope = sel.resolve_scope({"run": str(run.pk)})
    report = sel.metrics_report(scope, bootstrap=0)
    assert report["n_counted"] == 2 and report["overall"]["mse"] == pytest.approx((9 + 4) / 2)
    assert report["scope"]["run"] == run.pk


@pytest.mark.parametrize("threshold, expected", [(2, [8, 3]), (3, [8]), (1, [8, 3, 6]), (3.5, [])])
def test_queue_holds_exactly_the_cases_at_or_above_the_threshold(fixture_scores, threshold, expected):
    queue = sel.disagreement_queue(sel.Scope(setting=fixture_scores["config"]), threshold)
    assert sorted(r.score for r in queue) == sorted(float(s) for s in expected)


def test_queue_filters(fixture_scores):
    scope = sel.Scope(setting=fixture_scores["config"])
    assert [r.score for r in sel.disagreement_queue(scope, 1, {"direction": "under"})] == [3.0]
    assert sorted(r.score for r in sel.disagreement_queue(scope, 1, {"source": "synthetic"})) == [6.0]
    stats = sel.queue_stats(sel.disagreement_queue(scope, 2))
    assert stats == {"total": 2, "confirmed": 0, "todo": 2, "over": 1, "under": 1}
    rows = list(sel.queue_page_rows(sel.disagreement_queue(scope, 1), order="delta"))
    assert [r.abs_delta for r in rows] == [3.0, 2.0, 1.0]


def test_scope_resolution(fixture_scores):
    setting = fixture_scores["config"]
    assert sel.resolve_scope({}).setting == setting
    assert sel.resolve_scope({"setting": str(setting.pk)}).setting == setting
    with pytest.raises(sel.ScopeError):
        sel.resolve_scope({"setting": "999999"})
    with pytest.raises(sel.ScopeError):
        sel.resolve_scope({"run": "abc"})
    assert sel.find_setting("judge-a") == setting
    assert [c.pk for c in sel.settings_with_results()] == [setting.pk]


def _grow(n):
    question = make_question(f"Scaling problem {n}", location="S-01")
    responses = make_responses(question, n, source="human", start=1000 * n) + make_responses(
        question, n, source="synthetic", start=1000 * n + 500
    )
    set_gold(responses, [i % 11 for i in range(2 * n)])
    setting = make_stored_setting(name=f"scale-{n}")
    make_results(setting, responses, [(i * 7) % 11 for i in range(2 * n)])
    return sel.Scope(setting=setting)


def test_metrics_query_count_is_flat():
    small, large = _grow(10), _grow(400)
    counts = []
    for scope in (small, large):
        with CaptureQueriesContext(connection) as queries:
            sel.metrics_report(scope, bootstrap=100)
            list(sel.queue_page_rows(sel.disagreement_queue(scope, 2))[:50])
        counts.append(len(queries))
    assert counts[0] == counts[1]


def test_identical_pairs_each_count():
    # the report groups equal rows in SQL and expands them again: three (7, 4) and one (4, 4)
    question = make_question("Repeated pairs", location="R-01")
    responses = make_responses(question, 4, source="human", start=3000)
    set_gold(responses, [4, 4, 4, 4])
    setting = make_stored_setting("repeat")
    make_results(setting, responses, [7, 7, 7, 4])
    report = sel.metrics_report(sel.Scope(setting=setting), bootstrap=0)
    assert report["n_results"] == report["n_counted"] == 4
    assert report["overall"]["mse"] == pytest.approx(27 / 4) and report["overall"]["fr_3"] == pytest.approx(3 / 4)
    assert report["plots"]["scatter"]["human"] == [[4.0, 4.0, 1], [4.0, 7.0, 3]]
