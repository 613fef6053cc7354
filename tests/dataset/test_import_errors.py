"""A malformed file gives a clear error naming record and field, and writes nothing."""
import io
import json

import pytest
from django.core.management import CommandError, call_command

from annotation.importers import ImportFormatError, import_ineqmath, import_realmath
from annotation.importers.common import iter_json_array, load_json_array
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
    # Lengths of the columns a field goes to, NUL characters (PostgreSQL refuses them), depth.
    (mutate(1, student_id="s" * 201), "record 1: field 'student_id' is 201 characters long, longer than 200"),
    (mutate(1, student_id="s" * 5000), "record 1: field 'student_id' is 5000 characters long"),
    (mutate(1, question_location="l" * 65), "record 1: field 'question_location' is 65 characters long"),
    (mutate(1, question_type="t" * 301), "record 1: field 'question_type' is 301 characters long"),
    (mutate(1, student_response="a\x00b"), "record 1: field 'student_response' holds a NUL character"),
    (mutate(1, sub_question_scores={"x" * 40: 1}), "record 1: field 'sub_question_scores' entry"),
    (mutate(1, gt=1e30), "record 1: field 'gt' is out of range"),
    (mutate(1, tag=["a\x00"]), "record 1: field 'tag' holds a NUL character"),
    (mutate(1, tag=[[[[]]]] * 2 + [json.loads("[" * 120 + "]" * 120)]), "record 1: field 'tag' is nested too deeply"),
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
    ({"data_id": "x" * 65}, "field 'data_id' is 65 characters long, longer than 64"),
    ({"data_id": 10**70}, "field 'data_id' is longer than 64 characters"),
    ({"data_split": "s" * 200}, "field 'data_split' is 200 characters long"),
    ({"problem": "a\x00b"}, "field 'problem' holds a NUL character"),
    ({"theorems": {"t": "a\x00"}}, "field 'theorems' holds a NUL character"),
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


STREAM_DOCS = [
    b"",
    b"  \n ",
    b"{not json",
    b"\xff\xfe\x00garbage",
    b'{"a": 1}',
    b'"text"',
    b"[]",
    b" [ ] ",
    b"[1, 2]",
    b'[{"a": 1}, 2]',
    b'[{"a": 1} {"b": 2}]',
    b'[{"a": 1},\n {"b": [1, 2.5e3, "\xc3\xa9\\u00e9"]},\n{"c": {"d": null}}\n]\n',
    b'[{"a": 1},\n {"b": tru},\n{"c": 1}]',
    b'[{"a": 1},\n   {"b": "no end}]',
    b'[{"a": 1}] x',
    b'[{"a": 1}, ',
    b'\xef\xbb\xbf[{"bom": true}]',
    b'[{"a": "\xc3\xa9"}, {"b": "\xe9"}]',
    b'[{"n": 123456789}, {"n": 1}]',
]


def _whole(raw):
    try:
        return [(i, r) for i, r in enumerate(load_json_array(raw, "f.json"))]
    except ImportFormatError as exc:
        return str(exc)


def _streamed(raw, block):
    try:
        return list(iter_json_array(io.BytesIO(raw), "f.json", block=block))
    except ImportFormatError as exc:
        return str(exc)


@pytest.mark.parametrize("raw", STREAM_DOCS)
@pytest.mark.parametrize("block", [1, 3, 7, 1 << 20])
def test_streamed_array_reads_like_the_whole_file(raw, block):
    """Records and error messages (with line and column) do not depend on how the file is cut."""
    assert _streamed(raw, block) == _whole(raw)


def test_streamed_array_keeps_one_block_in_memory():
    records = [{"i": i, "text": "x" * 100} for i in range(2000)]
    stream = io.BytesIO(json.dumps(records).encode())
    window_sizes = []
    for index, record in iter_json_array(stream, "f.json", block=4096):
        assert record == records[index]
        window_sizes.append(stream.tell())
    assert len(set(window_sizes)) > 50  # read as it goes, not at once


def test_file_larger_than_the_limit_is_refused(settings):
    settings.IMPORT_MAX_BYTES = 10
    with pytest.raises(ImportFormatError, match="larger than 10 bytes"):
        list(iter_json_array(io.BytesIO(b'[{"a": 1}, {"b": 2}]'), "f.json"))
