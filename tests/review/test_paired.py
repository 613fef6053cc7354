"""Paired comparison of two judge settings (core.paired): known differences from scripted
errors, the sign test against a hand computation, the cluster permutation test, cluster resampling."""
from math import comb

import numpy as np
import pytest

from core import paired


def scripted(n_questions=6, per_question=8, seed=0):
    """A errs by +2 on every answer; B is exact on all but one answer per question (+1)."""
    rng = np.random.default_rng(seed)
    clusters = np.repeat(np.arange(n_questions), per_question)
    gold = rng.integers(2, 10, clusters.size).astype(float)
    a = gold + 2
    b = gold.copy()
    b[::per_question] += 1
    return a, b, gold, clusters


def test_known_errors_give_known_differences_and_intervals():
    a, b, gold, clusters = scripted()
    out = paired.paired_comparison(a, b, gold, clusters, n_resamples=300, seed=4)
    m = out["measures"]
    assert out["n"] == 48 and out["n_questions"] == 6
    assert m["mae"]["a"] == pytest.approx(2.0) and m["mae"]["b"] == pytest.approx(1 / 8)
    assert m["mae"]["difference"] == pytest.approx(1 / 8 - 2)
    assert m["mse"]["difference"] == pytest.approx(1 / 8 - 4)
    assert m["fr_2"]["a"] == 1.0 and m["fr_2"]["b"] == 0.0 and m["fr_2"]["difference"] == -1.0
    assert m["bias"]["difference"] == pytest.approx(1 / 8 - 2)
    low, high = m["mae"]["ci"]
    assert -2 <= low <= m["mae"]["difference"] <= high < -1.5
    assert m["fr_2"]["ci"] == [-1.0, -1.0]  # A is off by 2 and B within 1 on every answer of every resample
    assert out["resampling"].startswith("cluster bootstrap: whole questions")
    assert out["sign_test"] == {"b_better": 48, "a_better": 0, "ties": 0, "p_value": pytest.approx(2 / 2**48),
                                "assumption": paired.SIGN_TEST_ASSUMPTION}


def test_sign_test_agrees_with_a_hand_computation():
    gold = np.zeros(12)
    a = np.array([2, 2, 2, 2, 2, 2, 2, 2, 0, 0, 1, 3], dtype=float)  # |A| errors
    b = np.array([0, 1, 0, 1, 0, 1, 0, 1, 2, 1, 1, 3], dtype=float)  # B better on 8, A on 2, ties 2
    test = paired.sign_test(a, b, gold)
    assert (test.b_better, test.a_better, test.ties) == (8, 2, 2)
    hand = 2 * sum(comb(10, i) for i in range(3)) / 2**10  # two-sided, k = 2 of n = 10
    assert test.p_value == pytest.approx(hand) == pytest.approx(0.109375)


def test_cluster_permutation_test_is_exact_for_few_questions():
    # two questions; B better by 1 on every answer of question 0, worse by 1 on question 1 (half as many)
    gold = np.zeros(6)
    clusters = np.array([0, 0, 0, 0, 1, 1])
    a = np.array([1, 1, 1, 1, 0, 0], dtype=float)
    b = np.array([0, 0, 0, 0, 1, 1], dtype=float)
    p, method = paired.cluster_permutation_test(a, b, gold, clusters)
    # per-question sums: -4 and +2; |mean| observed 2/6; patterns (+,+) (+,-) (-,+) (-,-) give 2, 6, 6, 2 (/6)
    assert p == pytest.approx(1.0) and method.startswith("exact over all 4")
    a2 = np.array([1, 1, 1, 1, 1, 1], dtype=float)
    b2 = np.zeros(6)
    p2, _ = paired.cluster_permutation_test(a2, b2, gold, clusters)
    assert p2 == pytest.approx(0.5)  # only the all-same-sign patterns reach |-6/6|


def test_permutation_test_samples_when_there_are_many_questions_and_is_seeded():
    a, b, gold, clusters = scripted(n_questions=30, per_question=3)
    p1, method = paired.cluster_permutation_test(a, b, gold, clusters, n_permutations=2000, seed=1)
    assert method.startswith("2000 seeded random") and p1 < 0.01
    assert paired.cluster_permutation_test(a, b, gold, clusters, n_permutations=2000, seed=1)[0] == p1


def test_cluster_bootstrap_draws_whole_questions_then_answers_within_them():
    clusters = np.array([7, 7, 7, 3, 3, 9])
    rng = np.random.default_rng(0)
    for idx in paired.cluster_bootstrap_indices(rng, clusters, 200):
        drawn = clusters[idx]
        # answers come in whole-question blocks: each drawn question contributes its own size
        values, counts = np.unique(drawn, return_counts=True)
        sizes = {7: 3, 3: 2, 9: 1}
        assert all(count % sizes[v] == 0 for v, count in zip(values, counts))
        assert len(idx) == sum(sizes[v] * (c // sizes[v]) for v, c in zip(values, counts))


def test_split_cases_and_empty_input():
    gold = np.array([5.0, 5.0, 5.0, 5.0])
    a = np.array([5.0, 8.0, 6.0, 2.0])
    b = np.array([7.0, 5.0, 6.0, 5.5])
    assert paired.split_cases(a, b, gold) == ([0], [1, 3])
    empty = paired.paired_comparison([], [], [], [])
    assert empty["n"] == 0 and empty["measures"]["mse"]["difference"] is None
    with pytest.raises(ValueError):
        paired.paired_comparison([1, 2], [1], [1, 2], [0, 0])
