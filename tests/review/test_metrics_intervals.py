"""Bootstrap intervals from distinct deltas, against values worked out by hand."""
import numpy as np
import pytest

from grading.review.metrics import bootstrap_interval, delta_intervals, evaluation_gap, mse, score_metrics


def test_two_pairs_have_no_interval():
    # deltas 0 and 2: a percentile bootstrap printed MSE 2.000 [0.000, 4.000], the two values
    # listed back. Below core.uncertainty.MIN_CLUSTERS there is no interval, and the page says why.
    result = score_metrics([5, 7], [5, 5], bootstrap=1000)
    assert result.ci["mse"] == (None, None) and result.ci["fr_2"] == (None, None)
    assert result.uncertainty["note"] == "not estimable: 2 answers"
    assert result.as_dict()["uncertainty"]["unit"] == "answer"


def test_interval_of_identical_deltas_is_the_value_and_wilson_at_the_boundary():
    ci = delta_intervals([-3, -3, -3, -3, -3], n_resamples=200)
    assert ci["mse"] == (9.0, 9.0) and ci["mean_signed_error"] == (-3.0, -3.0)
    assert ci["fr_3"][1] == 1.0 and 0.4 < ci["fr_3"][0] < 1.0  # 5 of 5: Wilson, not [1, 1]


def test_multinomial_bootstrap_matches_resampling_pairs():
    rng = np.random.default_rng(11)
    gold = rng.integers(0, 11, 400).astype(float)
    pred = np.clip(gold + rng.choice([-3, -2, -1, 0, 0, 0, 1, 2, 4], 400), 0, 10)
    fast = delta_intervals(pred - gold, n_resamples=4000, seed=1)["mse"]
    slow = bootstrap_interval(pred, gold, mse, n_resamples=4000, seed=2)
    assert fast[0] == pytest.approx(slow[0], rel=0.05) and fast[1] == pytest.approx(slow[1], rel=0.05)


def test_intervals_are_repeatable_and_bracket_the_estimate():
    judge, gold = [8, 3, 5, 6, 0.5, 10], [5, 5, 5, 5, 5, 10]
    first = score_metrics(judge, gold, bootstrap=500, seed=4)
    assert first.ci == score_metrics(judge, gold, bootstrap=500, seed=4).ci
    assert first.ci["mse"][0] <= first.mse <= first.ci["mse"][1]
    assert set(first.as_dict()) >= {"mse_ci", "fr_2_ci", "fr_5_ci", "mae_ci"}


def test_gap_with_large_groups_stays_fast_and_sane():
    rng = np.random.default_rng(0)
    gold = rng.integers(0, 14, 200_000).astype(float)
    human = np.clip(gold[:100_000] + rng.choice([-3, -1, 0, 1, 2], 100_000), 0, 14)
    synthetic = np.clip(gold[100_000:] + rng.choice([-1, 0, 0, 1], 100_000), 0, 14)
    gap = evaluation_gap(human, gold[:100_000], synthetic, gold[100_000:], n_resamples=1000)
    low, high = gap.mse_ratio_ci
    assert low < gap.mse_ratio < high
    assert gap.fr2_synthetic == 0.0 and gap.fr2_difference_ci[0] > 0


def test_correlation_interval_is_seeded_and_brackets_the_estimate():
    from scipy import stats

    from grading.review.metrics import correlation_interval

    rng = np.random.default_rng(1)
    gold = rng.integers(0, 11, size=120).astype(float)
    pred = np.clip(gold + rng.normal(0, 2, size=120), 0, 10)
    for method, func in (("pearson", stats.pearsonr), ("spearman", stats.spearmanr)):
        low, high = correlation_interval(pred, gold, method, n_resamples=400, seed=3)
        assert -1 <= low < func(pred, gold)[0] < high <= 1
        assert correlation_interval(pred, gold, method, n_resamples=400, seed=3) == (low, high)
    assert correlation_interval([5, 5, 5, 5], [1, 2, 3, 4]) == (None, None)  # constant: undefined
    assert correlation_interval([1, 2], [1, 2]) == (None, None)
    assert correlation_interval(pred, gold, n_resamples=0) == (None, None)


def test_correlation_resamples_from_pair_counts_equal_scipy_on_the_expanded_resample():
    """Each resample is drawn as counts of the distinct (judge, gold) pairs; the correlation from
    those counts must be scipy's on the resample written out pair by pair."""
    from scipy import stats

    from grading.review.metrics import _average_ranks, _draw_counts, _weighted_pearson

    rng = np.random.default_rng(1)
    pred = rng.integers(0, 8, 60).astype(float)
    gold = np.clip(pred + rng.integers(-2, 3, 60), 0, 8)
    pairs, counts = np.unique(np.stack([pred, gold], axis=1), axis=0, return_counts=True)
    x_values, x_codes = np.unique(pairs[:, 0], return_inverse=True)
    y_values, y_codes = np.unique(pairs[:, 1], return_inverse=True)
    weights, _ = _draw_counts(np.random.default_rng(5), counts, 25)
    weights = weights.astype(float)
    pearson = _weighted_pearson(weights, pairs[:, 0], pairs[:, 1])
    spearman = _weighted_pearson(weights, _average_ranks(weights, x_codes, len(x_values)),
                                 _average_ranks(weights, y_codes, len(y_values)))
    for i, row in enumerate(weights.astype(int)):
        x, y = np.repeat(pairs[:, 0], row), np.repeat(pairs[:, 1], row)
        assert pearson[i] == pytest.approx(stats.pearsonr(x, y)[0], abs=1e-9)
        assert spearman[i] == pytest.approx(stats.spearmanr(x, y)[0], abs=1e-9)


def test_correlation_interval_at_100000_pairs_is_fast():
    import time

    from grading.review.metrics import correlation_interval

    rng = np.random.default_rng(2)
    gold = rng.integers(0, 15, 100_000).astype(float)
    pred = np.clip(gold + rng.integers(-3, 4, 100_000), 0, 14)
    started = time.perf_counter()
    low, high = correlation_interval(pred, gold, "spearman", n_resamples=1000)
    assert time.perf_counter() - started < 2.0
    assert low < high
