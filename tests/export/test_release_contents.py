"""The unfiltered RealMath-Eval release export holds only what belongs to the format (rubric
answers with a gold score), says in the manifest and on the pages what it left out and why,
and gives every record its real source."""
import io
import json
import zipfile
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.export.writers import write_export
from annotation.models import ExportJob, Question, Response, content_hash

from ..conftest import INEQMATH_SAMPLE

pytestmark = pytest.mark.django_db


def _response(question, student_id, *, source="human", gold=None, extra=None):
    text = f"An answer by {student_id}: $x = 2$."
    return Response.objects.create(
        question=question, source=source, student_id=student_id, transcript=text, transcript_hash=content_hash(text),
        gold_score=None if gold is None else Decimal(gold), gold_status="single" if gold is not None else "none",
        extra=extra or {},
    )


@pytest.fixture
def mixed(sample_data):
    """The 64 released answers, plus: an IneqMath synthetic answer, an OCR'd answer nobody has
    labelled, an OCR'd answer with a gold score, a generated answer with a gold score."""
    call_command("import_ineqmath", str(INEQMATH_SAMPLE))
    rubric = Question.objects.filter(kind="rubric").order_by("pk").first()
    bound = Question.objects.filter(kind="bound").first()
    return {
        "ineqmath": _response(bound, "model_t_0.7_0", source="synthetic", extra={"generation_run": 1}),
        "unlabelled_scan": _response(rubric, "scan-student-1", extra={"origin": "scan"}),
        "labelled_scan": _response(rubric, "scan-student-2", gold=4, extra={"origin": "scan"}),
        "generated": _response(rubric, "model_t_0.7_1", source="synthetic", gold=3, extra={"generation_run": 1}),
    }


def test_release_holds_only_gold_scored_rubric_answers_with_their_real_source(mixed, tmp_path):
    manifest = write_export(Response.objects.all(), "realmath", tmp_path)
    records = json.loads((tmp_path / "realmath_eval.json").read_text())
    assert len(records) == 64 + 2 == manifest["files"]["realmath_eval.json"]["rows"]
    assert all(record["gt"] is not None for record in records)
    by_student = {record["student_id"]: record for record in records}
    assert "scan-student-1" not in by_student and "model_t_0.7_0" not in by_student
    assert by_student["scan-student-2"]["source"] == "ocr_scan"
    assert by_student["model_t_0.7_1"]["source"] == "synthetic_generation"
    imported = Response.objects.exclude(import_file="").values_list("student_id", flat=True)
    assert {by_student[s]["source"] for s in imported} == {"realmath_eval"}  # the released files' own value
    assert {r["student_id"] for r in records if r["source"] == "realmath_eval"} == set(imported)
    left = manifest["left_out"]
    assert left["responses"] == 2
    assert {k: v["responses"] for k, v in left["by_reason"].items()} == {"not_rubric": 1, "no_gold_score": 1}
    assert "IneqMath" in left["by_reason"]["not_rubric"]["why"] and "gt" in left["by_reason"]["no_gold_score"]["why"]
    other = write_export(Response.objects.all(), "jsonl", tmp_path / "jsonl")
    assert "left_out" not in other  # the full export holds everything


def test_export_pages_say_what_the_release_leaves_out(mixed, reviewer_client, settings, tmp_path,
                                                      django_capture_on_commit_callbacks):
    settings.EXPORT_ROOT = tmp_path / "exports"
    page = reviewer_client.get(reverse("annotation:export")).content.decode()
    note = page.split('id="release-note"', 1)[1].split("</p>", 1)[0]
    assert "(66 of the 68 below)" in note and "IneqMath" in note
    with django_capture_on_commit_callbacks(execute=True):  # the job task runs eagerly on commit
        reviewer_client.post(reverse("annotation:export"), {"format": "realmath"})
    job = ExportJob.objects.get()
    assert job.status == "done"
    shown = reviewer_client.get(reverse("annotation:export_job", args=[job.pk])).content.decode()
    assert "Left out of the release file: 2 responses" in shown
    download = reviewer_client.get(reverse("annotation:export_download", args=[job.pk]))
    archive = zipfile.ZipFile(io.BytesIO(b"".join(download.streaming_content)))
    assert json.loads(archive.read("manifest.json"))["left_out"]["responses"] == 2
