"""The Validity view's statistics against reference implementations and known behaviour:
PPI / PPI++ against ppi-python (the method authors' library), the Alternative Annotator Test on a
hand-computed case and on scripted judges, deferral against a brute-force check and in simulation,
κ and α against scikit-learn and krippendorff, and coverage of the clustered PPI interval."""
import math

import numpy as np
import pytest
from scipy import stats as sps

from validity import stats

ppi_py = pytest.importorskip("ppi_py")


def _data(seed, n=60, big_n=400, bias=1.5):
    rng = np.random.default_rng(seed)
    y = rng.normal(6, 2, n + big_n)
    f = y + bias + rng.normal(0, 1, n + big_n)
    return y[:n], f[:n], f[n:]


@pytest.mark.parametrize("lam", [None, 1.0, 0.0, 0.4])
def test_ppi_mean_equals_ppi_python(lam):
    y, f_lab, f_unlab = _data(3)
    ours = stats.ppi_mean(y, f_lab, f_unlab, lam=lam)
    theirs_point = ppi_py.ppi_mean_pointestimate(y, f_lab, f_unlab, lam=lam)
    low, high = ppi_py.ppi_mean_ci(y, f_lab, f_unlab, alpha=0.05, lam=lam)
    assert ours.value == pytest.approx(float(np.squeeze(theirs_point)), abs=1e-12)
    assert (ours.low, ours.high) == pytest.approx((float(np.squeeze(low)), float(np.squeeze(high))), abs=1e-12)


def test_power_tuning_equals_ppi_python():
    y, f_lab, f_unlab = _data(5)
    point = stats.ppi_mean(y, f_lab, f_unlab)
    assert point.value == pytest.approx(float(np.squeeze(ppi_py.ppi_mean_pointestimate(y, f_lab, f_unlab))), abs=1e-12)
    assert 0 < point.extra["lambda"] <= 1


def test_clustered_ppi_interval_covers_a_known_mean_where_the_judge_alone_does_not():
    """Answers of one question share an effect; the judge is biased by +1.5 points. 100 draws at
    95 %: the clustered PPI interval covers the true mean in >= 93, the judge-only interval never."""
    rng = np.random.default_rng(20261204)
    covered = judge_covered = 0
    for _ in range(100):
        questions = 40
        effects = rng.normal(0, 1.5, questions)
        q = np.repeat(np.arange(questions), 25)
        y = 6 + effects[q] + rng.normal(0, 1.5, len(q))
        f = y + 1.5 + 0.5 * effects[q] + rng.normal(0, 1, len(q))
        truth = 6.0  # the population mean: question effects have mean 0
        labelled = rng.random(len(q)) < 0.15
        est = stats.ppi_mean(y[labelled], f[labelled], f[~labelled], clusters_lab=q[labelled], clusters_unlab=q[~labelled])
        covered += est.low <= truth <= est.high
        judge = f.mean()
        half = 1.96 * f.std(ddof=1) / math.sqrt(len(f))
        judge_covered += judge - half <= truth <= judge + half
    assert covered >= 93 and judge_covered < 10


def test_few_questions_give_no_interval():
    y, f_lab, f_unlab = _data(1, n=20, big_n=40)
    est = stats.ppi_mean(y, f_lab, f_unlab, clusters_lab=[1, 2] * 10, clusters_unlab=[1, 2] * 20)
    assert est.value is not None and est.low is None and est.reason == "clusters"


def test_effective_golds_and_the_planner():
    y, f_lab, f_unlab = _data(7, n=50, big_n=1000, bias=0.5)
    ppi = stats.ppi_mean(y, f_lab, f_unlab)
    classical = stats.classical_mean(y)
    assert stats.effective_golds(ppi, classical) > 50  # a good judge is worth more golds than it has
    width = (ppi.high - ppi.low) * 0.8
    needed = stats.golds_for_width(width, y, f_lab, f_unlab)
    assert needed > 50
    # with that many golds (same variances) the interval is as narrow as asked
    lam = ppi.extra["lambda"]
    variance = lam * lam * np.var(f_unlab) / len(f_unlab) + np.var(y - lam * f_lab) / needed
    assert 2 * 1.959963984540054 * math.sqrt(variance) <= width + 1e-9
    assert stats.golds_for_width(1e-6, y, f_lab, f_unlab) is None  # the judge's part alone is wider


def test_alt_test_hand_computed():
    """Three experts, 10 items; the judge gives expert c's score on every item. Each expert's
    win shares, t statistic, BY-adjusted p-values, ω and ρ recomputed by hand from the definitions."""
    items = [{"judge": c, "experts": {"a": a, "b": b, "c": c}}
             for a, b, c in [(5, 6, 6), (3, 4, 4), (7, 7, 8), (2, 2, 3), (9, 8, 8),
                             (4, 4, 4), (6, 5, 6), (1, 2, 2), (8, 8, 7), (5, 5, 6)]]
    result = stats.alt_test(items, epsilon=0.2)
    assert result.runnable
    by = {c.expert: c for c in result.experts}
    # Leaving a out, the others are b and c. Item 1: their mean is 6; the judge (6) is 0 away, a (5) is 1
    # away: the judge wins alone. The same for every item:
    judge_w = []
    expert_w = []
    for a, b, c in [(5, 6, 6), (3, 4, 4), (7, 7, 8), (2, 2, 3), (9, 8, 8), (4, 4, 4), (6, 5, 6), (1, 2, 2), (8, 8, 7), (5, 5, 6)]:
        mean = (b + c) / 2
        sj, sa = -abs(c - mean), -abs(a - mean)
        judge_w.append(sj >= sa)
        expert_w.append(sa >= sj)
    assert by["a"].judge_wins == sum(judge_w) / 10 and by["a"].expert_wins == sum(expert_w) / 10
    d = np.array(expert_w, float) - np.array(judge_w, float)
    t = (d.mean() - 0.2) / (d.std(ddof=1) / math.sqrt(10))
    assert by["a"].p_value == pytest.approx(sps.t.cdf(t, 9))
    # leaving c out, the judge (= c) always ties c: d = 0 everywhere, below ε: rejected at the test's resolution
    assert by["c"].judge_wins == 1.0 and by["c"].expert_wins == 1.0
    adjusted = sps.false_discovery_control([by[k].p_value for k in "abc"], method="by")
    assert [by[k].p_adjusted for k in "abc"] == pytest.approx(list(adjusted))
    assert result.winning_rate == sum(by[k].rejected for k in "abc") / 3
    assert result.advantage_probability == pytest.approx(np.mean([by[k].judge_wins for k in "abc"]))
    assert result.below_recommended


def _scripted(judge, seed=11, items=80, experts=4):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(items):
        truth = rng.integers(0, 15)
        scores = {f"e{k}": float(np.clip(truth + rng.normal(0, 1.0), 0, 14)) for k in range(experts)}
        out.append({"judge": judge(truth, scores, rng), "experts": scores})
    return out


def test_a_judge_like_one_expert_passes_and_a_biased_one_fails():
    close = stats.alt_test(_scripted(lambda t, s, rng: s["e0"] + rng.normal(0, 0.3)))
    biased = stats.alt_test(_scripted(lambda t, s, rng: t + 2.0))
    assert close.passes and close.winning_rate >= 0.5
    assert not biased.passes and biased.winning_rate < 0.5
    assert biased.advantage_probability < close.advantage_probability


def test_alt_test_says_what_it_needs():
    two = stats.alt_test([{"judge": 1, "experts": {"a": 1, "b": 2}}] * 60)
    assert not two.runnable and "experts" in two.needs
    few = stats.alt_test([{"judge": 1, "experts": {"a": 1, "b": 2, "c": 3}}] * 4)
    assert not few.runnable and few.needs == ["items"]


def test_deferral_matches_a_brute_force_search():
    rng = np.random.default_rng(2)
    signal = rng.integers(0, 30, 200).astype(float)
    wrong = rng.random(200) < signal / 60
    chosen = stats.calibrate_deferral(signal, wrong, alpha=0.2, delta=0.1)
    # brute force over the deciles: the largest τ whose Clopper-Pearson bound at δ/K is <= α
    ordered = np.sort(signal)
    grid = sorted({ordered[math.ceil(k * 200 / 10) - 1] for k in range(1, 11)})
    best = None
    for tau in grid:
        accepted = signal <= tau
        k, n = int((wrong & accepted).sum()), int(accepted.sum())
        upper = 1.0 if k >= n else sps.beta.ppf(1 - 0.1 / len(grid), k + 1, n - k)
        if upper <= 0.2:
            best = tau
    assert best is not None and chosen.threshold == best
    assert chosen.accepted == int((signal <= best).sum())


def test_deferral_keeps_the_held_out_error_within_alpha():
    """Simulated judges whose error grows with their spread: over 60 draws the realised share of
    wrong answers among the auto-accepted held-out answers stays <= α in at least 1 - δ of them."""
    rng = np.random.default_rng(7)
    alpha, delta, within = 0.1, 0.1, 0
    for _ in range(60):
        spread = rng.random(600) * 3
        wrong = rng.random(600) < 0.02 + 0.25 * spread / 3
        cal, test = slice(0, 300), slice(300, 600)
        result = stats.calibrate_deferral(spread[cal], wrong[cal], alpha=alpha, delta=delta)
        if result.threshold is None:
            within += 1
            continue
        accepted = spread[test] <= result.threshold
        within += (wrong[test] & accepted).sum() / max(1, accepted.sum()) <= alpha + 0.02
    assert within >= 54


def test_crc_threshold_bound():
    signal = np.arange(10, dtype=float)
    wrong = np.array([0, 0, 0, 0, 1, 0, 1, 1, 1, 1], bool)
    tau = stats.crc_threshold(signal, wrong, alpha=0.2)
    # (n·R̂ + 1)/(n + 1) <= 0.2 needs n·R̂ <= 1.2: at most one wrong answer accepted, so τ = 5
    assert tau == 5.0


def test_agreement_equals_scikit_learn_and_krippendorff():
    import krippendorff
    from sklearn.metrics import cohen_kappa_score

    judge = [3, 5, 7, 2, 9, 4, 6, 8]
    gold = [3, 4, 7, 3, 8, 4, 7, 8]
    out = stats.agreement(judge, gold)
    assert out["qwk"] == pytest.approx(cohen_kappa_score(gold, judge, weights="quadratic"))
    assert out["alpha"] == pytest.approx(krippendorff.alpha(reliability_data=[judge, gold], level_of_measurement="interval"))
    assert out["exact"] == 4 / 8 and out["within_1"] == 1.0
    assert stats.agreement([5], [5])["alpha"] is None  # one unit: not estimable


def test_first_wrong_step_by_hand():
    cases = [(2, 2), (3, 2), (None, 1), (4, 4), (None, None), (1, None), (None, None)]
    out = stats.first_wrong_step(cases)
    assert out["erroneous"] == 4 and out["accuracy_erroneous"] == 2 / 4 and out["within_one"] == 3 / 4
    assert out["accuracy_correct"] == 2 / 3
    assert out["f1"] == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))


def test_calibration_by_hand():
    samples = [[5, 5, 5, 5], [3, 3, 4, 4], [7, 7, 7, 8]]
    gold = [5, 4, 8]
    out = stats.calibration(samples, gold, bins=10)
    # confidences 1.0 (right), 0.5 (top 3, wrong), 0.75 (top 7, wrong)
    assert out["ece"] == pytest.approx((abs(1 - 1) + abs(0.5 - 0) + abs(0.75 - 0)) / 3)
    brier = [0.0, 0.25 + 0.25, 0.75 ** 2 + 0.75 ** 2]
    assert out["brier"] == pytest.approx(np.mean(brier))


def test_cohen_kappa_equals_scikit_learn_and_is_undefined_without_variation():
    from sklearn.metrics import cohen_kappa_score

    judge = [True, True, False, True, False, True, True, False, False, True]
    expert = [True, False, False, True, False, True, True, True, False, False]
    assert stats.cohen_kappa(judge, expert) == pytest.approx(cohen_kappa_score(expert, judge))
    nominal = ["a", "b", "c", "a", "b", "a"], ["a", "b", "b", "a", "c", "c"]
    assert stats.cohen_kappa(*nominal) == pytest.approx(cohen_kappa_score(*nominal))
    assert stats.cohen_kappa([False] * 4, [False] * 4) is None  # scikit-learn: nan
    assert stats.cohen_kappa([], []) is None
    assert stats.cohen_kappa([True, False], [False, True]) == pytest.approx(-1.0)
