"""export -> import into an empty database -> export again gives identical files."""
import json
from pathlib import Path

import pytest
from django.core.management import call_command

from annotation.export.load import import_dataset
from annotation.export.writers import write_export
from annotation.importers import ImportFormatError
from annotation.models import Adjudication, Exam, Label, Question, Response, StepLabel

pytestmark = pytest.mark.django_db(transaction=True)


def _flush():
    call_command("flush", interactive=False, verbosity=0)


def _annotate(annotator, reviewer):
    from annotation.models import Adjudication

    response = Response.objects.filter(source="human").order_by("id").first()
    checkpoint = response.question.checkpoints.order_by("order").first()
    label = Label.objects.create(
        response=response, annotator=annotator, sub_scores={"(1)": 3, "(2)": 1}, total=4, submitted=True,
        checkpoint_marks={str(checkpoint.pk): "reached"}, comment="ok",
        anchoring={"shown": True, "score": 6.0, "setting": "rubric", "result": None, "seed": 5},
    )
    Exam.objects.filter(pk=response.question.exam_id).update(anchoring=True, anchoring_seed=5, anchoring_setting="rubric")
    StepLabel.objects.create(label=label, checkpoint=checkpoint, start=0, end=5, quote=response.transcript[:5],
                             verdict="calculation_error", comment="sign")
    Adjudication.objects.create(response=response, reviewer=reviewer, gold_score=4, reason="picked ann1",
                                chosen_label=label, previous_gold_score=3, previous_gold_status="imported")


def _judge(reviewer):
    from grading.models import (
        JudgeResult,
        JudgeSetting,
        LlmEndpoint,
        MetaEvalProposal,
        MetaEvaluation,
        StepJudgeValidation,
    )

    endpoint = LlmEndpoint.objects.create(name="local", base_url="http://127.0.0.1:9/v1", api_key_env="JUDGE_KEY")
    v1 = JudgeSetting.objects.create(name="rubric", version=1, kind="rubric", endpoint=endpoint, model="m1")
    v2 = JudgeSetting.objects.create(name="rubric", version=2, kind="rubric", endpoint=endpoint, model="m1", previous=v1)
    step = JudgeSetting.objects.create(name="toy", kind="ineq_toy_case", endpoint=endpoint, model="m2")
    for i, response in enumerate(Response.objects.order_by("id")[:5]):
        result = JudgeResult.objects.create(
            setting=v2, response=response, cache_key=f"k{i}", status="ok", score=float(response.gold_score) + 2,
            rationale="Overall Score: ...", raw_output="Overall Score: 9", prompt_tokens=10, completion_tokens=5,
            cost="0.001000", latency_ms=120, attempts=1,
        )
        meta = MetaEvaluation.objects.create(result=result, category="A", analysis="carried forward", direction="over",
                                             judge_score=result.score, gold_score=float(response.gold_score),
                                             proposed_by="llm", kept_proposal=True, confirmed_by=reviewer, version=1)
        proposal = MetaEvalProposal.objects.create(meta_evaluation=meta, model="m3", status="ok", category="A",
                                                   data={"primary_category_code": "A"}, raw_output="{}")
        meta.proposal = proposal
        meta.save()
        toy = JudgeResult.objects.create(setting=step, response=response, cache_key=f"t{i}", status="ok", score=1.0,
                                         step_verdicts={"pass": True})
        StepJudgeValidation.objects.create(result=toy, judge_says_pass=True, verdict_right=i % 2 == 0,
                                           validated_by=reviewer)


def _scan(reviewer):
    from ocr.models import OcrRun, Page, ScanBatch, ScanFile, Transcript, TranscriptRevision

    response = Response.objects.filter(source="human").order_by("id")[1]
    batch = ScanBatch.objects.create(name="batch 1", exam=response.question.exam, engine="rapidocr")
    scan = ScanFile.objects.create(batch=batch, original_name="s1_3-07_1.jpg", sha256="ab" * 32, size=1234,
                                   detected_format="JPEG", status="accepted")
    page = Page.objects.create(batch=batch, source_file=scan, student_id=response.student_id, question=response.question,
                               page_number=1, checksum="cd" * 32, master="m.png", width=800, height=1000,
                               status="prepared", response=response)
    run = OcrRun.objects.create(page=page, engine="rapidocr", engine_version="3.10", status="done", raw_text="x = 1",
                                tokens=[{"o": 0, "n": 1, "c": 0.5, "b": [1, 2, 3, 4]}], seconds=0.5)
    transcript = Transcript.objects.create(page=page, text="x = 2", version=2, status="verified", source_run=run,
                                           verified_text="x = 2", verified_by=reviewer)
    TranscriptRevision.objects.create(transcript=transcript, version=1, text="x = 1", kind="ocr")
    TranscriptRevision.objects.create(transcript=transcript, version=2, text="x = 2", kind="verify", author=reviewer)


def _files(folder):
    return {p.name: p.read_bytes() for p in Path(folder).iterdir() if p.name != "manifest.json"}


@pytest.mark.parametrize("fmt", ["jsonl"])
def test_round_trip_gives_identical_files(sample_data, annotator, reviewer, tmp_path, fmt):
    from grading.models import JudgeResult, MetaEvaluation
    from ocr.models import TranscriptRevision

    _annotate(annotator, reviewer)
    _judge(reviewer)
    _scan(reviewer)
    first = write_export(Response.objects.all(), "jsonl", tmp_path / "a")
    raw = (tmp_path / "a" / "dataset.jsonl").read_bytes()
    _flush()
    assert Response.objects.count() == 0
    result = import_dataset(raw, "dataset.jsonl")
    assert result.counts["responses_created"] == 64
    # The report counts what came back with the answers, not only questions and answers.
    assert result.counts["labels_created"] == Label.objects.count()
    assert result.counts["adjudications_created"] == Adjudication.objects.count() == 1
    assert result.counts["judge_results_created"] == JudgeResult.objects.count() == 10
    assert TranscriptRevision.objects.count() == 2
    assert JudgeResult.objects.count() == 10 and MetaEvaluation.objects.filter(category="A").count() == 5
    assert Exam.objects.filter(anchoring=True, anchoring_seed=5, anchoring_setting="rubric").count() == 1
    assert Label.objects.get(annotator__isnull=False).anchoring["shown"] is True  # the experiment's record
    second = write_export(Response.objects.all(), "jsonl", tmp_path / "b")
    a, b = _files(tmp_path / "a"), _files(tmp_path / "b")
    assert a == b, _first_difference(a["dataset.jsonl"], b["dataset.jsonl"])
    assert first["files"] == second["files"]
    for other in ("realmath", "csv", "parquet"):
        manifest = write_export(Response.objects.all(), other, tmp_path / f"b-{other}")
    assert manifest["files"]["judge_results.parquet"]["rows"] == 10


def test_import_is_idempotent(sample_data, tmp_path):
    write_export(Response.objects.all(), "jsonl", tmp_path)
    raw = (tmp_path / "dataset.jsonl").read_bytes()
    result = import_dataset(raw, "dataset.jsonl")
    assert result.counts["responses_created"] == 0 and result.counts["responses_skipped"] == 64
    assert result.counts["labels_created"] == 0 and result.counts["labels_skipped"] == Label.objects.count()
    assert sum(result.counts["skipped_by_exam"].values()) == 64
    assert Response.objects.count() == 64 and Question.objects.count() == 2


@pytest.mark.parametrize(
    "text, message",
    [
        (b"", "holds no lines"),
        (b"{bad\n", "line 1: not valid JSON"),
        (b'[1]\n', "line 1: expected an object"),
        (b'{"type": "alien"}\n', "line 1: unknown line type"),
        (b'{"type": "exam", "name": "x"}\n{"type": "question", "key": "k"}\n', "line 2, field exam: is missing"),
        (b'{"type": "exam", "name": "x", "anchoring_seed": -1}\n', "line 1, field anchoring_seed: must be a whole number"),
        (b'{"type": "response", "question": "nope", "source": "human", "student_id": "s", "transcript": "t"}\n',
         "unknown question"),
    ],
)
def test_malformed_jsonl_writes_nothing(db, text, message):
    with pytest.raises(ImportFormatError, match=message):
        import_dataset(text, "bad.jsonl")
    assert Question.objects.count() == 0


def test_bad_value_deep_in_file_rolls_back(sample_data, tmp_path):
    write_export(Response.objects.all(), "jsonl", tmp_path)
    lines = (tmp_path / "dataset.jsonl").read_text().splitlines()
    _flush()
    last = json.loads(lines[-1])
    last["gold_score"] = "lots"
    lines[-1] = json.dumps(last)
    with pytest.raises(ImportFormatError, match="field gold_score: is not a number"):
        import_dataset("\n".join(lines).encode(), "bad.jsonl")
    assert Response.objects.count() == 0 and Question.objects.count() == 0


def _first_difference(a, b):
    for number, (x, y) in enumerate(zip(a.splitlines(), b.splitlines()), start=1):
        if x != y:
            import difflib

            return number, [d for d in difflib.ndiff([x.decode()], [y.decode()]) if d[0] in "?+-"][:3]
    return None


def test_text_with_unicode_line_separators_round_trips(sample_data, tmp_path):
    """JSON text may hold U+2028, U+0085, ... inside strings: lines end at newline only."""
    response = Response.objects.order_by("id").first()
    odd = "first\u2028second\x85third\u2029fourth\x1cfifth"
    Response.objects.filter(pk=response.pk).update(transcript=odd, transcript_hash="x")
    write_export(Response.objects.all(), "jsonl", tmp_path)
    raw = (tmp_path / "dataset.jsonl").read_bytes()
    _flush()
    with (tmp_path / "dataset.jsonl").open("rb") as stream:
        result = import_dataset(stream, "dataset.jsonl")
    assert result.counts["responses_created"] == 64 and result.counts["lines"] == raw.count(b"\n")
    assert Response.objects.filter(transcript=odd).count() == 1
