"""Issue 36: the accuracy of an answer-checking setting (the CAS, the IneqMath final-answer judge)
in the methods report gets a question-clustered interval (core.uncertainty.cluster_bootstrap,
drawn with the report's resamples and seed), none from fewer than five questions, where before it
was a Wilson interval on answers that ignored the question and the seed."""
import pytest

from core import uncertainty
from grading.models import JudgeSetting
from grading.report import document
from grading.report import selectors as report
from tests.factories import make_question, make_responses, make_results, make_stored_setting, set_gold

pytestmark = pytest.mark.django_db


def _cas_on(questions, right_of):
    """A CAS setting's verdicts on six answers of each question: right_of(q) of them right."""
    answers, verdicts, clusters = [], [], []
    for q, question in enumerate(questions):
        mine = make_responses(question, 6, start=100 * q)
        answers += mine
        verdicts += [1] * right_of(q) + [0] * (6 - right_of(q))
        clusters += [question.pk] * 6
    set_gold(answers, [3] * len(answers))
    make_results(make_stored_setting("cas", kind=JudgeSetting.Kind.CAS_FINAL_ANSWER), answers, verdicts)
    return verdicts, clusters


def _check(data):
    return next(j for j in data["judges"] if j["name"] == "cas")["answer_check"]


def test_one_question_gives_no_interval():
    question = make_question("Answer problem.", location="F-1", gold_answer="x = 2")
    _cas_on([question], lambda q: 4)
    data = report.report_data(bootstrap=200, seed=3)
    check = _check(data)
    assert (check["n"], check["correct"], check["questions"]) == (6, 4, 1)
    assert check["ci"] == [None, None] and check["ci_note"] == "not estimable: 1 question"
    markdown = document.build(data, "markdown")
    assert "| cas v1 | all answers | 6 | 4 | 0.667 (not estimable: 1 question) | 0 | 0 |" in markdown
    assert "Wilson interval at an accuracy of 0 or 1" in markdown and "cluster bootstrap of whole questions" in markdown


def test_eight_questions_clustered_and_seeded():
    questions = [make_question(f"Answer problem {q}.", location=f"F-{q}", gold_answer=f"x = {q}") for q in range(8)]
    verdicts, clusters = _cas_on(questions, lambda q: q % 7)  # 0..6 right of 6: strongly clustered
    by_seed = {seed: _check(report.report_data(bootstrap=300, seed=seed)) for seed in (1, 2, 3)}
    for seed, check in by_seed.items():
        direct = uncertainty.cluster_bootstrap({"correct": [float(v) for v in verdicts]}, clusters, proportions={"correct"},
                                               n_resamples=300, seed=seed)["correct"]
        assert direct.estimable and check["ci"] == direct.bounds() and check["ci_note"] == ""
        assert check["ci_method"] == uncertainty.CLUSTER_BOOTSTRAP and check["questions"] == 8
        assert check["by_source"][0]["ci"] == check["ci"]  # every answer human: the same draws
    assert len({tuple(check["ci"]) for check in by_seed.values()}) > 1  # the seed changes it
    wilson = uncertainty.wilson(sum(verdicts), len(verdicts))
    assert by_seed[1]["ci"][1] - by_seed[1]["ci"][0] > 1.3 * (wilson[1] - wilson[0])  # wider than on answers


def test_a_probe_rate_without_an_interval_says_why(monkeypatch):
    """The probe rows of the report print the reason too (one question's 4 of 4: no Wilson interval)."""
    from studies import report_section as studies_report

    question = make_question("Answer problem.", location="F-1", gold_answer="x = 2")
    answers = make_responses(question, 4)
    set_gold(answers, [3] * 4)
    make_results(make_stored_setting("judge-a"), answers, [3] * 4)
    probes = {"drop-final-answer": {"n": 4, "detected": 4, "rate": 1.0, "ci": None, "ci_note": "not estimable: 1 question"}}
    monkeypatch.setattr(studies_report, "probe_rates_for", lambda setting, seed=0: probes)
    data = report.report_data(bootstrap=50)
    text = document.build(data, "markdown", [studies_report.probes_section])
    assert "| drop-final-answer | 4 | 4 | 1.000 (not estimable: 1 question) |" in text
    assert document.with_interval_or_note(0.5, [0.25, 0.75], "") == "0.500 [0.250, 0.750]"
