"""Issue 27: prompt variants from files kept as named prompt sets (import_realmath --prompt-set), replayed by a
replay setting that names the set (judge_setting add --kind replay --prompt-set), with the few-shot file's
calibration answers as hold-outs. The variant files are small fixtures in the release shape, made from the
demo sample (the paper's released variant files are not shipped)."""
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Response
from grading.models import JudgeResult, JudgeRunItem, JudgeSetting, PromptSet, PromptSetEntry
from tests.conftest import REALMATH_HUMAN
from tests.factories import API_KEY_ENV
from tests.llm_server import Reply

from .helpers import run_now

pytestmark = pytest.mark.django_db


@pytest.fixture
def human_sample(db):
    call_command("import_realmath", str(REALMATH_HUMAN), stdout=StringIO())
    return json.loads(REALMATH_HUMAN.read_text())


def _variant(records, tmp_path, name, tag, *, drop=0, extra=()):
    """A release-format variant file: the same records with a different prompt, minus `drop`, plus `extra`."""
    out = [{**r, "query": f"{tag} PROMPT for {r['student_id']} on {r['question_location']}"} for r in records[drop:]]
    out += list(extra)
    path = tmp_path / name
    path.write_text(json.dumps(out, ensure_ascii=False))
    return path


def _import(path, *args):
    out = StringIO()
    call_command("import_realmath", str(path), *args, stdout=out)
    return out.getvalue()


def test_variant_import_attaches_prompts_to_existing_answers_and_reports_unmatched(human_sample, tmp_path):
    stranger = {**human_sample[0], "student_id": "ffffffffffffffffffffffffffffffff"}
    unknown = {**human_sample[1], "problem_statement": "A problem the tool has never seen."}
    path = _variant(human_sample, tmp_path, "VF_realmath_eval.json", "VF", extra=[stranger, unknown])
    before = Response.objects.count()
    out = _import(path, "--prompt-set", "vf")
    assert Response.objects.count() == before  # nothing created twice
    assert "34 records, 32 prompts attached to existing answers, 2 unmatched" in out
    assert "record 32 (ffffffffffffffffffffffffffffffff, 3-07): no answer by this student to this question" in out
    assert "record 33" in out and "the question is not in the tool" in out
    vf = PromptSet.objects.get(name="vf")
    assert vf.entries.filter(holdout=False).count() == 32 and vf.report["unmatched"] == 2
    answer = Response.objects.get(student_id=human_sample[5]["student_id"], question__location=human_sample[5]["question_location"])
    assert vf.entries.get(response=answer).query == f"VF PROMPT for {answer.student_id} on {answer.question.location}"
    assert answer.judge_query == human_sample[5]["query"]  # the release prompt is untouched
    # importing it again replaces, never duplicates
    _import(path, "--prompt-set", "vf")
    assert PromptSetEntry.objects.filter(prompt_set=vf).count() == 32


def test_replay_setting_sends_its_prompt_set(human_sample, tmp_path, llm_server, django_capture_on_commit_callbacks):
    _import(_variant(human_sample, tmp_path, "VF_realmath_eval.json", "VF"), "--prompt-set", "vf")
    out = StringIO()
    call_command("judge_setting", "add", "--name", "vf-replay", "--kind", "replay", "--prompt-set", "vf",
                 "--base-url", llm_server.url, "--model", "judge-model", "--api-key-env", API_KEY_ENV,
                 "--format", "json", stdout=out)
    assert json.loads(out.getvalue())["prompt_set"] == "vf"
    setting = JudgeSetting.objects.get(name="vf-replay")
    llm_server.default = Reply("Overall Score: 2")
    run_now(django_capture_on_commit_callbacks, setting)
    sent = sorted(r.payload["messages"][-1]["content"] for r in llm_server.requests)
    assert sent == sorted(f"VF PROMPT for {r['student_id']} on {r['question_location']}" for r in human_sample)
    with pytest.raises(CommandError, match="No prompt set 'nope'"):
        call_command("judge_setting", "add", "--name", "x", "--kind", "replay", "--prompt-set", "nope",
                     "--base-url", llm_server.url, "--model", "m", stdout=StringIO())


def test_few_shot_file_calibration_answers_are_hold_outs_never_judged(
        human_sample, tmp_path, llm_server, django_capture_on_commit_callbacks):
    path = _variant(human_sample, tmp_path, "realmath_eval_fewshot.json", "FEWSHOT", drop=4)
    out = _import(path, "--prompt-set", "fewshot", "--holdout-absent")
    assert "28 prompts attached" in out and "4 hold-out answers" in out
    fewshot = PromptSet.objects.get(name="fewshot")
    holdout = set(fewshot.entries.filter(holdout=True).values_list("response_id", flat=True))
    expected = {Response.objects.get(student_id=r["student_id"], question__location=r["question_location"]).pk
                for r in human_sample[:4]}
    assert holdout == expected
    setting = JudgeSetting.objects.create(name="fs-replay", kind="replay", model="judge-model",
                                          endpoint=_endpoint(llm_server), prompt_set=fewshot)
    llm_server.default = Reply("Overall Score: 1")
    run = run_now(django_capture_on_commit_callbacks, setting)
    judged = set(JudgeRunItem.objects.filter(run=run).values_list("response_id", flat=True))
    assert len(judged) == 28 and not judged & holdout
    assert not JudgeResult.objects.filter(config=setting, response_id__in=holdout).exists()
    assert llm_server.request_count == 28


def test_manifest_marks_hold_outs_and_a_bad_manifest_imports_nothing(human_sample, tmp_path):
    path = _variant(human_sample, tmp_path, "fs.json", "FS", drop=2)
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"calibration": [
        {"student_id": r["student_id"], "question_location": r["question_location"]} for r in human_sample[:2]]}))
    out = _import(path, "--prompt-set", "fs", "--holdout-manifest", str(manifest))
    assert "2 hold-out answers" in out
    manifest.write_text('[{"question_location": "3-07"}]')
    with pytest.raises(CommandError, match="Nothing imported. manifest entry 0"):
        _import(path, "--prompt-set", "fs2", "--holdout-manifest", str(manifest))
    assert not PromptSet.objects.filter(name="fs2").exists()


def test_prompt_set_page_imports_and_lists_unmatched(reviewer_client, human_sample, tmp_path):
    client = reviewer_client
    stranger = {**human_sample[0], "student_id": "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"}
    path = _variant(human_sample, tmp_path, "VF.json", "VF", extra=[stranger])
    with path.open("rb") as upload:
        response = client.post("/grading/judges/prompt-sets/", {"name": "vf", "file": upload}, follow=True)
    assert response.status_code == 200
    page = response.content.decode()
    assert "32 prompts attached to existing answers, 1 records unmatched" in page
    assert "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee" in page and 'id="set-vf"' in page


def _endpoint(llm_server):
    from tests.factories import make_endpoint

    return make_endpoint(llm_server)
