"""Issue 27: a comparison leaves out the hold-outs of every setting compared (few-shot examples, a prompt set's
calibration answers) and says how many; a result a setting somehow has on its own example never counts."""
import pytest
from django.urls import reverse

from grading.review import selectors
from tests.factories import make_question, make_responses, make_results, make_stored_setting, set_gold

pytestmark = pytest.mark.django_db


def test_hold_outs_are_excluded_from_the_pairs_and_counted(reviewer_client):
    answers = []
    for q in range(2):
        question = make_question(f"Problem {q}.", location=f"H-0{q}")
        answers += make_responses(question, 6, source="human", start=10 * q)
    set_gold(answers, [5] * len(answers))
    a = make_stored_setting("rts")
    b = make_stored_setting("few", kind="rubric", strategy="few-shot",
                            calibration={"holdout": [answers[0].pk, answers[6].pk], "examples": {}})
    make_results(a, answers, [7] * len(answers))
    # B "judged" its own examples exactly (as a leaking judge would): they must not flatter it
    make_results(b, answers, [5 if i in (0, 6) else 8 for i in range(len(answers))])
    data = selectors.compare_settings([a, b], n_resamples=50)
    pair = data["pairs"][0]
    assert (pair["n_common"], pair["n_holdout_excluded"]) == (10, 2)
    assert pair["overall"]["measures"]["mae"]["b"] == pytest.approx(3.0)  # without the two exact hold-outs
    assert [s["n_holdout"] for s in data["settings"]] == [0, 2]
    page = reviewer_client.get(reverse("grading:review_compare") + f"?setting={a.pk}&setting={b.pk}").content.decode()
    assert "2 hold-out answers (few-shot examples or a prompt set's calibration answers of either setting) excluded" in page


def test_a_settings_hold_outs_never_count_in_its_metrics_or_queue(db):
    from grading.review import selectors

    question = make_question("Metrics problem.", location="H-09")
    answers = make_responses(question, 5)
    set_gold(answers, [5] * 5)
    few = make_stored_setting("few-m", kind="rubric", strategy="few-shot",
                              calibration={"holdout": [answers[0].pk], "examples": {}})
    make_results(few, answers, [0, 5, 5, 5, 5])  # the example "judged" off by 5
    report = selectors.metrics_report(selectors.Scope(setting=few), bootstrap=0)
    assert report["n_counted"] == 4 and report["overall"]["mse"] == 0.0
    assert not selectors.current_results(selectors.Scope(setting=few)).filter(response=answers[0]).exists()
