"""Metrics against values computed by hand."""
import pytest

from grading.review.metrics import bootstrap_interval, delta_histogram, evaluation_gap, failure_rate, mse, score_metrics

# judge, gold; deltas: +3, -2, 0, +1, -4.5, 0  -> squares 9, 4, 0, 1, 20.25, 0 = 34.25
JUDGE = [8, 3, 5, 6, 0.5, 10]
GOLD = [5, 5, 5, 5, 5, 10]


def test_mse_mae_signed_error_by_hand():
    m = score_metrics(JUDGE, GOLD)
    assert m.n == 6
    assert m.mse == pytest.approx(34.25 / 6)
    assert m.mae == pytest.approx((3 + 2 + 0 + 1 + 4.5 + 0) / 6)
    assert m.mean_signed_error == pytest.approx((3 - 2 + 0 + 1 - 4.5 + 0) / 6)
    assert (m.over, m.under) == (2, 2)


def test_failure_rates_by_hand():
    m = score_metrics(JUDGE, GOLD)
    # |delta| = 3, 2, 0, 1, 4.5, 0
    assert m.fr == {1: pytest.approx(4 / 6), 2: pytest.approx(3 / 6), 3: pytest.approx(2 / 6),
                    4: pytest.approx(1 / 6), 5: 0.0}


def test_fr_counts_exact_boundary():
    assert failure_rate([7.0], [5.0], 2) == 1.0
    assert failure_rate([6.9], [5.0], 2) == 0.0


def test_empty_and_constant_inputs():
    assert score_metrics([], []).n == 0 and score_metrics([], []).mse is None
    assert score_metrics([1, 1, 1], [2, 3, 4]).pearson is None
    with pytest.raises(ValueError):
        mse([1, 2], [1])


def test_correlations():
    m = score_metrics([1, 2, 3, 4], [2, 4, 6, 8.5])
    # by hand: sum dxdy = 10.75, sum dx^2 = 5, sum dy^2 = 23.1875 -> 10.75 / sqrt(115.9375)
    assert m.pearson == pytest.approx(10.75 / 115.9375**0.5)
    assert m.spearman == pytest.approx(1.0)


def test_bootstrap_interval_is_repeatable_and_brackets_the_estimate():
    low, high = bootstrap_interval(JUDGE, GOLD, mse, n_resamples=500, seed=3)
    assert (low, high) == bootstrap_interval(JUDGE, GOLD, mse, n_resamples=500, seed=3)
    assert low <= 34.25 / 6 <= high
    assert low >= 0 and high <= 20.25  # no resample can exceed the largest squared error


def test_bootstrap_interval_of_a_constant_error_is_that_error():
    assert bootstrap_interval([3] * 5, [1] * 5, mse, n_resamples=50) == (4.0, 4.0)
    assert bootstrap_interval([3, 3, 3], [1, 1, 1], mse, n_resamples=50) == (None, None)  # 3 answers: not estimable


def test_evaluation_gap_by_hand():
    # human deltas 2, 2, 0, 0 -> MSE 2, FR_2 0.5 ; synthetic deltas 1, 1, 0, 0 -> MSE 0.5, FR_2 0
    gap = evaluation_gap([7, 3, 5, 5], [5, 5, 5, 5], [6, 4, 5, 5], [5, 5, 5, 5], n_resamples=300)
    assert gap.mse_ratio == pytest.approx(4.0)
    assert gap.fr2_human == 0.5 and gap.fr2_synthetic == 0.0
    assert gap.fr2_difference_ci == (None, None) and gap.uncertainty["note"] == "not estimable: 4 answers"
    gap = evaluation_gap([7, 3, 5, 5] * 3, [5] * 12, [6, 4, 5, 5] * 3, [5] * 12, n_resamples=300)
    low, high = gap.fr2_difference_ci
    assert 0 <= low <= 0.5 <= high <= 1


def test_delta_histogram():
    assert delta_histogram(JUDGE, GOLD) == {-5.0: 1, -2.0: 1, 0.0: 2, 1.0: 1, 3.0: 1}
