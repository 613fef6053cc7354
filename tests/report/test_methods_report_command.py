"""manage.py methods_report over 224 human answers of a RealMath-Eval import, judged by a setting
made with judge_setting against the loopback LLM server."""
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Label, Response
from grading.models import JudgeResult

from .conftest import N_ANSWERS
from .helpers import untraced_figures

pytestmark = pytest.mark.django_db


def call(*args):
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.fixture
def judged(realmath_224, llm_server):
    """The 224 answers judged by 'report-rubric' (the server's scripted rubric scores), and two
    experts' labels on a few answers so agreement has pairs."""
    call("judge_setting", "add", "--name", "report-rubric", "--kind", "rubric", "--base-url", llm_server.url,
         "--model", "scripted-judge", "--api-key-env", "", "--temperature", "0")
    call("run_judges", "--setting", "report-rubric", "--inline")
    assert JudgeResult.objects.filter(status="ok").count() == N_ANSWERS
    from tests.conftest import make_user

    experts = [make_user("expert-a", "annotator"), make_user("expert-b", "annotator")]
    for i, response in enumerate(Response.objects.order_by("pk")[:12]):
        gold = float(response.gold_score)
        for expert, delta in zip(experts, (0, i % 3)):
            Label.objects.create(response=response, annotator=expert, total=max(gold - delta, 0), submitted=True)
    return llm_server


def test_report_over_224_answers_leaves_metrics_unchanged(judged, tmp_path):
    metrics_before = call("metrics", "--format", "json")
    calls_before = judged.request_count

    out = call("methods_report", "--format", "markdown", "--output", str(tmp_path / "report.md"))
    assert "Appendix:" in out
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    data = json.loads((tmp_path / "report.md.json").read_text(encoding="utf-8"))
    assert data["dataset"]["answers"]["total"] == N_ANSWERS
    assert {row["source"]: row["n"] for row in data["dataset"]["answers"]["by_source"]}["human"] == N_ANSWERS
    assert data["dataset"]["experts"] == 2
    labels = data["dataset"]["labels"]  # the experts' own labels, counted apart from imported golds
    assert labels["by_experts"] == 24
    assert labels["imported"] == Label.objects.filter(is_imported=True, submitted=True).count()
    assert labels["total"] == labels["by_experts"] + labels["imported"]
    [judge] = data["judges"]
    assert (judge["name"], judge["model"], judge["temperature"]) == ("report-rubric", "scripted-judge", 0.0)
    assert len(judge["prompt_hash"]) == 64 and judge["overall"]["n"] == N_ANSWERS
    info = judge["overall"]["uncertainty"]  # intervals over whole questions (core.uncertainty)
    assert info["unit"] == "question" and info["seed"] == 0
    if info["clusters"] >= info["min_clusters"]:
        assert judge["overall"]["mse_ci"][0] <= judge["overall"]["mse"] <= judge["overall"]["mse_ci"][1]
        assert judge["overall"]["pearson_ci"][0] is not None
    else:
        assert judge["overall"]["mse_ci"] == [None, None]
        assert info["note"] == f"not estimable: {info['clusters']} question{'s' if info['clusters'] != 1 else ''}"
    assert data["agreement"]["label_pairs"] > 0 and data["agreement"]["within_one_ci"][1] is not None
    for heading in ("## Methods", "## Data", "## Expert agreement", "## Judge settings", "## Judge versus gold",
                    "## Disagreement categories", "## Perturbation probes"):
        assert heading in text
    assert "No probes run." in text
    assert judge["prompt_hash_short"] in text and "224" in text
    assert untraced_figures(text, data) == []

    call("methods_report", "--setting", "report-rubric", "--format", "latex", "--output", str(tmp_path / "report.tex"))
    latex = (tmp_path / "report.tex").read_text(encoding="utf-8")
    latex_data = json.loads((tmp_path / "report.tex.json").read_text(encoding="utf-8"))
    assert "\\section*{Methods}" in latex and "\\begin{tabular}" in latex and "report-rubric" in latex
    assert "FR\\_2" in latex and "95\\%" in latex
    assert untraced_figures(latex, latex_data) == []
    assert latex_data["judges"][0]["overall"] == data["judges"][0]["overall"]  # seeded: the same figures

    assert call("metrics", "--format", "json") == metrics_before
    assert judged.request_count == calls_before  # the report calls no judge


def test_stdout_embeds_the_appendix(judged):
    out = call("methods_report", "--format", "markdown", "--bootstrap", "50")
    text, appendix = out.split("## Appendix (JSON)")
    data = json.loads(appendix.strip().removeprefix("```json").removesuffix("```"))
    assert data["bootstrap_resamples"] == 50
    assert untraced_figures(text, data) == []
    latex = call("methods_report", "--format", "latex", "--bootstrap", "0")
    body = latex.split("\\begin{verbatim}")[1].split("\\end{verbatim}")[0]
    overall = json.loads(body)["judges"][0]["overall"]
    assert "mse_ci" not in overall and overall["pearson_ci"] == [None, None]


def test_refusals(db, tmp_path):
    with pytest.raises(CommandError, match="No judge setting named 'nope'"):
        call("methods_report", "--setting", "nope")
    with pytest.raises(CommandError, match="--setting-version needs --setting"):
        call("methods_report", "--setting-version", "2")
    with pytest.raises(CommandError, match="--bootstrap"):
        call("methods_report", "--bootstrap", "-1")
    with pytest.raises(CommandError, match="Cannot write"):
        call("methods_report", "--output", str(tmp_path / "missing-dir" / "r.md"))


def test_empty_database_still_reports(db):
    out = call("methods_report", "--format", "markdown")
    assert "No judge setting has results yet." in out and "No probes run." in out
