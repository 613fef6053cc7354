"""Issue 36: a probe's detection rate (studies.selectors.rate_entry) gets a question-clustered
interval (core.uncertainty.cluster_bootstrap of whole questions), none from fewer than 5 questions
(at a rate of 0 or 1 too), Wilson at 0 or 1 from 5 questions on; pure, no database."""
import numpy as np

from core import uncertainty
from studies.selectors import rate_entry


def _questions(detected_per_question, pairs_per_question):
    """Each pair's question, the detected pairs first (rate_entry's order)."""
    detected = [q for q, d in enumerate(detected_per_question) for _ in range(d)]
    missed = [q for q, d in enumerate(detected_per_question) for _ in range(pairs_per_question - d)]
    return detected + missed


def test_a_rate_inside_0_1_gets_the_clustered_interval():
    per_question = [4, 4, 3, 1, 0, 0, 0, 0, 0, 0]  # 12 of 40 detected, in 4 of 10 questions: clustered
    questions = _questions(per_question, 4)
    entry = rate_entry(40, 12, questions, seed=7)
    assert (entry["n"], entry["detected"], entry["rate"], entry["questions"]) == (40, 12, 0.3, 10)
    hits = np.zeros(40)
    hits[:12] = 1.0
    direct = uncertainty.cluster_bootstrap({"rate": hits}, questions, seed=7, proportions={"rate"})["rate"]
    assert entry["ci"] == direct.bounds() and entry["ci_method"] == uncertainty.CLUSTER_BOOTSTRAP
    assert entry["ci_note"] == "" and entry["ci"][0] < 0.3 < entry["ci"][1]
    wilson = uncertainty.wilson(12, 40)
    assert entry["ci"][1] - entry["ci"][0] > 1.3 * (wilson[1] - wilson[0])  # wider than pairs taken as independent
    assert len({tuple(rate_entry(40, 12, questions, seed=seed)["ci"]) for seed in range(6)}) > 1  # seeded


def test_two_questions_give_no_interval_whatever_the_rate():
    for detected in (3, 0, 8):
        entry = rate_entry(8, detected, _questions([min(detected, 4), max(detected - 4, 0)], 4))
        assert entry["ci"] is None and entry["ci_note"] == "not estimable: 2 questions", detected
        assert entry["questions"] == 2


def test_a_rate_of_0_or_1_over_5_questions_gets_wilson():
    entry = rate_entry(20, 0, _questions([0] * 5, 4))
    assert entry["ci"] == list(uncertainty.wilson(0, 20)) and entry["ci_method"] == uncertainty.WILSON
    assert entry["ci"][0] == 0.0 and entry["ci"][1] > 0
