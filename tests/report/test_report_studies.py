"""Issue 34: the methods report covers every study (style ablation, OCR attribution, anchoring,
rubric re-judging) with a method paragraph and a "not run" line until the study has run; names
prompt sets as such; scores answer-checking settings against the gold answer. Every printed
figure is a value of the appendix, in Markdown and LaTeX."""
import pytest

from annotation.labelling.experiment import anchor_shown
from annotation.models import Label, Response, content_hash
from grading.models import JudgeSetting, PromptSet, PromptSetEntry
from grading.report import document
from grading.report import selectors as report
from studies import style
from studies.models import DerivedAnswer, ProbeItem, ProbeRun
from tests.conftest import make_user
from tests.factories import make_question, make_responses, make_results, make_stored_setting, set_gold

from .helpers import untraced_figures

pytestmark = pytest.mark.django_db

NOT_RUN = ("Style ablation: not run.", "OCR attribution: not run.", "Anchoring experiment: not run.",
           "Rubric re-judging: not run.", "Error geometry: not run (no analysed run).")


def _texts(data):
    return {fmt: document.build(data, fmt) for fmt in document.FORMATS}


def _traced(data):
    for fmt, text in _texts(data).items():
        assert untraced_figures(text, data) == [], fmt


def test_every_study_says_not_run_with_its_method(judged):
    data = report.report_data(bootstrap=0)
    markdown = document.build(data, "markdown")
    for line in NOT_RUN:
        assert line in markdown
    for heading in ("## Style ablation", "## OCR-vs-judge attribution", "## Anchoring experiment", "## Rubric re-judging",
                    "## Error geometry and step surprisal"):
        assert heading in markdown
    assert "rewritten into a normalised textbook style" in markdown and "raw OCR" in markdown
    assert data["style_ablation"]["runs"] == [] and data["ocr_attribution"]["settings"] == []
    assert data["anchoring"]["experiments"] == [] and data["rubric_rejudge"]["rows"] == []
    _traced(data)


def _derived(response, probe, text="changed"):
    return DerivedAnswer.objects.create(response=response, probe=probe, seed=0 if probe == style.PROBE else 0,
                                        source_hash=content_hash(response.transcript), original_text=response.transcript,
                                        text=text, change={"excluded": False, "flags": {}})


def test_style_ablation_and_ocr_attribution_sections():
    question = make_question("Study problem.", location="S-1")
    answers = make_responses(question, 6) + make_responses(question, 4, source="synthetic", start=100)
    set_gold(answers, [5] * 10)
    setting = make_stored_setting("study-judge", kind="rubric")
    make_results(setting, answers, [5] * 10)
    run = ProbeRun.objects.create(setting=setting, probes=[style.PROBE], status="done", n_items=10,
                                  skipped={f"{style.PROBE} (flagged)": 2})
    for i, answer in enumerate(answers):  # before: on gold; after the rewrite: two points more on six answers
        ProbeItem.objects.create(run=run, derived=_derived(answer, style.PROBE), probe=style.PROBE, state="ok",
                                 original_score=5, derived_score=7 if i % 5 < 3 else 5)
    ocr = ProbeRun.objects.create(setting=setting, probes=["raw-ocr"], status="done", n_items=3)
    for answer, verified, raw in zip(answers[:3], (5, 5, 8), (9, 5, 8)):  # ocr, nothing, judge
        ProbeItem.objects.create(run=ocr, derived=_derived(answer, "raw-ocr"), probe="raw-ocr", state="ok",
                                 original_score=verified, derived_score=raw)

    data = report.report_data(bootstrap=200)
    [figures] = data["style_ablation"]["runs"]
    assert (figures["run"], figures["n_rewrites_judged"], figures["n_flagged_excluded"]) == (run.pk, 10, 2)
    assert set(figures["groups"]) == {"all", "human", "synthetic"}
    mae = figures["groups"]["all"]["measures"]["mae"]
    assert (mae["a"], mae["b"], mae["difference"]) == (0.0, pytest.approx(1.2), pytest.approx(1.2))
    assert data["ocr_attribution"]["settings"] == [{"setting": "study-judge v1", "n": 3, "ocr": 1, "judge": 1, "both": 0}]
    markdown = document.build(data, "markdown")
    assert "Style ablation: not run." not in markdown and "OCR attribution: not run." not in markdown
    assert f"Run {run.pk} (study-judge v1): 10 rewrites judged, 2 flagged and left out" in markdown
    assert "| study-judge v1 | 3 | 1 | 1 | 0 |" in markdown
    _traced(data)


def test_anchoring_experiment_section():
    question = make_question("Anchored problem.", exam_name="Anchored exam", location="A-1")
    answers = make_responses(question, 12)
    experts = [make_user(f"anchor-{i}", "annotator") for i in range(3)]
    for response in answers:
        for k, expert in enumerate(experts):
            shown = anchor_shown(7, response.pk, expert.pk)
            Label.objects.create(response=response, annotator=expert, total=6 if shown else 3 + k, submitted=True,
                                 anchoring={"shown": shown, "score": 6, "setting": "anchor-judge", "seed": 7})
    data = report.report_data(bootstrap=100)
    [experiment] = data["anchoring"]["experiments"]
    assert (experiment["exam"], experiment["setting"], experiment["experiment_seed"]) == ("Anchored exam", "anchor-judge", 7)
    shown, hidden = experiment["arms"]["shown"], experiment["arms"]["hidden"]
    assert shown["n_labels"] + hidden["n_labels"] == 36 and shown["abs_diff"] == 0
    assert hidden["abs_diff"] == pytest.approx(2.0, abs=1.0)
    markdown = document.build(data, "markdown")
    assert "Exam Anchored exam, setting anchor-judge, seed 7:" in markdown and "| mean \\|expert − judge\\| |" in markdown
    _traced(data)


def test_rubric_rejudge_section():
    question = make_question("Edited problem.", location="E-1")
    answers = make_responses(question, 5)
    set_gold(answers, [4] * 5)
    setting = make_stored_setting("rejudge-judge", kind="rubric")
    make_results(setting, answers, [7] * 5, rubric_version=1, key_prefix="old")
    make_results(setting, answers[:4], [5] * 4, rubric_version=2, key_prefix="new")
    cas = make_stored_setting("rejudge-cas", kind=JudgeSetting.Kind.CAS_FINAL_ANSWER)  # reads no rubric: left out
    make_results(cas, answers, [1] * 5, rubric_version=1, key_prefix="cas")
    type(question).objects.filter(pk=question.pk).update(rubric_version=2)
    data = report.report_data(bootstrap=0)
    [row] = data["rubric_rejudge"]["rows"]
    assert row["setting"] == "rejudge-judge v1" and row["rubric_version"] == 2 and row["not_rejudged"] == 1
    assert (row["before"]["n"], row["before"]["mse"], row["after"]["n"], row["after"]["mse"]) == (5, 9.0, 4, 1.0)
    assert (f"| E-1 · question #{question.pk} | 2 | rejudge-judge v1 | 5 | 9.000 | 1.000 | 4 | 1.000 | 0.000 | 1 |"
            in document.build(data, "markdown"))
    _traced(data)


def test_replays_are_named_by_their_prompt_set_and_answer_checks_by_accuracy():
    question = make_question("Answer problem.", location="F-1", gold_answer="x = 2")
    no_gold = make_question("Proof problem.", location="F-2")
    answers = make_responses(question, 8) + make_responses(question, 4, source="synthetic", start=50)
    proofs = make_responses(no_gold, 3, start=90)
    set_gold(answers + proofs, [3] * 15)
    vf = PromptSet.objects.create(name="vf", file_name="VF_realmath_eval.json")
    few = PromptSet.objects.create(name="fewshot", file_name="realmath_eval_fewshot.json")
    PromptSetEntry.objects.bulk_create(PromptSetEntry(prompt_set=few, response=a, holdout=i < 2) for i, a in enumerate(answers))
    make_results(make_stored_setting("replay-vf", kind="replay", prompt_set=vf), answers, [3] * 12)
    make_results(make_stored_setting("replay-fewshot", kind="replay", prompt_set=few), answers, [4] * 12)
    cas = make_stored_setting("cas", kind=JudgeSetting.Kind.CAS_FINAL_ANSWER)
    make_results(cas, answers[:10] + proofs, [1, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 1])  # 7 of 10 right, by source 6/8 and 1/2
    make_results(cas, answers[10:], [None, None], status="invalid", key_prefix="undecided")
    ineq = make_stored_setting("ineq", kind=JudgeSetting.Kind.INEQ_FINAL_ANSWER)  # scored like CAS, against the gold answer
    make_results(ineq, answers[:4] + proofs[:1], [1, 0, 1, 1, 1], key_prefix="ineq")  # 3 of 4 right, 1 without gold

    data = report.report_data(bootstrap=0)
    judges = {j["name"]: j for j in data["judges"]}
    assert judges["replay-vf"]["strategy"] == "prompt-set" and judges["replay-vf"]["prompt_set"] == "vf"
    assert judges["replay-fewshot"]["prompt_set_holdout"] == 2
    check = judges["cas"]["answer_check"]
    assert judges["cas"]["overall"] is None
    assert (check["n"], check["correct"], check["n_undecided"], check["n_without_gold_answer"]) == (10, 7, 2, 3)
    assert check["accuracy"] == pytest.approx(0.7) and check["ci"] == [None, None]  # one question: no interval
    assert {row["source"]: (row["n"], row["correct"]) for row in check["by_source"]} == {"human": (8, 6), "synthetic": (2, 1)}
    ineq = judges["ineq"]["answer_check"]
    assert judges["ineq"]["overall"] is None and (ineq["n"], ineq["correct"], ineq["n_without_gold_answer"]) == (4, 3, 1)
    markdown = document.build(data, "markdown")
    assert "| replay-vf v1 | prompt set vf (VF_realmath_eval.json) |" in markdown
    assert "| replay-fewshot v1 | prompt set fewshot (realmath_eval_fewshot.json) | — | fewshot | — | — | — | 2 |" in markdown
    assert "reason-then-score" not in markdown.split("## Prompt strategies")[1].split("##")[0]
    assert f"| cas v1 | all answers | 10 | 7 | 0.700 ({check['ci_note']}) | 2 | 3 |" in markdown
    assert "| cas v1 |" not in markdown.split("## Judge versus gold")[1].split("##")[0]  # not against gold points
    assert "| ineq v1 | all answers | 4 | 3 | 0.750 " in markdown
    assert "| ineq v1 |" not in markdown.split("## Judge versus gold")[1].split("##")[0]
    _traced(data)
    assert Response.objects.count() == 15
