"""Issue 36: ICC(1,1) and ICC(2,1) equal Shrout & Fleiss's (1979) formulas computed from the
mean squares of statsmodels' ANOVA (anova_lm of an OLS fit: one-way, answers as the factor, for
ICC(1,1); two-way without interaction, answers and raters, for ICC(2,1)) on random tables, beside
the hand-worked values of test_agreement.py. pingouin, whose intraclass_corr gives the same
estimators, is not a dependency of the tool.

    ICC(1,1) = (BMS - WMS) / (BMS + (k0 - 1) WMS),  k0 = (N - sum n_i^2 / N) / (n - 1)
    ICC(2,1) = (BMS - EMS) / (BMS + (k - 1) EMS + k (JMS - EMS) / n)
"""
import numpy as np
import pandas as pd
import pytest
from statsmodels.formula.api import ols
from statsmodels.stats.anova import anova_lm

from annotation.labelling.agreement import icc_1_1, icc_2_1


def _mean_squares(frame, formula):
    table = anova_lm(ols(formula, data=frame).fit(), typ=1)
    return {name: row["sum_sq"] / row["df"] for name, row in table.iterrows()}


@pytest.mark.parametrize("seed", range(10))
def test_icc_2_1_equals_shrout_fleiss_on_statsmodels_anova(seed):
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(3, 40)), int(rng.integers(2, 6))
    truth = rng.integers(0, 11, n)[:, None]
    table = np.clip(truth + rng.integers(-2, 3, (n, k)) + rng.integers(-1, 2, k)[None, :], 0, 10).astype(float)
    frame = pd.DataFrame([{"answer": i, "rater": j, "score": table[i, j]} for i in range(n) for j in range(k)])
    ms = _mean_squares(frame, "score ~ C(answer) + C(rater)")
    bms, jms, ems = ms["C(answer)"], ms["C(rater)"], ms["Residual"]
    expected = (bms - ems) / (bms + (k - 1) * ems + k * (jms - ems) / n)
    assert icc_2_1(table.tolist()) == pytest.approx(expected, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("seed", range(10))
def test_icc_1_1_equals_shrout_fleiss_on_statsmodels_anova_unbalanced(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(3, 40))
    groups = []
    for _ in range(n):
        truth = int(rng.integers(0, 11))
        groups.append(np.clip(truth + rng.integers(-2, 3, int(rng.integers(2, 5))), 0, 10).astype(float).tolist())
    frame = pd.DataFrame([{"answer": i, "score": s} for i, g in enumerate(groups) for s in g])
    ms = _mean_squares(frame, "score ~ C(answer)")
    bms, wms = ms["C(answer)"], ms["Residual"]
    sizes = np.array([len(g) for g in groups], dtype=float)
    k0 = (sizes.sum() - (sizes**2).sum() / sizes.sum()) / (n - 1)
    expected = (bms - wms) / (bms + (k0 - 1) * wms)
    assert icc_1_1(groups) == pytest.approx(expected, rel=1e-9, abs=1e-12)
