import json
from decimal import Decimal

import pytest
from django.core.management import call_command

from annotation.importers.realmath import parse_student_id
from annotation.models import ImportReport, Label, Question, Response, RubricCheckpoint, SubQuestion
from tests.conftest import REALMATH_HUMAN, REALMATH_SYNTHETIC

pytestmark = pytest.mark.django_db


def _counts():
    return (
        Question.objects.count(),
        Response.objects.count(),
        Label.objects.count(),
        SubQuestion.objects.count(),
        RubricCheckpoint.objects.count(),
    )


def test_sample_import_gives_two_questions_and_64_responses(sample_data):
    assert Question.objects.count() == 2
    assert Response.objects.count() == 64
    assert Response.objects.filter(source="human").count() == 32
    assert Response.objects.filter(source="synthetic").count() == 32


def test_gold_scores_and_sub_scores_are_the_file_values(sample_data):
    for path in (REALMATH_HUMAN, REALMATH_SYNTHETIC):
        records = json.loads(path.read_text())
        for index, record in enumerate(records):
            response = Response.objects.get(import_file=path.name, import_index=index)
            assert response.gold_score == Decimal(str(record["gt"]))
            assert response.gold_status == "imported"
            assert response.student_id == record["student_id"]
            assert response.transcript == record["student_response"]
            assert response.judge_query == record["query"]
            gold = response.labels.get(is_imported=True)
            assert gold.total == Decimal(str(record["gt"]))
            assert list(gold.sub_scores.values()) == list(record["sub_question_scores"].values())
            assert gold.provenance["file"] == path.name
            assert gold.provenance["record_index"] == index


def test_reimport_changes_nothing(sample_data):
    before = _counts()
    call_command("import_realmath", str(REALMATH_HUMAN))
    call_command("import_realmath", str(REALMATH_SYNTHETIC))
    assert _counts() == before


def test_rubric_checkpoints_parsed_from_cumulative_markers(sample_data):
    question = Question.objects.get(location="3-07")
    points = list(question.checkpoints.values_list("cumulative_points", flat=True))
    assert points == [Decimal(3), Decimal(7), Decimal(9), Decimal(10)]
    labels = dict(question.sub_questions.values_list("label", "max_points"))
    assert labels == {"(1)": Decimal(3), "(2)": Decimal(7)}
    first = question.checkpoints.first()
    assert question.reference_solution[first.start : first.end].rstrip().endswith("3 points")
    assert first.sub_question.label == "(1)"


def test_one_question_per_statement_text_not_per_location(sample_data):
    assert set(Question.objects.values_list("location", flat=True)) == {"3-07", "3-08"}
    assert Question.objects.get(location="3-08").full_score == Decimal(13)


def test_synthetic_generator_parsed_from_student_id(sample_data):
    response = Response.objects.get(student_id="qwen-2.5-7b-instruct_t_0.7_2_9")
    assert response.source == "synthetic"
    assert response.generator_model == "qwen-2.5-7b-instruct"
    assert response.generator_temperature == 0.7


@pytest.mark.parametrize(
    "student_id, expected",
    [
        ("12f8cbc2f5b74035ad71e1be4f75437e", ("human", "", None)),
        ("qwen3-8b_t_1_1_10", ("synthetic", "qwen3-8b", 1.0)),
        ("internlm2.5-7b-chat_t_0_8", ("synthetic", "internlm2.5-7b-chat", 0.0)),
        ("mistral-nemo-instruct_t_0.5_13", ("synthetic", "mistral-nemo-instruct", 0.5)),
    ],
)
def test_parse_student_id(student_id, expected):
    assert parse_student_id(student_id) == expected


def test_inconsistent_records_are_imported_and_reported(tmp_path):
    records = json.loads(REALMATH_HUMAN.read_text())[:3]
    records[0]["sub_question_scores"] = {"3-17.(1)": 1, "3-17.(2)": 1}  # sums to 2, gt stays 3
    records[1]["gt"] = 99
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(records))
    call_command("import_realmath", str(path))
    report = ImportReport.objects.get(file_name="odd.json")
    problems = {w["index"]: w["problem"] for w in report.warnings}
    assert "sum to 2" in problems[0]
    assert "exceeds the full score" in problems[1]
    assert 2 not in problems
    # Kept as they are: never silently fixed.
    assert Response.objects.get(import_file="odd.json", import_index=1).gold_score == 99


def test_import_records_history(sample_data):
    response = Response.objects.first()
    assert response.history.count() == 1


def test_batches_give_the_same_result_as_one(monkeypatch, reviewer):
    from annotation.importers import realmath

    records = json.loads(REALMATH_HUMAN.read_text())
    raw = json.dumps(records + records[:3]).encode()  # the last three repeat the first: skipped
    monkeypatch.setattr(realmath, "BATCH", 5)
    seen = []
    result = realmath.import_realmath(raw, "batched.json", user=reviewer, on_progress=lambda d, t: seen.append((d, t)))
    assert result.counts["responses_created"] == len(records) and result.counts["responses_skipped"] == 3
    assert len(seen) == 8 and seen[-1] == (len(raw), len(raw))  # bytes read, after each batch and at the end
    assert Response.objects.count() == Label.objects.filter(is_imported=True).count() == len(records)
    for index, record in enumerate(records):
        response = Response.objects.get(import_file="batched.json", import_index=index)
        gold = response.labels.get()
        assert (response.student_id, response.gold_score) == (record["student_id"], Decimal(str(record["gt"])))
        assert gold.provenance["record_index"] == index and gold.total == response.gold_score
        history = response.history.get()
        assert history.history_type == "+" and history.history_user == reviewer and history.transcript == response.transcript
        assert gold.history.get().history_user == reviewer


def test_bad_record_in_a_later_batch_rolls_back_the_earlier_ones(monkeypatch):
    from annotation.importers import ImportFormatError, realmath

    records = json.loads(REALMATH_HUMAN.read_text())
    records[12]["full_score"] = "ten"
    monkeypatch.setattr(realmath, "BATCH", 5)
    with pytest.raises(ImportFormatError, match="record 12: field 'full_score' must be"):
        realmath.import_realmath(json.dumps(records).encode(), "late.json")
    assert _counts() == (0, 0, 0, 0, 0) and ImportReport.objects.count() == 0
