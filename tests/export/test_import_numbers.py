"""Numbers in a full JSONL import (issue 40): scores checked against the question's full score,
integer literals longer than Python reads, and keys with non-ASCII digits."""
import copy

import pytest

from annotation.export.load import import_dataset
from annotation.importers import ImportFormatError
from annotation.models import Label

from .test_import_validation import LINE, _file, good_lines

pytestmark = pytest.mark.django_db


def test_a_checkpoint_mark_under_a_superscript_digit_key_imports_without_a_crash():
    """Item 5: "²".isdigit() is True and int("²") raised inside the import (a crash, not a
    message). Keys are read by core.numbers: ASCII digits name a checkpoint, anything else stays."""
    lines = good_lines()
    lines[LINE["response"] - 1]["annotations"][0]["checkpoint_marks"] = {"0": "reached", "²": "reached"}
    import_dataset(_file(copy.deepcopy(lines)), "dataset.jsonl")
    marks = Label.objects.get().checkpoint_marks
    assert "²" in marks and "0" not in marks and len(marks) == 2


MARK = 424242424242  # replaced by a 5,001-digit literal in the file's text (json.dumps cannot write one)


@pytest.mark.parametrize("path, value", [
    ("judge_results[0].score", 1e308),  # finite, but its square overflows every metric (item 3)
    ("judge_results[0].score", 10.5),  # the question's full score is 10
    ("judge_results[0].score", -1.0),
    ("gold_score", "-1"),
    ("gold_score", -0.5),
    ("annotations[0].total", "11"),
    ("annotations[0].total", "-1"),
    ("adjudications[0].gold_score", "10.01"),
    ("adjudications[0].gold_score", -1),
    ("judge_results[0].meta_evaluation.judge_score", 1e308),
    ("judge_results[0].meta_evaluation.gold_score", -2.0),
])
def test_a_score_outside_zero_to_the_full_score_is_refused_with_its_line_and_field(path, value):
    from .test_import_validation import _counts, _set

    lines = good_lines()
    _set(lines[LINE["response"] - 1], path, value)
    before = _counts()
    with pytest.raises(ImportFormatError) as refused:
        import_dataset(_file(lines), "dataset.jsonl")
    assert str(refused.value).startswith(f"line {LINE['response']}, field {path}: "), str(refused.value)
    assert _counts() == before


def test_scores_are_checked_against_a_question_already_here():
    """The file names a question of the database (no question line): the full score is read there."""
    lines = good_lines()
    import_dataset(_file(lines), "dataset.jsonl")
    again = [line for line in good_lines() if line["type"] != "question"]
    response = again[-1]
    response["student_id"] = "s2"
    response["judge_results"][0]["score"] = 1e308
    with pytest.raises(ImportFormatError) as refused:
        import_dataset(_file(again), "dataset.jsonl")
    assert "field judge_results[0].score: is 1e+308, more than the question's full score 10" in str(refused.value)
    response["judge_results"][0]["score"] = 10.0
    import_dataset(_file(again), "dataset.jsonl")


def test_an_imported_gold_above_the_full_score_keeps_what_the_release_import_reported():
    """A release file may hold a gt above the record's full score (the paper's VF file does, 27
    times): the release import keeps it with a warning, so the full JSONL takes an *imported* gold
    above the full score back; never a negative one, nor any other score above it."""
    lines = good_lines()
    response = lines[LINE["response"] - 1]
    response.update(gold_score="12", gold_status="imported", adjudications=[])
    import_dataset(_file(lines), "dataset.jsonl")


@pytest.mark.parametrize("path", ["judge_results[0].score", "annotations[0].version", "extra.deep.deeper",
                                  "judge_results[0].meta_evaluation.proposals[0].data.x"])
def test_an_integer_too_long_to_read_is_refused_with_its_line_and_field(path):
    """Item 4: a 5,001-digit literal made json.loads raise a bare ValueError (the import crashed)."""
    from .test_import_validation import _counts, _set

    lines = good_lines()
    response = lines[LINE["response"] - 1]
    response["extra"] = {"deep": {}}
    _set(response, path, -MARK)
    body = _file(lines).replace(str(-MARK).encode(), b"-" + b"9" * 5001)
    before = _counts()
    with pytest.raises(ImportFormatError) as refused:
        import_dataset(body, "dataset.jsonl")
    assert str(refused.value).startswith(f"line {LINE['response']}, field {path}: is a whole number of 5001 digits"), \
        str(refused.value)
    assert _counts() == before
