"""Issue 34: the paper's few-shot files read as released (fixtures/realmath_eval_full/, unchanged): the
hold-outs are the manifest's `holdout_source_indices` into `realmath_eval.json`, 28 of them, mapped by source
index (never by (student id, question location), which repeats in the release), and never judged."""
import json
import shutil
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.importers import import_realmath
from annotation.models import Response
from grading.judges import prompt_sets
from grading.judges.services.selection import selected_ids
from grading.models import JudgeSetting, PromptSet
from tests.conftest import ROOT

pytestmark = pytest.mark.django_db

FULL = ROOT / "fixtures" / "realmath_eval_full"


def _copy(tmp_path, name, as_name=None):
    target = tmp_path / (as_name or name)
    shutil.copyfile(FULL / name, target)
    return target


@pytest.fixture
def release(tmp_path):
    """The full release (224 human + 224 synthetic answers) imported from copies of the released files."""
    for name in ("realmath_eval.json", "realmath_eval_llm_answer.json"):
        _load(_copy(tmp_path, name))
    return json.loads((FULL / "realmath_eval.json").read_text(encoding="utf-8"))


def _load(path):
    with path.open("rb") as stream:
        import_realmath(stream, path.name)


def _import(path, *args):
    out = StringIO()
    call_command("import_realmath", str(path), *args, stdout=out)
    return out.getvalue()


def test_released_few_shot_file_with_its_manifest_gives_the_28_hold_outs_by_source_index(release, tmp_path):
    manifest = json.loads((FULL / "realmath_eval_fewshot_manifest.json").read_text(encoding="utf-8"))
    out = _import(_copy(tmp_path, "realmath_eval_fewshot.json"), "--prompt-set", "fewshot",
                  "--holdout-manifest", str(_copy(tmp_path, "realmath_eval_fewshot_manifest.json")))
    assert "196 records, 196 prompts attached to existing answers, 0 unmatched, 0 without a prompt, " \
           "28 hold-out answers" in out
    fewshot = PromptSet.objects.get(name="fewshot")
    held = Response.objects.filter(pk__in=fewshot.entries.filter(holdout=True).values("response_id"))
    assert held.count() == 28 and set(held.values_list("source", flat=True)) == {"human"}
    # each hold-out is the source file's record at its index: same problem, same student, same text
    by_index = {r.import_index: r for r in held.select_related("question")}
    assert sorted(by_index) == manifest["holdout_source_indices"]
    for index, answer in by_index.items():
        record = release[index]
        assert (answer.student_id, answer.question.statement, answer.transcript) == (
            record["student_id"], record["problem_statement"], record["student_response"])
    # the (student, location) pair is ambiguous in the release; the index is not
    pairs = [(r["student_id"], r["question_location"]) for r in release]
    repeated = [i for i in manifest["holdout_source_indices"] if pairs.count(pairs[i]) > 1]
    for index in repeated:
        twins = Response.objects.filter(student_id=pairs[index][0], question__location=pairs[index][1], source="human")
        assert twins.count() > 1 and [a.pk for a in twins if a.pk in {h.pk for h in held}] == [by_index[index].pk]
    assert fewshot.report["holdout_rule"] == "manifest-indices"
    assert fewshot.report["holdout_source_file"] == "realmath_eval.json"
    # a replay setting sending the set never judges a hold-out: 448 answers, 28 left out
    setting = JudgeSetting.objects.create(name="fs-replay", kind="replay", model="m", prompt_set=fewshot)
    assert len(selected_ids(setting)) == 448 - 28


def test_the_synthetic_few_shot_pair_has_no_hold_outs(release, tmp_path):
    out = _import(_copy(tmp_path, "realmath_eval_llm_answer_fewshot.json"), "--prompt-set", "fewshot-llm",
                  "--holdout-manifest", str(_copy(tmp_path, "realmath_eval_llm_answer_fewshot_manifest.json")))
    assert "196 prompts attached to existing answers, 0 unmatched" in out and "0 hold-out answers" in out
    entries = PromptSet.objects.get(name="fewshot-llm").entries
    assert set(Response.objects.filter(pk__in=entries.values("response_id")).values_list("source", flat=True)) == {"synthetic"}


def test_source_indices_need_the_source_file_when_its_answers_came_under_another_name(tmp_path):
    _load(_copy(tmp_path, "realmath_eval.json", "renamed.json"))
    fewshot = _copy(tmp_path, "realmath_eval_fewshot.json")
    manifest = _copy(tmp_path, "realmath_eval_fewshot_manifest.json")
    with pytest.raises(CommandError, match=r"Hold-out source index 9: no answer of these questions was imported from "
                                           r"realmath_eval.json at that index; give the source file"):
        _import(fewshot, "--prompt-set", "fs", "--holdout-manifest", str(manifest))
    assert not PromptSet.objects.filter(name="fs").exists()
    with pytest.raises(CommandError, match="The manifest's source file is realmath_eval.json, not renamed.json"):
        _import(fewshot, "--prompt-set", "fs", "--holdout-manifest", str(manifest),
                "--holdout-source", str(tmp_path / "renamed.json"))
    out = _import(fewshot, "--prompt-set", "fs", "--holdout-manifest", str(manifest),
                  "--holdout-source", str(_copy(tmp_path, "realmath_eval.json")))
    assert "28 hold-out answers" in out
    held = Response.objects.filter(pk__in=PromptSet.objects.get(name="fs").entries.filter(holdout=True).values("response_id"))
    assert sorted(held.values_list("import_index", flat=True)) == json.loads(manifest.read_text())["holdout_source_indices"]


def test_absent_answers_are_only_those_of_the_file_source_not_synthetic_ones(release, tmp_path):
    out = _import(_copy(tmp_path, "realmath_eval_fewshot.json"), "--prompt-set", "fs-absent", "--holdout-absent")
    assert "28 hold-out answers" in out  # not 252: the synthetic answers are not missing from a human file


def test_a_student_and_location_list_naming_two_problems_is_refused(release, tmp_path):
    twin = next(r for r in release if sum(1 for o in release if (o["student_id"], o["question_location"])
                                          == (r["student_id"], r["question_location"])) > 1)
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps([{"student_id": twin["student_id"], "question_location": twin["question_location"]}]))
    with pytest.raises(CommandError, match=r"names answers to 2 different questions; use the release's manifest"):
        _import(_copy(tmp_path, "realmath_eval_fewshot.json"), "--prompt-set", "fs", "--holdout-manifest", str(listed))


def test_bad_release_manifests_are_refused_with_the_reason():
    with pytest.raises(prompt_sets.ImportFormatError, match="holdout_count 3 but lists 2"):
        prompt_sets.read_manifest({"source_file": "a.json", "holdout_count": 3, "holdout_source_indices": [1, 2]})
    with pytest.raises(prompt_sets.ImportFormatError, match="whole numbers"):
        prompt_sets.read_manifest({"source_file": "a.json", "holdout_source_indices": [1, "2"]})
    with pytest.raises(prompt_sets.ImportFormatError, match="no source_file"):
        prompt_sets.read_manifest({"holdout_source_indices": [1]})
    assert prompt_sets.read_manifest({"source_file": "E:\\x\\data\\realmath_eval.json", "holdout_source_indices": [4]}) \
        == ("indices", "realmath_eval.json", [4])
