"""Issue 34: the paper's experiment end to end from its released files, as docs/studies.md ("The
paper's experiment, end to end") tells a user to run it: import the release (224 real + 224
synthetic answers) and its VF, write-through-first and few-shot variant files, judge with a
strategy and replay the prompt sets (the scripted judge behind the loopback server), compare them
paired, run the style ablation on the 72 released rewrites, error geometry on the tool's own segments
and on the paper's bundle, step surprisal on 20 of our own segments and on the bundle's steps, then
read the methods report. Commands in this process (--inline), no workers."""
import json
import time
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from annotation.models import Response
from grading.models import PromptSetEntry

pytestmark = pytest.mark.django_db

RELEASE = Path("fixtures/realmath_eval_full")
BUNDLE = RELEASE / "error_segment_bundle"
KEY = "REALMATH_LLM_KEY_TEST"  # the loopback server's key variable (tests/judges/conftest.py)


def call(*args):
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_the_paper_experiment_from_its_files(llm_server, tmp_path):
    started = time.perf_counter()
    # 1. The release and its variant files.
    call("import_realmath", str(RELEASE / "realmath_eval.json"), "--exam", "RealMath-Eval")
    call("import_realmath", str(RELEASE / "realmath_eval_llm_answer.json"), "--exam", "RealMath-Eval")
    assert Response.objects.filter(source="human").count() == 224 == Response.objects.filter(source="synthetic").count()
    for name, file, extra in (("vf", "VF_realmath_eval.json", ()), ("wtf", "write_through_first_realmath_eval.json", ()),
                              ("fewshot", "realmath_eval_fewshot.json",
                               ("--holdout-manifest", str(RELEASE / "realmath_eval_fewshot_manifest.json")))):
        call("import_realmath", str(RELEASE / file), "--prompt-set", name, *extra)
    assert PromptSetEntry.objects.filter(prompt_set__name="vf", holdout=False).count() == 224
    assert PromptSetEntry.objects.filter(prompt_set__name="fewshot", holdout=True).count() == 28

    # 2. A strategy and the three prompt sets replayed, judged by the scripted judge on the human answers.
    server = ("--base-url", llm_server.url, "--model", "scripted-judge", "--api-key-env", KEY, "--temperature", "0")
    call("judge_setting", "add", "--name", "paper-rts", "--kind", "rubric", *server)
    call("judge_setting", "add", "--name", "paper-vf", "--kind", "rubric", "--strategy", "verification-first", *server)
    call("judge_setting", "add", "--name", "paper-ftf", "--kind", "rubric", "--strategy", "follow-through-first", *server)
    call("judge_setting", "add", "--name", "paper-fewshot", "--kind", "rubric", "--strategy", "few-shot",
         "--example-source", "human", *server)
    for name in ("vf", "wtf", "fewshot"):
        call("judge_setting", "add", "--name", f"paper-replay-{name}", "--kind", "replay", "--prompt-set", name, *server)
    settings = ("paper-rts", "paper-vf", "paper-ftf", "paper-fewshot", "paper-replay-vf", "paper-replay-wtf", "paper-replay-fewshot")
    for name in settings:
        call("run_judges", "--setting", name, "--source", "human", "--inline")
    judged = time.perf_counter()

    # 3. Paired comparison: the few-shot replay's 28 hold-outs are left out of its pairs.
    compared = json.loads(call("compare_settings", "paper-rts", "paper-replay-vf", "paper-replay-fewshot",
                               "paper-fewshot", "paper-ftf", "--format", "json", "--bootstrap", "200"))
    pairs = {(p["a_label"], p["b_label"]): p for p in compared["pairs"]}
    assert pairs[("paper-rts v1", "paper-replay-vf v1")]["n_common"] == 224
    assert pairs[("paper-rts v1", "paper-ftf v1")]["n_common"] == 224  # follow-through-first judged every human answer
    few = pairs[("paper-rts v1", "paper-replay-fewshot v1")]
    assert (few["n_common"], few["n_holdout_excluded"]) == (196, 28)
    own = pairs[("paper-rts v1", "paper-fewshot v1")]  # the strategy's own examples are never judged nor counted
    assert own["n_holdout_excluded"] > 0 and own["n_common"] + own["n_holdout_excluded"] == 224

    # 4. The style ablation on the 72 hard cases, as released; flagged rewrites judged in a second analysis.
    out = call("style_ablation", "import", str(RELEASE / "realmath_eval_gemini3pro_hard_cases_ge2_style_transferred_72.json"))
    assert "72 made" in out
    ablation = json.loads(call("style_ablation", "run", "--setting", "paper-rts", "--include-flagged", "--bootstrap", "200",
                               "--inline", "--format", "json"))
    assert ablation["n_rewrites_judged"] + ablation["n_flagged_judged"] == 72

    # 5. Error geometry on the tool's own segments of the release and on the paper's bundle as released
    # (the group from each file's name); step surprisal on 20 of our own segments and on the bundle's steps.
    lexical = ("--lexical", "--bootstrap", "0", "--permutations", "50", "--no-clusters", "--inline", "--format", "json")
    t0 = time.perf_counter()
    ours = json.loads(call("error_geometry", "--exam", "RealMath-Eval", "--limit", "120", *lexical))
    assert ours["counts"]["human"] == 60 == ours["counts"]["synthetic"]  # 120 segments taken in turn from each group
    t1 = time.perf_counter()
    theirs = json.loads(call("error_geometry", "--segments-in", str(BUNDLE / "human_error_segments.jsonl"),
                             "--segments-in", str(BUNDLE / "llm_error_segments.jsonl"), *lexical))
    assert (theirs["counts"]["human"], theirs["counts"]["synthetic"]) == (278, 328)
    t2 = time.perf_counter()
    steps = json.loads(call("step_surprisal", "--exam", "RealMath-Eval", "--limit", "20", "--base-url", llm_server.url,
                            "--model", "causal-test", "--api-key-env", KEY, "--bootstrap", "0", "--inline", "--format", "json"))
    assert steps["study"] == "step_surprisal" and (steps["counts"]["segments"], steps["counts"]["failed"]) == (20, 0)
    assert steps["groups"]["human"]["transitions"] > 0 and steps["groups"]["synthetic"]["transitions"] > 0
    assert steps["groups"]["human"]["segments"] + steps["groups"]["synthetic"]["segments"] == 20
    t3 = time.perf_counter()
    surprisal = json.loads(call("step_surprisal", "--base-url", llm_server.url, "--model", "causal-test",
                                "--api-key-env", KEY, "--segments-in", str(BUNDLE / "human_error_steps_step_split.jsonl"),
                                "--segments-in", str(BUNDLE / "llm_error_steps_step_split.jsonl"), "--limit", "20",
                                "--bootstrap", "0", "--inline", "--format", "json"))
    assert surprisal["study"] == "step_surprisal" and surprisal["groups"]["human"]["transitions"] > 0
    studied = time.perf_counter()

    # 6. The methods report: every setting, the prompt sets named, the pairs, each study, the geometry run chosen.
    report = tmp_path / "report.md"
    reported = time.perf_counter()
    call("methods_report", "--format", "markdown", "--bootstrap", "200", "--geometry-run", str(ours["run"]),
         "--output", str(report))
    reported = time.perf_counter() - reported
    text = report.read_text(encoding="utf-8")
    data = json.loads((tmp_path / "report.md.json").read_text(encoding="utf-8"))
    assert {j["name"] for j in data["judges"]} == set(settings)
    assert "prompt set vf (VF_realmath_eval.json)" in text
    assert "prompt set fewshot (realmath_eval_fewshot.json)" in text
    assert data["comparison"]["baseline"] == "paper-rts v1" and len(data["comparison"]["pairs"]) == len(settings) - 1
    assert f"Error geometry: run {ours['run']}, chosen for this report." in text  # ours, not the newer bundle's
    [style_run] = data["style_ablation"]["runs"]
    assert style_run["run"] == ablation["run"] and style_run["with_flagged"]["n_flagged"] == ablation["n_flagged_judged"]
    assert "Second analysis: flagged rewrites included" in text and "Style ablation: not run." not in text
    assert f"Step surprisal: run {surprisal['run']}, the newest analysed run." in text
    assert data["dataset"]["answers"]["total"] == 448
    elapsed = time.perf_counter() - started
    print(f"judged in {judged - started:.1f} s, studies {studied - judged:.1f} s (style {t0 - judged:.1f}, ours "
          f"{t1 - t0:.1f}, bundle {t2 - t1:.1f}, surprisal ours {t3 - t2:.1f}, bundle's {studied - t3:.1f}), report {reported:.1f} s, all in {elapsed:.1f} s")
