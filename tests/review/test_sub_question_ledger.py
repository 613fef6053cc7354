"""The per-sub-question ledger: judge points per sub-question against the experts' (hand-computed
figures), in `metrics --format json` under its own key (old keys unchanged), queries flat."""
import io
import json
import re
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import Label
from grading.models import JudgeResult
from grading.review import selectors
from tests.factories import make_imported_gold, make_question, make_responses, make_stored_setting, set_gold

pytestmark = pytest.mark.django_db

GOLDEN = Path(__file__).parent / "data" / "metrics_without_sub_questions.json"
OLD_KEYS = ["scope", "scope_label", "n_results", "n_counted", "left_out", "overall", "by_source", "by_question",
            "by_level", "by_exam", "gap", "plots"]


def _result(setting, response, score, sub_scores, key):
    return JudgeResult.objects.create(setting=setting, response=response, cache_key=key, status="ok", score=score,
                                      sub_scores=sub_scores)


@pytest.fixture
def ledger_case(annotator, annotator2):
    """(1): deltas 1, -2, 0; (2): deltas 0, 0.5, 3 (judge - mean of the experts)."""
    question = make_question("Ledger question", location="3-17")
    r1, r2, r3, r4, r5 = make_responses(question, 5)
    set_gold([r1, r2, r3, r4, r5], [8, 3, 5, 5, 5])
    Label.objects.create(response=r1, annotator=annotator, sub_scores={"(1)": 4, "(2)": 5}, total=9, submitted=True)
    Label.objects.create(response=r1, annotator=annotator2, sub_scores={"(1)": 2, "(2)": 5}, total=7, submitted=True)
    Label.objects.create(response=r2, is_imported=True, sub_scores={"3-17.(1)": 2, "3-17.(2)": 1}, total=3,
                              submitted=True)
    Label.objects.create(response=r3, is_imported=True, sub_scores={"(1)": 5, "(2)": 0}, total=5, submitted=True)
    Label.objects.create(response=r3, annotator=annotator, sub_scores={"(1)": 0, "(2)": 5}, submitted=False)
    Label.objects.create(response=r5, is_imported=True, sub_scores={"(1)": 1, "(2)": 1}, total=2, submitted=True)
    setting = make_stored_setting("ledger-judge", kind="rubric")
    _result(setting, r1, 1, {"(1)": 0, "(2)": 0}, "old")  # an older result of r1: not counted
    _result(setting, r1, 9, {"(1)": 4, "(2)": 5}, "k1")
    _result(setting, r2, 1.5, {"(1)": 0, "(2)": 1.5}, "k2")
    _result(setting, r3, 8, {"(1)": 5, "(2)": 3}, "k3")
    _result(setting, r4, 1, {"(1)": 1}, "k4")  # no expert label: not counted
    _result(setting, r5, 4, {}, "k5")  # no judge points per sub-question: not counted
    return {"config": setting, "question": question}


def test_ledger_figures_by_hand(ledger_case):
    rows = selectors.sub_question_ledger(selectors.Scope(setting=ledger_case["config"]))
    assert [(r["sub_question"], r["n"]) for r in rows] == [("(1)", 3), ("(2)", 3)]
    one, two = rows
    assert one["mae"] == pytest.approx(1.0) and one["fr_1"] == pytest.approx(2 / 3)
    assert one["mean_signed_error"] == pytest.approx(-1 / 3) and one["mse"] == pytest.approx(5 / 3)
    assert two["mae"] == pytest.approx(3.5 / 3) and two["fr_1"] == pytest.approx(1 / 3)
    assert two["mean_signed_error"] == pytest.approx(3.5 / 3)
    assert one["max_points"] == 5 and one["question"] == ledger_case["question"].pk
    assert one["question_label"] == f"3-17 · question #{ledger_case['question'].pk}"


def test_metrics_json_has_the_ledger_under_a_new_last_key(ledger_case):
    out = io.StringIO()
    call_command("metrics", "--setting", "ledger-judge", "--format", "json", "--bootstrap", "0", stdout=out)
    report = json.loads(out.getvalue())
    assert list(report) == [*OLD_KEYS, "sub_question_ledger"]
    assert [row["sub_question"] for row in report["sub_question_ledger"]] == ["(1)", "(2)"]
    assert report["sub_question_ledger"][0]["fr_1"] == pytest.approx(2 / 3)
    text = io.StringIO()
    call_command("metrics", "--setting", "ledger-judge", "--format", "text", "--bootstrap", "0", stdout=text)
    assert "sub-q" in text.getvalue() and "(2)" in text.getvalue()


def _without_sub_questions():
    """A fixed case without sub-question points (the factories' question, five judge results)."""
    question = make_question("Golden question", location="G-01")
    human = make_responses(question, 4)
    synthetic = make_responses(question, 2, source="synthetic", start=20)
    set_gold(human + synthetic, [5, 5, 2, 7, 4, None])
    make_imported_gold(human + synthetic)
    setting = make_stored_setting("golden-judge")
    for i, (response, score) in enumerate(zip(human + synthetic, [8, 3, 2, 6.5, 4, 1])):
        JudgeResult.objects.create(setting=setting, response=response, cache_key=f"g{i}", status="ok", score=score)
    JudgeResult.objects.create(setting=setting, response=human[0], cache_key="bad", status="invalid")
    return question, setting


def _normalised(text, question, setting):
    """The report's text with the row ids that differ between databases replaced (each in its section)."""
    head, rest = text.split('"by_question": [', 1)
    by_question, rest = rest.split('"by_level": [', 1)
    by_level, rest = rest.split('"by_exam": [', 1)
    by_exam, tail = rest.split('"gap": {', 1)
    head = head.replace(f'"setting_id": {setting.pk},', '"setting_id": "S",')
    by_question = by_question.replace(f'"key": {question.pk},', '"key": "Q",').replace(
        f"question #{question.pk}", "question #Q")
    by_exam = by_exam.replace(f'"key": {question.exam_id},', '"key": "E",')
    return (f'{head}"by_question": [{by_question}"by_level": [{by_level}"by_exam": [{by_exam}"gap": {{{tail}')


def test_metrics_json_keeps_the_old_keys_byte_identical_without_sub_questions():
    """The golden file was written by the code before the ledger existed (same data, same command),
    and written again when the intervals followed core.uncertainty (issue 36: one question gives no
    interval, the "uncertainty" block; then a proportion at 0 gets none either below 5 clusters):
    the output is that text with one key added at the end."""
    question, setting = _without_sub_questions()
    out = io.StringIO()
    call_command("metrics", "--setting", "golden-judge", "--format", "json", "--bootstrap", "50", stdout=out)
    text = _normalised(out.getvalue(), question, setting).rstrip("\n")
    golden = GOLDEN.read_text(encoding="utf-8").rstrip("\n")
    assert golden.endswith("\n}")
    assert _floats_to_12_digits(text) == _floats_to_12_digits(golden[: -len("\n}")] + ',\n  "sub_question_ledger": []\n}')


def _floats_to_12_digits(text):
    """The text with each float written to 12 significant digits: numpy's last bit of a correlation
    differs between CPUs (SIMD paths), the rest of the text must not."""
    return re.sub(r"-?\d+\.\d+(?:e-?\d+)?", lambda m: f"{float(m.group()):.12g}", text)


def test_ledger_queries_stay_flat(annotator):
    setting = make_stored_setting("flat-judge", kind="rubric")

    def grow(n, start):
        question = make_question(f"Flat question {start}", location=f"F-{start}")
        responses = make_responses(question, n, start=start)
        make_imported_gold(responses, total=3)
        JudgeResult.objects.bulk_create(
            JudgeResult(setting=setting, response=r, cache_key=f"f{r.pk}", status="ok", score=3,
                        sub_scores={"(1)": 2, "(2)": 1})
            for r in responses
        )

    def count():
        with CaptureQueriesContext(connection) as queries:
            rows = selectors.sub_question_ledger(selectors.Scope(setting=setting))
        return len(queries), rows

    grow(3, 0)
    small, rows = count()
    assert rows[0]["n"] == 3
    grow(60, 100)
    large, rows = count()
    assert sum(r["n"] for r in rows if r["sub_question"] == "(1)") == 63
    assert large == small <= 4


def test_metrics_page_shows_the_ledger_to_reviewers_only(ledger_case, reviewer_client, client, annotator):
    url = f"{reverse('grading:review_metrics')}?setting={ledger_case['config'].pk}"
    page = reviewer_client.get(url)
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="ledger-table"' in html and 'id="plot-ledger"' in html and "ledger-rows" in html
    client.force_login(annotator)
    assert client.get(url).status_code == 403


def test_metrics_page_without_ledger_says_so(reviewer_client):
    _, setting = _without_sub_questions()
    html = reviewer_client.get(f"{reverse('grading:review_metrics')}?setting={setting.pk}").content.decode()
    assert 'id="ledger-empty"' in html
