"""Every field of every line type of the full JSONL is checked before anything is written: a
bad value is refused whole with "line N, field F: ...", and the database is left as it was.

One table, a row per (line type, field, bad value), over a file that holds every line type and
everything a response line nests (labels, step labels, adjudications, assignments, judge
results with their meta-evaluation and validation, OCR pages with runs, transcript, revisions).
"""
import copy
import json
import re

import pytest
from django.apps import apps

from annotation.export.load import import_dataset
from annotation.importers import ImportFormatError
from annotation.models import Response, content_hash
from grading.models import JudgeResult

STATEMENT = "Prove that 1 + 1 = 2."
KEY = content_hash(STATEMENT)
TIME = "2024-05-01T10:00:00+00:00"


def good_lines():
    return [
        {"type": "user", "username": "ann", "role": "annotator"},
        {"type": "user", "username": "rev", "role": "reviewer"},
        {"type": "exam", "name": "E", "batch_date": "2024-05-01", "blind": True, "anchoring": False,
         "anchoring_seed": 0, "anchoring_setting": ""},
        {"type": "question", "key": KEY, "exam": "E", "statement": STATEMENT, "reference_solution": "ref ------10 points",
         "full_score": "10", "kind": "rubric", "gold_answer": "", "location": "3-17", "question_type": "proof",
         "level": "low", "task_description": "", "external_id": "", "choices": [], "extra": {},
         "sub_questions": [{"label": "(1)", "order": 0, "max_points": "10"}],
         "checkpoints": [{"order": 0, "cumulative_points": "10", "text": "ref", "start": 0, "end": 18,
                          "sub_question": "(1)"}],
         "rubric_version": 1,
         "rubric_versions": [{"version": 1, "reference_solution": "ref", "full_score": "10", "checkpoints": [],
                              "sub_questions": [], "note": "", "created": TIME}]},
        {"type": "judge_endpoint", "name": "local", "base_url": "http://127.0.0.1:9/v1", "api_key_env": "OPENAI_API_KEY",
         "max_concurrency": 1, "requests_per_minute": 0, "tokens_per_minute": 0, "timeout_seconds": 10.0,
         "max_attempts": 1},
        {"type": "judge_config", "name": "j", "version": 1, "endpoint": "local", "kind": "rubric", "model": "m",
         "temperature": 0.0, "max_tokens": 100, "reasoning_effort": "", "samples": 1, "aggregate": "mean",
         "system_prompt": "", "prompt_template": "", "extra_body": {}, "parse_retries": 0, "notes": "",
         "answer_tolerance": "strict", "second_opinion": False, "price_input_per_1k": "0",
         "price_output_per_1k": "0", "previous": None, "created": TIME},
        {"type": "response", "question": KEY, "source": "human", "student_id": "s1", "transcript": "1 + 1 = 2",
         "generator_model": "", "generator_temperature": None, "generator_prompt": "", "status": "labelled",
         "gold_score": "5", "gold_status": "adjudicated", "judge_query": "", "extra": {}, "import_file": "",
         "import_index": 0, "version": 1, "created": TIME,
         "annotations": [{"annotator": "ann", "is_imported": False, "sub_scores": {"(1)": 5}, "total": "5",
                          "checkpoint_marks": {"0": "reached"}, "override_reason": "", "comment": "",
                          "transcript_hash": "", "submitted": True, "submitted_at": TIME, "provenance": {},
                          "version": 1, "active_seconds": 3, "anchoring": {},
                          "step_labels": [{"checkpoint": 0, "sub_question": "(1)", "start": 0, "end": 1,
                                           "quote": "1", "prefix": "", "suffix": "", "needs_review": False,
                                           "verdict": "correct", "awarded_points": "1", "comment": ""}]}],
         "adjudications": [{"reviewer": "rev", "gold_score": "5", "reason": "", "chosen": "ann",
                            "previous_gold_score": None, "previous_gold_status": "", "label_totals": {},
                            "created": TIME}],
         "assignments": [{"annotator": "ann", "strategy": "round_robin", "completed_at": TIME}],
         "judge_results": [{"config": "j", "config_version": 1, "cache_key": "k", "status": "ok", "score": 5.0,
                            "spread": 0.0, "rationale": "", "raw_output": "", "parse_status": "ok",
                            "step_verdicts": {}, "samples": [], "prompt_tokens": 1, "completion_tokens": 1,
                            "latency_ms": 10, "attempts": 1, "errors": [], "provenance": {}, "rubric_version": 1,
                            "sub_scores": {"(1)": 5}, "cost": "0", "finished": TIME,
                            "meta_evaluation": {"category": "A", "analysis": "", "is_ood": False, "direction": "",
                                                "judge_score": 5.0, "gold_score": 5.0, "proposed_by": "person",
                                                "kept_proposal": False, "provenance": {}, "version": 1,
                                                "confirmed_by": "rev", "confirmed_at": TIME,
                                                "proposals": [{"model": "m", "status": "ok", "category": "A",
                                                               "analysis": "", "is_ood": False, "data": {},
                                                               "raw_output": "", "error": "", "errors": [],
                                                               "prompt_tokens": 1, "completion_tokens": 1,
                                                               "latency_ms": 1, "created": TIME, "shown": True}]},
                            "validation": {"judge_says_pass": True, "verdict_right": True, "note": "",
                                           "validated_by": "rev"}}],
         "ocr": {"pages": [{"batch": "b", "exam": "E", "engine": "tesseract",
                            "file": {"original_name": "s1.png", "sha256": "0" * 64, "detected_format": "png",
                                     "size": 10},
                            "index_in_file": 0, "student_id": "s1", "page_number": 1, "assignment_note": "",
                            "checksum": "1" * 64, "width": 10, "height": 10, "status": "prepared",
                            "prepare_error": "", "skew_degrees": 0.0, "web_width": 10, "web_height": 10,
                            "ocr_runs": [{"engine": "tesseract", "engine_version": "5", "status": "done",
                                          "raw_text": "1 + 1 = 2", "tokens": [], "seconds": 0.5, "error": "",
                                          "cer_edits": None, "cer_length": None, "finished": TIME}],
                            "transcript": {"text": "1 + 1 = 2", "version": 1, "status": "draft",
                                           "verified_text": "", "verified_by": None, "verified_at": None,
                                           "source_run": 0,
                                           "revisions": [{"version": 1, "text": "1 + 1 = 2", "kind": "ocr",
                                                          "author": None, "created": TIME}]}}]}},
    ]


LINE = {"user": 1, "exam": 3, "question": 4, "judge_endpoint": 5, "judge_config": 6, "response": 7}
INF, NAN = float("inf"), float("nan")
DEEP = [[]]
for _ in range(150):
    DEEP = [DEEP]

# (line type, field path, bad value, field named in the message when it is not the path itself)
ROWS = [
    ("user", "username", 5, None),
    ("user", "username", "u" * 151, None),
    ("user", "role", "god", None),
    ("exam", "name", 1, None),
    ("exam", "name", "e" * 201, None),
    ("exam", "batch_date", "yesterday", None),
    ("exam", "blind", "yes", None),
    ("exam", "anchoring_seed", -1, None),
    ("exam", "anchoring_seed", 1.5, None),
    ("exam", "anchoring_setting", "s" * 101, None),
    ("question", "key", 5, None),
    ("question", "key", "0" * 64, None),
    ("question", "exam", None, None),
    ("question", "statement", 12345, None),
    ("question", "full_score", "1e30", None),
    ("question", "full_score", "abc", None),
    ("question", "full_score", NAN, None),
    ("question", "full_score", "1.234", None),
    ("question", "kind", "essay", None),
    ("question", "level", "mid", None),
    ("question", "location", "l" * 65, None),
    ("question", "choices", "abc", None),
    ("question", "extra", [1], None),
    ("question", "rubric_version", 0, None),
    ("question", "rubric_version", "1", None),
    ("question", "sub_questions", "nope", None),
    ("question", "sub_questions[0].label", "x" * 33, None),
    ("question", "sub_questions[0].order", -1, None),
    ("question", "sub_questions[0].max_points", "inf", None),
    ("question", "checkpoints[0].order", "a", None),
    ("question", "checkpoints[0].cumulative_points", None, None),
    ("question", "checkpoints[0].start", 2**31, None),
    ("question", "rubric_versions[0].version", "abc", None),
    ("question", "rubric_versions[0].created", "noon", None),
    ("question", "rubric_versions[0].note", "n" * 301, None),
    ("judge_endpoint", "name", "x" * 101, None),
    ("judge_endpoint", "base_url", 5, None),
    ("judge_endpoint", "max_concurrency", -1, None),
    ("judge_endpoint", "timeout_seconds", "fast", None),
    ("judge_endpoint", "timeout_seconds", INF, None),
    ("judge_endpoint", "max_attempts", 40000, None),
    ("judge_endpoint", "timeout_seconds", 0.0, None),
    ("judge_config", "version", "abc", None),
    ("judge_config", "version", 0, None),
    ("judge_config", "kind", "oracle", None),
    ("judge_config", "temperature", "hot", None),
    ("judge_config", "temperature", -1.0, None),
    ("judge_config", "max_tokens", -5, None),
    ("judge_config", "samples", 1e30, None),
    ("judge_config", "extra_body", [1], None),
    ("judge_config", "price_input_per_1k", "1e30", None),
    ("judge_config", "endpoint", 5, None),
    ("judge_config", "endpoint", "ghost", None),
    ("judge_config", "previous", "x", None),
    ("judge_config", "created", 5, None),
    ("response", "question", "0" * 64, None),
    ("response", "transcript", 12345, None),
    ("response", "student_id", "s" * 5000, None),
    ("response", "student_id", "a\x00b", None),
    ("response", "source", "robot", None),
    ("response", "status", "hacked", None),
    ("response", "gold_score", "1e30", None),
    ("response", "gold_score", 1e30, None),
    ("response", "gold_score", INF, None),
    ("response", "gold_status", "x", None),
    ("response", "generator_temperature", "hot", None),
    ("response", "import_index", 1e30, None),
    ("response", "import_index", "3", None),
    ("response", "version", "abc", None),
    ("response", "version", -1, None),
    ("response", "extra", [], None),
    ("response", "extra", {"deep": DEEP}, None),
    ("response", "extra", {"a": "b\x00"}, None),
    ("response", "created", "tomorrow", None),
    ("response", "annotations", "nope", None),
    ("response", "annotations[0]", "x", None),
    ("response", "annotations[0].annotator", 5, None),
    ("response", "annotations[0].sub_scores", [1, 2], None),
    ("response", "annotations[0].sub_scores", {"(1)": "5"}, "annotations[0].sub_scores.(1)"),
    ("response", "annotations[0].sub_scores", {"(1)": 1e30}, "annotations[0].sub_scores.(1)"),
    ("response", "annotations[0].total", "many", None),
    ("response", "annotations[0].submitted", "yes", None),
    ("response", "annotations[0].checkpoint_marks", {"0": "maybe"}, "annotations[0].checkpoint_marks.0"),
    ("response", "annotations[0].version", "2", None),
    ("response", "annotations[0].active_seconds", -1, None),
    ("response", "annotations[0].provenance", [1], None),
    ("response", "annotations[0].step_labels", "x", None),
    ("response", "annotations[0].step_labels[0].verdict", "great", None),
    ("response", "annotations[0].step_labels[0].start", -1, None),
    ("response", "annotations[0].step_labels[0].awarded_points", "1e9", None),
    ("response", "adjudications[0].gold_score", None, None),
    ("response", "adjudications[0].gold_score", "x", None),
    ("response", "adjudications[0].reviewer", None, None),
    ("response", "adjudications[0].label_totals", [], None),
    ("response", "adjudications[0].created", 5, None),
    ("response", "assignments[0].annotator", None, None),
    ("response", "assignments[0].strategy", "random_walk", None),
    ("response", "assignments[0].completed_at", "x", None),
    ("response", "judge_results", "x", None),
    ("response", "judge_results[0].config", "nope", None),
    ("response", "judge_results[0].config_version", "1", None),
    ("response", "judge_results[0].score", "high", None),
    ("response", "judge_results[0].status", "maybe", None),
    ("response", "judge_results[0].prompt_tokens", -1, None),
    ("response", "judge_results[0].attempts", 70000, None),
    ("response", "judge_results[0].latency_ms", 1.5, None),
    ("response", "judge_results[0].sub_scores", [1], None),
    ("response", "judge_results[0].cost", "free", None),
    ("response", "judge_results[0].cache_key", "k" * 65, None),
    ("response", "judge_results[0].step_verdicts", [], None),
    ("response", "judge_results[0].finished", "x", None),
    ("response", "judge_results[0].meta_evaluation.category", "Z", None),
    ("response", "judge_results[0].meta_evaluation.proposals[0].status", "x", None),
    ("response", "judge_results[0].validation.verdict_right", "yes", None),
    ("response", "ocr", "x", None),
    ("response", "ocr.pages[0].width", -1, None),
    ("response", "ocr.pages[0].status", "x", None),
    ("response", "ocr.pages[0].batch", "b" * 201, None),
    ("response", "ocr.pages[0].file.size", "big", None),
    ("response", "ocr.pages[0].ocr_runs[0].seconds", "slow", None),
    ("response", "ocr.pages[0].transcript.status", "x", None),
    ("response", "ocr.pages[0].transcript.revisions[0].kind", "x", None),
]


def _set(data, path, value):
    steps = re.findall(r"[^.\[\]]+|\[\d+\]", path)
    for step in steps[:-1]:
        data = data[int(step[1:-1])] if step.startswith("[") else data[step]
    last = steps[-1]
    if last.startswith("["):
        data[int(last[1:-1])] = value
    else:
        data[last] = value


def _file(lines):
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def _counts():
    return {model._meta.label: model.objects.count() for app in ("annotation", "grading", "ocr", "auth")
            for model in apps.get_app_config(app).get_models()}


@pytest.mark.django_db
def test_the_good_file_imports_whole():
    result = import_dataset(_file(good_lines()), "dataset.jsonl")
    assert result.counts["responses_created"] == 1
    response = Response.objects.get()
    assert response.labels.count() == 1 and JudgeResult.objects.get().meta_evaluation.category == "A"
    assert response.scan_pages.get().transcript.revisions.count() == 1


@pytest.mark.django_db
@pytest.mark.parametrize("kind, path, value, field", ROWS, ids=[f"{r[0]}.{r[1]}={str(r[2])[:20]!r}" for r in ROWS])
def test_a_bad_field_is_refused_whole(kind, path, value, field):
    lines = good_lines()
    _set(lines[LINE[kind] - 1], path, copy.deepcopy(value))
    before = _counts()
    with pytest.raises(ImportFormatError) as refused:
        import_dataset(_file(lines), "dataset.jsonl")
    message = str(refused.value)
    where = f"line {LINE[kind]}, field {field or path}: "
    assert message.startswith(where), message
    assert _counts() == before
