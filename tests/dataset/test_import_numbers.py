"""Numbers in release and IneqMath imports, by the command's functions and POST /api/import/
(issue 40): an integer literal longer than Python reads (items 4) and negative gold scores
(item 3) are refused with the record and the field, nothing imported."""
import io
import json

import pytest

from annotation.importers import ImportFormatError, import_ineqmath, import_realmath
from annotation.models import Question, Response
from tests.conftest import INEQMATH_SAMPLE, REALMATH_HUMAN, api_client_for

pytestmark = pytest.mark.django_db

MARK = 424242424242  # replaced by a 5,001-digit literal in the text (json.dumps cannot write one)
LONG = b"-" + b"9" * 5001


def _release(edit):
    records = json.loads(REALMATH_HUMAN.read_text())[:3]
    edit(records)
    return json.dumps(records).encode().replace(str(-MARK).encode(), LONG)


def _set(key, value, at=1):
    def edit(records):
        records[at][key] = value
    return edit


@pytest.mark.parametrize("edit, where", [
    (_set("gt", -MARK), "record 1: field 'gt' is a whole number of 5001 digits"),
    (_set("tag", ["a", {"b": [-MARK]}]), "record 1: field 'tag[1].b[0]' is a whole number of 5001 digits"),
    (_set("anything", -MARK), "record 1: field 'anything' is a whole number of 5001 digits"),
    (_set("gt", -1), "record 1: field 'gt' is -1: a score cannot be negative."),
    (_set("gt", -0.5), "record 1: field 'gt' is -0.5: a score cannot be negative."),
    (_set("gt", 1e308), "record 1: field 'gt' is out of range"),
    (_set("sub_question_scores", {"3-17.(1)": -1, "3-17.(2)": 0}),
     "record 1: field 'sub_question_scores.3-17.(1)' is -1: a score cannot be negative."),
])
def test_a_release_record_with_a_long_integer_or_a_negative_score_is_refused(edit, where):
    with pytest.raises(ImportFormatError) as refused:
        import_realmath(_release(edit), "release.json")
    assert str(refused.value).startswith(where), str(refused.value)
    assert not Response.objects.exists() and not Question.objects.exists()


def test_an_ineqmath_record_with_a_long_integer_is_refused():
    records = json.loads(INEQMATH_SAMPLE.read_text())
    records[2]["extra_number"] = -MARK
    raw = json.dumps(records).encode().replace(str(-MARK).encode(), LONG)
    with pytest.raises(ImportFormatError, match=r"^record 2: field 'extra_number' is a whole number of 5001 digits"):
        import_ineqmath(raw, "ineqmath.json")
    assert not Question.objects.exists()


@pytest.mark.parametrize("fmt, raw", [
    ("realmath", _release(_set("gt", -MARK))),
    ("realmath", _release(_set("gt", -1))),
    ("ineqmath", b'[{"problem": "p", "type": "bound", "answer": "1", "data_id": ' + LONG + b"}]"),
    ("realmath", b"[" + LONG + b"]"),
])
def test_the_api_import_answers_400_naming_the_record_and_field(reviewer, fmt, raw):
    upload = io.BytesIO(raw)
    upload.name = "file.json"
    answer = api_client_for(reviewer).post("/api/import/", {"format": fmt, "file": upload, "overlap": "keep"})
    assert answer.status_code == 400, answer.content[:300]
    assert "record " in answer.json()["detail"], answer.json()
    assert not Response.objects.exists() and not Question.objects.exists()
