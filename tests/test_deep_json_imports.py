"""Files whose JSON nests deeper than Python's decoder can recurse get a clear refusal, not a crash."""
import pytest

from annotation.export.load import import_dataset
from annotation.importers import ImportFormatError, import_ineqmath, import_realmath
from annotation.importers.common import load_json_array
from grading.judges.result_import import ImportRefused, read_records
from grading.review.services import LabelImportRefused, read_label_records

DEEP = b"[" * 5000 + b"]" * 5000
DEEP_LINE = b'{"type": "user", "x": ' + b"[" * 5000 + b"]" * 5000 + b"}"
# Deep enough to refuse (over 100 levels), not so deep that Python's decoder fails.
NESTED = b'{"type": "user", "username": "u", "x": ' + b"[" * 150 + b"]" * 150 + b"}"
RECORD = b'[{"problem_statement": "p", "tag": ' + b"[" * 5000 + b"]" * 5000 + b"}]"
NESTED_RECORD = b'[{"problem_statement": "p", "tag": ' + b"[" * 150 + b"]" * 150 + b"}]"


@pytest.mark.parametrize("read, data, error", [
    (lambda raw: import_dataset(raw, "dataset.jsonl"), DEEP_LINE, ImportFormatError),
    (lambda raw: import_dataset(raw, "dataset.jsonl"), NESTED, ImportFormatError),
    (lambda raw: import_realmath(raw, "release.json"), DEEP, ImportFormatError),
    (lambda raw: import_realmath(raw, "release.json"), RECORD, ImportFormatError),
    (lambda raw: import_realmath(raw, "release.json"), NESTED_RECORD, ImportFormatError),
    (lambda raw: import_ineqmath(raw, "ineqmath.json"), RECORD, ImportFormatError),
    (lambda raw: import_ineqmath(raw, "ineqmath.json"), NESTED_RECORD, ImportFormatError),
    (lambda raw: load_json_array(raw, "release.json"), DEEP, ImportFormatError),
    (read_label_records, DEEP, LabelImportRefused),
    (read_records, DEEP, ImportRefused),
    (read_records, b'{"a": 1}\n{"a": 2}\n' + DEEP_LINE, ImportRefused),
])
@pytest.mark.django_db
def test_deeply_nested_json_is_refused_with_a_message(read, data, error):
    with pytest.raises(error, match="nested too deeply"):
        read(data)


LONG = b"9" * 5001  # an integer literal longer than Python reads: json.loads raises a bare ValueError


@pytest.mark.django_db
def test_an_integer_too_long_to_read_is_refused_with_a_message_by_every_other_reader():
    """Issue 40, item 4: readers that caught only json.JSONDecodeError let that ValueError out (a
    500, or a crashed chunk for model text)."""
    from annotation.models import Exam
    from grading.judges.prompt_sets import load_manifest
    from grading.review.meta_eval import parse_meta_eval_output
    from ocr.class_templates import LayoutError, read_template
    from studies.geometry.services import RunRefused, parse_segments_jsonl
    from studies.style import import_rewrites

    with pytest.raises(ImportFormatError, match="not JSON"):
        load_manifest(b'{"holdout": [' + LONG + b"]}")
    with pytest.raises(ValueError, match="not JSON"):
        import_rewrites(b'[{"response_id": ' + LONG + b"}]", "rewrites.json")
    with pytest.raises(RunRefused, match="Line 1: not JSON"):
        parse_segments_jsonl(b'{"segment_text": "x", "real_score": ' + LONG + b"}\n", group="human")
    with pytest.raises(LayoutError):
        read_template(b'{"pages_per_student": ' + LONG + b"}", Exam.objects.create(name="E"))
    output = parse_meta_eval_output('{"primary_category_code": "A", "model_score": ' + "9" * 5001 + "}")
    assert output.error.startswith("invalid JSON")
