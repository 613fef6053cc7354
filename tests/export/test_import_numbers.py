"""Numbers in a full JSONL import (issue 40): scores checked against the question's full score,
integer literals longer than Python reads, and keys with non-ASCII digits."""
import copy

import pytest

from annotation.export.load import import_dataset
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
