"""Issue 36: the judge-versus-gold point estimates equal the reference implementations on random
data (scikit-learn's mean_squared_error and mean_absolute_error, numpy's mean of the signed
differences and of |Δ| ≥ d, scipy's Pearson and Spearman), beside the hand-worked values of
test_metrics.py."""
import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import mean_absolute_error, mean_squared_error

from grading.review.metrics import FR_DISTANCES, score_metrics


@pytest.mark.parametrize("seed", range(20))
def test_score_metrics_equal_scikit_learn_numpy_and_scipy(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 300))
    gold = rng.integers(0, 21, n) / 2  # half points on 0..10, as the rubric gives them
    judge = np.clip(gold + rng.normal(rng.uniform(-1, 1), rng.uniform(0.3, 3), n), 0, 10).round(1)
    m = score_metrics(judge.tolist(), gold.tolist())
    assert m.n == n
    assert m.mse == pytest.approx(mean_squared_error(gold, judge), rel=1e-12, abs=1e-12)
    assert m.mae == pytest.approx(mean_absolute_error(gold, judge), rel=1e-12, abs=1e-12)
    assert m.mean_signed_error == pytest.approx(float(np.mean(judge - gold)), rel=1e-12, abs=1e-12)
    for d in FR_DISTANCES:
        assert m.fr[d] == pytest.approx(float(np.mean(np.abs(judge - gold) >= d - 1e-9)))
    assert (m.over, m.under) == (int(np.sum(judge > gold)), int(np.sum(judge < gold)))
    if np.ptp(judge) > 0 and np.ptp(gold) > 0:
        assert m.pearson == pytest.approx(stats.pearsonr(judge, gold).statistic, abs=1e-12)
        assert m.spearman == pytest.approx(stats.spearmanr(judge, gold).statistic, abs=1e-12)
