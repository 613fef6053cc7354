"""A malformed file gives a clear error naming record and field, and writes nothing."""
import json

import pytest
from django.core.management import CommandError, call_command

from annotation.importers import ImportFormatError, import_ineqmath, import_realmath
from annotation.models import Exam, ImportReport, Question, Response
from tests.conftest import INEQMATH_SAMPLE, REALMATH_HUMAN

pytestmark = pytest.mark.django_db


def good_records():
    return json.loads(REALMATH_HUMAN.read_text())[:4]


def assert_nothing_written():
    assert Question.objects.count() == 0
    assert Response.objects.count() == 0
    assert Exam.objects.count() == 0
    assert ImportReport.objects.count() == 0


def mutate(index, **changes):
    records = good_records()
    for key, value in changes.items():
        if value is KeyError:
            del records[index][key]
        else:
            records[index][key] = value
    return json.dumps(records).encode()


CASES = [
    (b"", "empty"),
    (b"   ", "empty"),
    (b"{not json", "not valid JSON"),
    (b"\xff\xfe\x00garbage", "not UTF-8"),
    (b'{"a": 1}', "expected a JSON array"),
    (b"[]", "holds no records"),
    (b"[1, 2]", "record 0: expected an object"),
    (mutate(2, gt=KeyError), "record 2: missing field 'gt'"),
    (mutate(1, gt="three"), "record 1: field 'gt' must be"),
    (mutate(1, gt=True), "record 1: field 'gt' must be"),
    (mutate(3, student_response=None), "record 3: field 'student_response' must be"),
    (mutate(0, sub_question_scores=[1, 2]), "record 0: field 'sub_question_scores' must be"),
    (mutate(0, sub_question_scores={"(1)": "x"}), "entry '(1)' must be a number"),
    (mutate(2, problem_statement=""), "record 2: field 'problem_statement' is empty"),
    (mutate(2, full_score=0), "record 2: field 'full_score' must be positive"),
    (mutate(2, full_score=1e300), "out of range"),
    (mutate(1, question_level="medium"), "record 1: field 'question_level'"),
    (mutate(1, tag="llm_judge"), "record 1: field 'tag' must be list"),
]


@pytest.mark.parametrize("raw, message", CASES)
def test_malformed_realmath_file_is_refused_whole(raw, message):
    with pytest.raises(ImportFormatError) as excinfo:
        import_realmath(raw, "bad.json")
    assert message in str(excinfo.value)
    assert_nothing_written()


def test_command_reports_error_and_writes_nothing(tmp_path):
    path = tmp_path / "bad.json"
    path.write_bytes(mutate(2, gt=KeyError))
    with pytest.raises(CommandError, match="Nothing imported. record 2: missing field 'gt'"):
        call_command("import_realmath", str(path))
    assert_nothing_written()


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(CommandError, match="no such file"):
        call_command("import_realmath", str(tmp_path / "nope.json"))


def test_late_bad_record_rolls_back_earlier_good_ones():
    records = good_records()
    records[-1]["gt"] = "bad"
    with pytest.raises(ImportFormatError):
        import_realmath(json.dumps(records).encode(), "late.json")
    assert_nothing_written()


INEQ_CASES = [
    ({"type": "triangle"}, "field 'type' must be 'bound' or 'relation'"),
    ({"problem": 5}, "field 'problem' must be string"),
    ({"solution": [1, 2]}, "field 'solution' must be a string or a list of strings"),
    ({"data_id": KeyError}, "missing field 'data_id'"),
]


@pytest.mark.parametrize("change, message", INEQ_CASES)
def test_malformed_ineqmath_file_is_refused_whole(change, message):
    records = json.loads(INEQMATH_SAMPLE.read_text())
    for key, value in change.items():
        if value is KeyError:
            del records[3][key]
        else:
            records[3][key] = value
    with pytest.raises(ImportFormatError) as excinfo:
        import_ineqmath(json.dumps(records).encode(), "bad.json")
    assert "record 3" in str(excinfo.value) and message in str(excinfo.value)
    assert_nothing_written()


def test_relation_problem_needs_choices():
    records = json.loads(INEQMATH_SAMPLE.read_text())
    relation = next(i for i, r in enumerate(records) if r["type"] == "relation")
    del records[relation]["choices"]
    with pytest.raises(ImportFormatError, match=f"record {relation}: field 'choices' is required"):
        import_ineqmath(json.dumps(records).encode(), "bad.json")
