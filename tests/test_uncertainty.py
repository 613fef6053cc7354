"""core.uncertainty (issue 36): the rules every interval and p-value follows, against direct loops
and the reference implementations (statsmodels, scipy), and a coverage simulation: judges whose
errors share a question-level effect, where only the question-clustered interval keeps its 95%."""
import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from core import uncertainty
from grading.review import metrics


def test_wilson_equals_statsmodels_and_0_of_448_has_a_positive_upper_bound():
    for successes, n in ((0, 448), (3, 448), (448, 448), (7, 12), (1, 1)):
        low, high = uncertainty.wilson(successes, n)
        ref_low, ref_high = proportion_confint(successes, n, alpha=0.05, method="wilson")
        assert (low, high) == (pytest.approx(ref_low, abs=1e-12), pytest.approx(ref_high, abs=1e-12))
    low, high = uncertainty.wilson(0, 448)
    assert low == 0.0 and 0.008 < high < 0.009


def test_fr_2_of_0_in_448_answers_gets_a_wilson_interval_not_zero_to_zero():
    # 448 answers of 14 questions, every judge score within one point of gold: FR_2 = 0
    rng = np.random.default_rng(0)
    gold = rng.integers(0, 8, 448).astype(float)
    judge = gold + rng.choice([-1.0, 0.0, 1.0], 448)
    questions = np.repeat(np.arange(14), 32)
    result = metrics.score_metrics(judge, gold, bootstrap=500, clusters=questions)
    assert result.fr[2] == 0.0
    low, high = result.ci["fr_2"]
    assert low == 0.0 and high == pytest.approx(proportion_confint(0, 448, method="wilson")[1])
    assert result.uncertainty["wilson"] == ["fr_2", "fr_3", "fr_4", "fr_5"]


def test_below_the_minimum_number_of_clusters_there_is_no_interval():
    codes = np.array([0, 0, 1, 1, 2, 2, 3, 3])
    out = uncertainty.cluster_bootstrap({"x": np.arange(8.0)}, codes)
    assert out["x"].bounds() == [None, None] and out["x"].note() == "not estimable: 4 questions"
    out = uncertainty.cluster_bootstrap({"x": np.arange(8.0)}, np.zeros(8))
    assert out["x"].note() == "not estimable: 1 question"
    assert uncertainty.cluster_bootstrap({"x": np.arange(10.0)}, np.arange(10) // 2)["x"].estimable


def test_a_proportion_at_0_or_1_below_the_minimum_number_of_clusters_has_no_interval_either():
    # One question's 0 of 8 (and 8 of 8): a Wilson interval [0, 0.324] would treat its answers as independent.
    for value in (0.0, 1.0):
        out = uncertainty.cluster_bootstrap({"p": np.full(8, value)}, np.zeros(8), proportions={"p"})["p"]
        assert out.bounds() == [None, None] and out.note() == "not estimable: 1 question"
        four = uncertainty.cluster_bootstrap({"p": np.full(8, value)}, np.arange(8) // 2, proportions={"p"})["p"]
        assert not four.estimable and four.note() == "not estimable: 4 questions"
        five = uncertainty.cluster_bootstrap({"p": np.full(10, value)}, np.arange(10) // 2, proportions={"p"})["p"]
        assert five.method == uncertainty.WILSON and five.bounds() == list(uncertainty.wilson(int(10 * value), 10))
    # the same below the minimum with answers as the unit (a question's own row): 4 answers, none
    out = uncertainty.cluster_bootstrap({"p": np.zeros(4)}, None, repeats=np.ones(4, dtype=int), unit="answer",
                                        proportions={"p"})["p"]
    assert out.note() == "not estimable: 4 answers"


def test_the_one_stage_cluster_bootstrap_equals_a_direct_loop():
    """Pooling identical clusters and drawing multinomial counts gives the same distribution as
    drawing k clusters with replacement: compared on quantiles of many resamples."""
    rng = np.random.default_rng(3)
    questions = np.repeat(np.arange(12), rng.integers(2, 9, 12))
    values = rng.normal(size=questions.size) + questions * 0.3
    fast = uncertainty.cluster_bootstrap({"x": values}, questions, n_resamples=20_000, seed=1)["x"]
    members = [np.flatnonzero(questions == q) for q in range(12)]
    loop = np.random.default_rng(2)
    draws = [values[np.concatenate([members[i] for i in loop.integers(0, 12, 12)])].mean() for _ in range(20_000)]
    low, high = np.percentile(draws, [2.5, 97.5])
    assert fast.low == pytest.approx(low, abs=0.02) and fast.high == pytest.approx(high, abs=0.02)


def test_undefined_resamples_are_counted_never_scored_zero():
    draws = np.array([0.5] * 90 + [np.nan] * 10)
    interval = uncertainty.percentile(draws)
    assert not interval.estimable and interval.undefined == 10
    assert interval.note() == "not estimable: undefined in 10 of 100 resamples"
    few = uncertainty.percentile(np.array([0.5] * 99 + [np.nan]))
    assert few.estimable and few.undefined == 1 and few.bounds() == [0.5, 0.5]


def test_a_ratio_whose_denominator_can_be_0_has_no_upper_bound():
    ratios = uncertainty.ratio_draws(np.array([1.0, 2.0, 0.0, 3.0]), np.array([0.5, 0.0, 0.0, 1.0]))
    assert ratios[0] == 2.0 and math.isinf(ratios[1]) and math.isnan(ratios[2]) and ratios[3] == 3.0
    interval = uncertainty.percentile(np.concatenate([np.full(60, 2.0), np.full(40, np.inf)]))
    assert interval.unbounded and interval.bounds() == [2.0, None]


def test_the_jackknife_contains_its_estimate_and_equals_the_textbook_formula():
    rng = np.random.default_rng(5)
    questions = np.repeat(np.arange(9), 6)
    values = rng.normal(size=54) + questions

    def statistic(rows):
        return float(np.var(values[rows], ddof=1))

    interval = uncertainty.jackknife(statistic, questions)
    estimate = statistic(np.arange(54))
    leave_out = np.array([statistic(np.flatnonzero(questions != q)) for q in range(9)])
    se = math.sqrt(8 / 9 * np.sum((leave_out - leave_out.mean()) ** 2))
    half = stats.t.ppf(0.975, 8) * se
    assert (interval.low, interval.high) == (pytest.approx(estimate - half), pytest.approx(estimate + half))
    assert interval.low < estimate < interval.high
    assert not uncertainty.jackknife(statistic, np.repeat(np.arange(3), 18)).estimable


def test_p_values_are_never_zero_and_print_with_their_resolution():
    assert uncertainty.monte_carlo_p(0, 10_000) == 1 / 10_001
    assert uncertainty.exact_p(0, 16) == 1 / 16  # the observed pattern is always among those enumerated
    assert uncertainty.format_p(1 / 10_001, 1 / 10_001) == "< 0.0001"
    assert uncertainty.format_p(2 / 2**14, 2 / 2**14) == "< 0.00013"
    assert uncertainty.format_p(0.00034) == "0.00034"
    assert uncertainty.format_p(0.215) == "0.215" and uncertainty.format_p(None) == "—"
    assert "0.000" not in uncertainty.format_p(1e-7)


def _simulated_judges(rng, n_questions=30, per_question=12):
    """Judge errors = a question-level effect (sd 1) + answer noise (sd 0.5): answers to one
    question err together, as a judge misreading one rubric does. True mean error: 0."""
    questions = np.repeat(np.arange(n_questions), per_question)
    effect = rng.normal(0, 1.0, n_questions)[questions]
    errors = effect + rng.normal(0, 0.5, questions.size)
    return errors, questions


def test_coverage_of_the_clustered_interval_against_the_independent_one():
    """100 simulated studies (fixed seed): the 95% question-clustered interval of the mean signed
    error covers the true value 0 in at least 92; the interval that treats answers as independent
    covers clearly less (its width ignores that 12 answers of a question share one effect)."""
    rng = np.random.default_rng(2026)
    clustered = independent = 0
    for draw in range(100):
        errors, questions = _simulated_judges(rng)
        gold = np.full(errors.size, 5.0)
        by_question = metrics.delta_uncertainty(errors, clusters=questions, n_resamples=400, seed=draw)
        by_answer = metrics.delta_uncertainty(errors, n_resamples=400, seed=draw)
        assert metrics.score_metrics(gold + errors, gold).mean_signed_error == pytest.approx(errors.mean())
        for interval, counter in ((by_question["mean_signed_error"], "c"), (by_answer["mean_signed_error"], "i")):
            covered = interval.low <= 0 <= interval.high
            if counter == "c":
                clustered += covered
            else:
                independent += covered
    assert clustered >= 92
    assert independent <= 70  # about 40-60: an interval a third as wide as it should be
