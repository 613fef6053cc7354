"""The report text: sections as functions, the probe-rates seam (the studies' report_section hook), escaping, figures traceable to the appendix."""
import pytest

from annotation.models import Exam
from grading.report import document
from grading.report import selectors as report
from studies import report_section as studies_report
from tests.factories import make_question, make_responses, make_results, make_stored_setting, set_gold

from .helpers import untraced_figures

pytestmark = pytest.mark.django_db

FAKE_PROBES = {
    "drop-final-answer": {"n": 12, "detected": 9, "rate": 0.75, "ci": [0.4677, 0.9111]},
    "notation-swap": {"n": 12, "detected": 1, "rate": 0.0833, "ci": [0.0149, 0.3539]},
}


@pytest.fixture
def awkward(db):
    """Names full of LaTeX and Markdown specials, one judge with results against gold."""
    question = make_question(exam_name="Exam_2024 & 50% #1 {draft} ~x^2 | a<b")
    responses = make_responses(question, 6)
    set_gold(responses, [1, 2, 3, 4, 5, 6])
    setting = make_stored_setting(name="judge_a&b%1", model="model_$x#2")
    make_results(setting, responses, [1, 3, 3, 6, 5, 2])
    return setting


def test_probe_section_uses_the_seam(awkward, monkeypatch):
    assert studies_report.probe_rates_for(awkward) == {}
    data = report.report_data(bootstrap=100)
    assert "No probes run." in document.build(data, "markdown", [studies_report.probes_section])

    monkeypatch.setattr(studies_report, "probe_rates_for", lambda setting, seed=0: FAKE_PROBES)
    data = report.report_data(bootstrap=100)
    assert data["judges"][0]["probes"] == FAKE_PROBES
    text = document.build(data, "markdown", [studies_report.probes_section])
    assert "No probes run." not in text
    assert "| drop-final-answer | 12 | 9 | 0.750 [0.468, 0.911] |" in text
    assert untraced_figures(text, data) == []
    latex = document.build(data, "latex")
    assert "drop-final-answer" in latex and untraced_figures(latex, data) == []


def test_sections_are_a_list_of_functions(awkward):
    data = report.report_data(bootstrap=0)

    def custom(data):
        return document.Section("Custom", [f"{document.number(data['n_settings'])} setting(s)."])

    text = document.build(data, "markdown", [custom, lambda data: None])
    assert text.splitlines()[:5] == ["# Methods report", "", "## Custom", "", "1 setting(s)."]
    with pytest.raises(ValueError, match="Unknown format"):
        document.build(data, "html")


def test_latex_escapes_names(awkward):
    data = report.report_data(bootstrap=100)
    latex = document.build(data, "latex")
    assert r"Exam\_2024 \& 50\% \#1 \{draft\} \textasciitilde{}x\textasciicircum{}2 \textbar{} a\textless{}b" in latex
    assert r"judge\_a\&b\%1" in latex and r"model\_\$x\#2" in latex
    assert "judge_a&b%1" not in latex and "Exam_2024 &" not in latex
    assert untraced_figures(latex, data) == []
    markdown = document.build(data, "markdown")
    assert r"Exam_2024 & 50% #1 {draft} ~x^2 \| a<b" in markdown  # the pipe would split the cell
    assert untraced_figures(markdown, data) == []


def test_figures_match_the_review_metrics(awkward):
    from grading.review import metrics

    data = report.report_data(bootstrap=200, seed=4)
    overall = data["judges"][0]["overall"]
    expected = metrics.score_metrics([1, 3, 3, 6, 5, 2], [1, 2, 3, 4, 5, 6])
    assert overall["mse"] == pytest.approx(expected.mse) and overall["fr_2"] == pytest.approx(expected.fr[2])
    assert overall["pearson"] == pytest.approx(expected.pearson)
    # six answers of one question: no interval, and the appendix says why (core.uncertainty)
    assert overall["pearson_ci"] == [None, None] and overall["uncertainty"]["note"] == "not estimable: 1 question"
    assert report.report_data(bootstrap=200, seed=4)["judges"] == data["judges"]  # seeded
    assert data["dataset"]["n_exams"] == Exam.objects.count() == 1


def test_untraced_figures_catches_a_made_up_number(awkward):
    data = report.report_data(bootstrap=0)
    text = document.build(data, "markdown") + "\nAn invented figure: 0.123456 and 987.\n"
    assert set(untraced_figures(text, data)) >= {"0.123456", "987"}


@pytest.mark.django_db
def test_a_cas_only_setting_lists_no_temperature():
    from grading.judges.selectors import setting_summary

    cas = make_stored_setting("cas-only", kind="cas_final_answer", temperature=0.7, max_tokens=8192)
    rubric = make_stored_setting("rubric", kind="rubric", temperature=0.7)
    assert setting_summary(cas)["temperature"] is None and setting_summary(cas)["max_tokens"] is None
    assert setting_summary(rubric)["temperature"] == 0.7
