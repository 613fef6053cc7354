"""Agreement figures against values worked out by hand (the working is in the comments).

Fixture: one question with full score 4, five responses r1..r5 (r6 has one label only).

            r1  r2  r3  r4  r5  r6
    A        0   1   2   3   4   4
    B        0   2   2   4   3   -
    C        1   1   2   -   -   -
"""
from decimal import Decimal

import pytest

from annotation.labelling.agreement import (
    agreement_report,
    icc_1_1,
    icc_2_1,
    krippendorff_interval,
    pair_differences,
    score_step,
    weighted_kappa,
)

A = [0, 1, 2, 3, 4]
B = [0, 2, 2, 4, 3]
RATINGS = (
    [(f"r{i + 1}", 1, "A", Decimal(v)) for i, v in enumerate(A)]
    + [("r6", 1, "A", Decimal(4))]
    + [(f"r{i + 1}", 1, "B", Decimal(v)) for i, v in enumerate(B)]
    + [("r1", 1, "C", Decimal(1)), ("r2", 1, "C", Decimal(1)), ("r3", 1, "C", Decimal(2))]
)


def test_pair_differences_a_b():
    # |A-B| = 0, 1, 0, 1, 1: two equal, all within one, mean 3/5.
    assert pair_differences(list(zip(A, B))) == (0.4, 1.0, 0.6)


def test_quadratic_weighted_kappa_a_b():
    # Weights (i-j)^2 on levels 0..4. Observed: sum w*O = 0+1+0+1+1 = 3.
    # Expected E_ij = a_i * b_j / 5 with a = (1,1,1,1,1), b = (1,0,2,1,1):
    # sum_i (i-j)^2 is 30 (j=0), 10 (j=2), 15 (j=3), 30 (j=4), so sum w*E = (30+2*10+15+30)/5 = 19.
    # kappa = 1 - 3/19 = 16/19.
    assert weighted_kappa(A, B, max_score=4) == pytest.approx(16 / 19)


def test_kappa_weights_follow_score_distance_not_ranks():
    # Only 0 and 4 occur: on the 0..4 grid a 0-vs-4 disagreement is the worst possible.
    # Ranks alone (levels {0, 4} -> {0, 1}) would make it look like a one-step disagreement.
    # Grid: O: (0,0),(0,4),(4,4),(4,4): sum w*O = 16; marginals a=(2 at 0, 2 at 4), b=(1 at 0, 3 at 4):
    # sum w*E = (a0*b4 + a4*b0) * 16 / 4 = (2*3 + 2*1) * 4 = 32. kappa = 1 - 16/32 = 0.5.
    assert weighted_kappa([0, 0, 4, 4], [0, 4, 4, 4], max_score=4) == pytest.approx(0.5)
    # Half points move the grid to steps of 0.5 (levels 0..8), the same data doubled gives the same kappa.
    assert weighted_kappa([0, 0.5, 1, 1.5, 2], [0, 1, 1, 2, 1.5], max_score=2) == pytest.approx(16 / 19)
    assert score_step([Decimal("1.5"), 2]) == Decimal("0.5")


def test_icc_2_1_a_b():
    # Rows (A,B): (0,0) (1,2) (2,2) (3,4) (4,3); n=5, k=2, grand mean 2.1, column means 2.0 and 2.2.
    # SS_rows = 2*(2.1^2+0.6^2+0.1^2+1.4^2+1.4^2) = 17.4; SS_cols = 5*(0.1^2+0.1^2) = 0.1;
    # SS_total = 18.9, SS_error = 1.4. MSR = 4.35, MSC = 0.1, MSE = 0.35.
    # ICC(2,1) = (4.35-0.35) / (4.35 + 0.35 + 2*(0.1-0.35)/5) = 4 / 4.6.
    assert icc_2_1(list(zip(A, B))) == pytest.approx(4 / 4.6)


def test_krippendorff_alpha_a_b():
    # 10 values. D_o = (1/10) * sum_u 2*d_u^2 = 2*3/10 = 0.6.
    # D_e = 2*(n*sum v^2 - (sum v)^2) / (n(n-1)) = 2*(10*63 - 21^2)/90 = 378/90 = 4.2. alpha = 1 - 0.6/4.2 = 6/7.
    units = [{"A": a, "B": b} for a, b in zip(A, B)]
    assert krippendorff_interval(units) == pytest.approx(6 / 7)


def test_icc_1_1_unbalanced():
    # Groups [0,0,1] [1,2,1] [2,2,2] [3,4] [4,3]: N=13, n=5, grand mean 25/13.
    # SS_between = 3(1/3-25/13)^2 + 3(4/3-25/13)^2 + 3(2-25/13)^2 + 2*2(7/2-25/13)^2 = 725/39;
    # SS_within = 2/3 + 2/3 + 0 + 1/2 + 1/2 = 7/3. MSB = 725/156, MSW = (7/3)/8 = 7/24.
    # k0 = (13 - 35/13) / 4 = 67/26. ICC(1,1) = (MSB-MSW) / (MSB + (k0-1)*MSW) = 2718/3187.
    assert icc_1_1([[0, 0, 1], [1, 2, 1], [2, 2, 2], [3, 4], [4, 3], [4]]) == pytest.approx(2718 / 3187)


def test_report_on_the_fixture():
    report = agreement_report(RATINGS, {1: Decimal(4)}, {1: "Q1"})
    overall = report["overall"]
    # Responses with two labels or more: r1..r5. Label pairs: 3+3+3+1+1 = 11, differences
    # 0,1,1 | 1,0,1 | 0,0,0 | 1 | 1: five equal, all within one, sum 6.
    assert overall["responses"] == 5
    assert overall["label_pairs"] == 11
    assert overall["exact"] == pytest.approx(5 / 11)
    assert overall["within_one"] == 1.0
    assert overall["mad"] == pytest.approx(6 / 11)
    # Alpha with C missing on r4, r5: n = 13 values. D_o = (2+2+0+2+2)/13 = 8/13;
    # sum v = 25, sum v^2 = 69: D_e = 2*(13*69-625)/(13*12) = 136/39. alpha = 1 - (8/13)/(136/39) = 14/17.
    assert overall["alpha"] == pytest.approx(14 / 17)
    assert overall["icc"] == pytest.approx(2718 / 3187)
    # Pairwise kappas: A-B 16/19 (above); A-C on r1..r3: sum w*O = 1, sum w*E = 9/3 -> 2/3;
    # B-C: sum w*O = 2, sum w*E = 10/3 -> 2/5. Light's kappa = (16/19 + 2/3 + 2/5) / 3 = 544/855.
    assert overall["kappa"] == pytest.approx(544 / 855)
    assert report["questions"][0]["name"] == "Q1"
    assert report["questions"][0]["alpha"] == pytest.approx(14 / 17)

    pairs = {(p["a"], p["b"]): p for p in report["pairs"]}
    assert pairs[("A", "B")]["n"] == 5
    assert pairs[("A", "B")]["kappa"] == pytest.approx(16 / 19)
    assert pairs[("A", "B")]["icc"] == pytest.approx(4 / 4.6)
    assert pairs[("A", "C")]["kappa"] == pytest.approx(2 / 3)
    # A-C: differences 1, 0, 0.
    assert (pairs[("A", "C")]["exact"], pairs[("A", "C")]["mad"]) == (pytest.approx(2 / 3), pytest.approx(1 / 3))
    assert pairs[("B", "C")]["kappa"] == pytest.approx(0.4)

    assert report["raters"] == ["A", "B", "C"]
    kappa = report["matrix"]["kappa"]
    assert kappa[0][1] == kappa[1][0] == pytest.approx(16 / 19)
    assert kappa[0][0] is None
    assert report["matrix"]["n"][1][2] == 3


def test_undefined_measures_are_none():
    assert weighted_kappa([2], [2], max_score=4) is None
    assert weighted_kappa([2, 2], [2, 2], max_score=4) is None  # no variance: kappa is 0/0
    assert krippendorff_interval([{"A": 1, "B": 1}, {"A": 1, "B": 1}]) is None
    assert icc_2_1([(1, 1)]) is None
    assert icc_1_1([[1, 2]]) is None
    assert agreement_report([], {})["overall"]["responses"] == 0


def test_quadratic_kappa_equals_scikit_learn_on_random_pairs():
    """Our numpy kappa is scikit-learn's cohen_kappa_score(weights="quadratic"), to the last digits."""
    import math
    import random
    import warnings

    from sklearn.metrics import cohen_kappa_score

    from annotation.labelling.agreement import quadratic_kappa

    rng = random.Random(7)
    for _ in range(300):
        levels = rng.randint(2, 25)
        n = rng.randint(2, 40)
        a = [rng.randrange(levels) for _ in range(n)]
        b = [min(levels - 1, max(0, x + rng.randint(-3, 3))) if rng.random() < 0.8 else rng.randrange(levels) for x in a]
        if rng.random() < 0.05:
            a = b = [rng.randrange(levels)] * n  # no variance: undefined
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = cohen_kappa_score(a, b, labels=list(range(levels)), weights="quadratic")
        ours = quadratic_kappa(a, b, levels)
        assert (math.isnan(ours) and math.isnan(expected)) or ours == pytest.approx(expected, abs=1e-12)


def test_alpha_needs_two_pairable_units_and_icc_can_leave_minus_one_to_one():
    """Issue 36: one shared unit gave alpha 0.000 (the formula's value, not a measurement): "—".
    ICC(2,1) as Shrout and Fleiss define it is -2 here, outside [-1, 1]: kept, and the page says so."""
    import krippendorff as reference
    import numpy as np

    assert krippendorff_interval([{"A": 1, "B": 3}]) is None
    assert krippendorff_interval([{"A": 1, "B": 3}, {"A": 4}]) is None  # the second unit is not pairable
    two = [{"A": 1, "B": 3}, {"A": 2, "B": 2}]
    data = np.array([[1, 2], [3, 2]], dtype=float)
    assert krippendorff_interval(two) == pytest.approx(
        reference.alpha(reliability_data=data, level_of_measurement="interval"))
    assert icc_2_1([[0, 3], [3, 0], [1, 2], [2, 1]]) == pytest.approx(-2.0)
