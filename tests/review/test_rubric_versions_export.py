"""Rubric versions, results' rubric version and points per sub-question survive the full JSONL
export and its import (export -> empty database -> export gives the same file)."""
import pytest
from django.core.management import call_command

from annotation import services
from annotation.export.load import import_dataset
from annotation.export.writers import write_export
from annotation.models import Question, Response, RubricVersion
from grading.models import JudgeResult
from tests.factories import make_checkpoints, make_question, make_responses, make_stored_setting

pytestmark = pytest.mark.django_db(transaction=True)


def test_round_trip_keeps_rubric_versions_and_the_ledger(tmp_path):
    question = make_question("Exported question", location="X-01")
    make_checkpoints(question)
    responses = make_responses(question, 2)
    setting = make_stored_setting("exported-judge", kind="rubric")
    JudgeResult.objects.create(setting=setting, response=responses[0], cache_key="a", status="ok", score=4,
                               rubric_version=1, sub_scores={"(1)": 1.5, "(2)": 2.5})
    services.edit_rubric(question, reference_solution="(1) x = 2 ------4 points\n(2) x = -2 ------10 points",
                         note="(1) is worth 4")
    JudgeResult.objects.create(setting=setting, response=responses[0], cache_key="b", status="ok", score=5,
                               rubric_version=2, sub_scores={"(1)": 2, "(2)": 3})
    write_export(Response.objects.all(), "jsonl", tmp_path / "a")
    first = (tmp_path / "a" / "dataset.jsonl").read_bytes()
    call_command("flush", interactive=False, verbosity=0)
    import_dataset(first, "dataset.jsonl")
    question = Question.objects.get()
    assert question.rubric_version == 2
    assert list(RubricVersion.objects.order_by("version").values_list("version", "note")) == [(1, ""), (2, "(1) is worth 4")]
    assert sorted(JudgeResult.objects.values_list("rubric_version", "score")) == [(1, 4.0), (2, 5.0)]
    assert JudgeResult.objects.get(rubric_version=2).sub_scores == {"(1)": 2, "(2)": 3}
    write_export(Response.objects.all(), "jsonl", tmp_path / "b")
    assert (tmp_path / "b" / "dataset.jsonl").read_bytes() == first


def test_a_file_without_versions_imports_as_version_1(tmp_path):
    question = make_question("Old file", location="X-02")
    make_responses(question, 1)
    write_export(Response.objects.all(), "jsonl", tmp_path / "a")
    lines = (tmp_path / "a" / "dataset.jsonl").read_text(encoding="utf-8").splitlines()
    old = "\n".join(
        line.replace(', "rubric_version": 1, "rubric_versions": []', "") for line in lines
    ).encode()
    assert b"rubric_version" not in old
    call_command("flush", interactive=False, verbosity=0)
    import_dataset(old, "dataset.jsonl")
    assert Question.objects.get().rubric_version == 1 and not RubricVersion.objects.exists()


@pytest.mark.parametrize("bad", ['"rubric_version": "2"', '"rubric_version": 0', '"rubric_versions": [{"version": true}]',
                                 '"rubric_versions": "v1"'])
def test_bad_versions_in_a_file_write_nothing(tmp_path, bad):
    from annotation.importers import ImportFormatError

    question = make_question("Bad file", location="X-03")
    make_responses(question, 1)
    write_export(Response.objects.all(), "jsonl", tmp_path / "a")
    text = (tmp_path / "a" / "dataset.jsonl").read_text(encoding="utf-8")
    field = bad.split(":")[0]
    good = '"rubric_version": 1' if field == '"rubric_version"' else '"rubric_versions": []'
    assert good in text
    call_command("flush", interactive=False, verbosity=0)
    with pytest.raises(ImportFormatError, match="rubric_version"):
        import_dataset(text.replace(good, bad).encode(), "dataset.jsonl")
    assert not Question.objects.exists()
