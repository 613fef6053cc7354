"""run_judges, import_judge_results and generate_synthetic from the command line."""
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Response
from grading.models import JudgeResult, JudgeRun, JudgeSetting
from tests.conftest import DEMO_DIR
from tests.factories import make_setting

from .helpers import score_by_answer

pytestmark = pytest.mark.django_db


def call(*args):
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_run_judges_inline_with_filters_then_rerun_is_free(endpoint, llm_server, rubric_question):
    from tests.factories import make_responses

    make_responses(rubric_question, 3, source="human")
    make_responses(rubric_question, 2, source="synthetic", start=50)
    llm_server.default = score_by_answer({})
    make_setting(endpoint, name="cli-judge")
    out = call("run_judges", "--setting", "cli-judge", "--source", "human", "--inline")
    run = JudgeRun.objects.get()
    assert run.status == "done" and run.n_items == 3 and run.selection == {"source": "human"}
    assert f"Run {run.pk}" in out and "ok 3" in out
    assert llm_server.request_count == 3
    out = call("run_judges", "--setting", "cli-judge", "--source", "human", "--inline")
    assert llm_server.request_count == 3 and "from cache 3" in out


def test_run_judges_queued_resume_and_cancel(endpoint, llm_server, responses, django_capture_on_commit_callbacks):
    llm_server.default = score_by_answer({})
    make_setting(endpoint, name="cli-queued")
    with django_capture_on_commit_callbacks(execute=True):
        call("run_judges", "--setting", "cli-queued")
    run = JudgeRun.objects.get()
    assert run.status == "done" and JudgeResult.objects.count() == 6
    assert "cancelled" not in call("run_judges", "--cancel", str(run.pk)).lower()  # a finished run stays done
    with django_capture_on_commit_callbacks(execute=True):
        assert "resumed" in call("run_judges", "--resume", str(run.pk))


def test_run_judges_errors(endpoint, responses):
    with pytest.raises(CommandError, match="No setting 'nope'"):
        call("run_judges", "--setting", "nope")
    make_setting(endpoint, name="cli-empty")
    with pytest.raises(CommandError, match="No response matches"):
        call("run_judges", "--setting", "cli-empty", "--q", "no such text anywhere")


def test_import_meta_eval_sample_attaches_to_imported_responses(sample_data):
    out = call("import_judge_results", str(DEMO_DIR / "meta_eval_input_examples.json"), "--model", "gemini-3-pro")
    assert "4 records: 4 results created" in out and "0 unmatched" in out
    setting = JudgeSetting.objects.get(name="imported: gemini-3-pro")
    assert setting.kind == "external"
    records = json.loads((DEMO_DIR / "meta_eval_input_examples.json").read_text())
    for record in records:
        result = JudgeResult.objects.get(setting=setting, response__transcript=record["student_response"])
        assert result.score == float(record["model_score"]) and result.status == "ok"
        assert result.raw_output == record["response"] and result.response.question.statement == record["problem_statement"]
        assert result.provenance["file"] == "meta_eval_input_examples.json"
    # Importing again changes nothing but says so.
    out = call("import_judge_results", str(DEMO_DIR / "meta_eval_input_examples.json"), "--model", "gemini-3-pro")
    assert "0 results created, 4 updated" in out and JudgeResult.objects.count() == 4


def test_import_reports_unmatched_and_reads_raw_text(sample_data, tmp_path):
    response = Response.objects.order_by("id").first()
    lines = [
        {"response_id": response.pk, "response": "**Overall Score:** 3\nok", "model": "m1"},
        {"response_id": 999999, "model_score": 2},
        {"problem_statement": "A problem nobody imported", "student_response": "x", "model_score": 1},
        {"problem_statement": response.question.statement, "student_response": "not this text", "model_score": 1},
        {"response_id": response.pk, "response": "no score at all", "model": "m2"},
        {"student_id": "only an id"},
    ]
    path = tmp_path / "external.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in lines))
    out = call("import_judge_results", str(path))
    assert "6 records: 2 results created" in out and "4 unmatched" in out
    assert "unmatched record 1: no response #999999" in out
    assert "unmatched record 2: no question has this problem statement" in out
    assert f"unmatched record 3: question #{response.question_id} has no response with this text" in out
    assert "unmatched record 5: the record has neither response_id nor" in out
    parsed = JudgeResult.objects.get(setting__name="imported: m1")
    assert (parsed.score, parsed.status, parsed.parse_status) == (3.0, "ok", "ok")
    invalid = JudgeResult.objects.get(setting__name="imported: m2")
    assert (invalid.score, invalid.status, invalid.raw_output) == (None, "invalid", "no score at all")


def test_import_refuses_a_broken_file_whole(sample_data, tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('[{"response_id": 1, "model_score": 2}, 7]')
    with pytest.raises(CommandError, match="Nothing was imported. Record 1 is not a JSON object"):
        call("import_judge_results", str(path))
    path.write_text("{not json")
    with pytest.raises(CommandError, match="Nothing was imported"):
        call("import_judge_results", str(path))
    assert not JudgeResult.objects.exists()


def test_generate_synthetic_inline(endpoint, llm_server, rubric_question):
    llm_server.default = lambda payload: __import__("tests.llm_server", fromlist=["Reply"]).Reply(
        f"(1) x = 2. (2) x = -2. [{payload['model']} at {payload['temperature']}]"
    )
    out = call(
        "generate_synthetic", "--endpoint", endpoint.name, "--models", "tiny-7b,small-8b", "--temperatures", "0,0.7",
        "--per-cell", "2", "--question", str(rubric_question.pk), "--inline",
    )
    assert "8 answers to write" in out and "8 written" in out
    synthetic = Response.objects.filter(source="synthetic").order_by("student_id")
    assert synthetic.count() == 8
    ids = sorted(synthetic.values_list("student_id", flat=True))
    assert ids[:4] == ["small-8b_t_0.7_0", "small-8b_t_0.7_1", "small-8b_t_0_0", "small-8b_t_0_1"]
    one = synthetic.get(student_id="tiny-7b_t_0.7_1")
    assert one.generator_model == "tiny-7b" and one.generator_temperature == 0.7
    assert "[tiny-7b at 0.7]" in one.transcript and "answer sheet" in one.generator_prompt
    # A second grid continues the numbering instead of reusing ids.
    call("generate_synthetic", "--endpoint", endpoint.name, "--models", "tiny-7b", "--temperatures", "0",
         "--question", str(rubric_question.pk), "--inline")
    assert Response.objects.filter(student_id="tiny-7b_t_0_2").exists()
