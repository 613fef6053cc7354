"""The statistics of the Validity view (pure numpy/scipy; no Django, no app).

Four questions a research group or an exam board asks of a judge before using it, each with its
method (docs/validity.md has the assumptions and citations):

1. May it replace an expert here? The Alternative Annotator Test (`alt_test`; Calderon, Reichart
   and Dror, 2025), re-implemented from the paper's definitions.
2. What is the true figure, with its help? Prediction-powered inference with PPI++ power tuning
   (`ppi_mean`; Angelopoulos et al. 2023, Angelopoulos, Duchi and Zrnic 2023), with a
   cluster-robust variance (answers of one question are not independent), and the number of golds
   an interval of a chosen width needs (`golds_for_width`).
3. Which answers must a human still read? Deferral with a guarantee (`calibrate_deferral`): the
   largest set of answers the judge may grade alone such that, with confidence 1 - δ, the share of
   them off by >= d points is at most α (Learn-then-Test over a fixed grid of thresholds with
   Clopper-Pearson bounds and a Bonferroni correction), and the marginal conformal-risk-control threshold beside it (`crc_threshold`).
4. Where does it go wrong? Raw agreement beside chance-corrected agreement (`agreement`), first-
   wrong-step accuracy (`first_wrong_step`), and calibration of sampled scores (`calibration`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats as sps

from core.uncertainty import MIN_CLUSTERS

CONFIDENCE = 0.95
AAT_EPSILON = 0.2  # the paper's ε for expert annotators (0.1 for crowd workers)
AAT_Q = 0.05  # Benjamini-Yekutieli false discovery rate
AAT_MIN_EXPERTS = 3
AAT_MIN_ITEMS = 10  # below this the per-expert t-tests are not run
AAT_RECOMMENDED_ITEMS = 50  # the paper's recommendation (50-100)


# --- 1. The Alternative Annotator Test -------------------------------------------------------

@dataclass
class ExpertComparison:
    expert: str
    items: int
    judge_wins: float  # share of items where the judge aligns with the others at least as well
    expert_wins: float
    p_value: float | None
    p_adjusted: float | None = None
    rejected: bool = False  # H0 rejected: the judge is a good enough alternative to this expert


@dataclass
class AltTestResult:
    runnable: bool
    needs: list = field(default_factory=list)  # codes of what is missing when not runnable
    experts: list = field(default_factory=list)
    items: int = 0
    epsilon: float = AAT_EPSILON
    q: float = AAT_Q
    winning_rate: float | None = None  # ω
    advantage_probability: float | None = None  # ρ
    passes: bool = False
    below_recommended: bool = False


def _alignment(value, others):
    """How well a score aligns with the other experts' scores: minus its distance to their mean
    (the paper's choice for numeric labels)."""
    return -abs(value - float(np.mean(others)))


def alt_test(items, *, epsilon=AAT_EPSILON, q=AAT_Q, min_items=AAT_MIN_ITEMS):
    """The Alternative Annotator Test on `items`: [{"judge": float, "experts": {name: float}}].

    For each expert j, on the items j scored together with at least two other experts: W_f = 1 when
    the judge aligns with the others at least as well as j, W_h = 1 when j does at least as well as
    the judge; d = W_h - W_f; one-sided paired t-test of H0: mean(d) >= ε against mean(d) < ε.
    The p-values of all experts are corrected with Benjamini-Yekutieli at `q`; ω is the share of
    experts whose H0 is rejected, ρ the mean of the experts' judge-win shares. Passes at ω >= 0.5.
    """
    usable = [i for i in items if len(i["experts"]) >= AAT_MIN_EXPERTS and i.get("judge") is not None]
    names = sorted({name for i in usable for name in i["experts"]})
    result = AltTestResult(runnable=False, items=len(usable), epsilon=epsilon, q=q)
    if len(names) < AAT_MIN_EXPERTS:
        result.needs.append("experts")
    if len(usable) < min_items:
        result.needs.append("items")
    if result.needs:
        return result
    comparisons = []
    for name in names:
        judge_w, expert_w = [], []
        for item in usable:
            if name not in item["experts"]:
                continue
            others = [v for k, v in item["experts"].items() if k != name]
            s_judge = _alignment(item["judge"], others)
            s_expert = _alignment(item["experts"][name], others)
            judge_w.append(1.0 if s_judge >= s_expert else 0.0)
            expert_w.append(1.0 if s_expert >= s_judge else 0.0)
        if len(judge_w) < 2:
            continue
        d = np.array(expert_w) - np.array(judge_w)
        comparisons.append(ExpertComparison(name, len(d), float(np.mean(judge_w)), float(np.mean(expert_w)),
                                            _one_sided_p(d, epsilon)))
    if len(comparisons) < AAT_MIN_EXPERTS:
        result.needs.append("experts")
        return result
    adjusted = sps.false_discovery_control([c.p_value for c in comparisons], method="by")
    for comparison, p in zip(comparisons, adjusted):
        comparison.p_adjusted = float(p)
        comparison.rejected = bool(p <= q)
    result.runnable = True
    result.experts = comparisons
    result.winning_rate = sum(c.rejected for c in comparisons) / len(comparisons)
    result.advantage_probability = float(np.mean([c.judge_wins for c in comparisons]))
    result.passes = result.winning_rate >= 0.5
    result.below_recommended = len(usable) < AAT_RECOMMENDED_ITEMS
    return result


def _one_sided_p(d, epsilon):
    """p of the paired t-test of H0: mean(d) >= ε against H1: mean(d) < ε."""
    n = len(d)
    sd = float(np.std(d, ddof=1))
    gap = float(np.mean(d)) - epsilon
    if sd == 0:  # every item alike: the sign of the gap decides, at the test's resolution
        return 1.0 / (n + 1) if gap < 0 else 1.0
    return float(sps.t.cdf(gap / (sd / math.sqrt(n)), n - 1))


# --- 2. Prediction-powered estimates -------------------------------------------------------------

@dataclass
class Estimate:
    value: float | None
    low: float | None = None
    high: float | None = None
    n: int = 0
    clusters: int = 0
    reason: str | None = None  # why there is no interval: "clusters", "empty"
    extra: dict = field(default_factory=dict)

    def as_dict(self):
        return {"value": self.value, "low": self.low, "high": self.high, "n": self.n, "clusters": self.clusters,
                "reason": self.reason, **self.extra}


def _z(confidence):
    return float(sps.norm.ppf(0.5 + confidence / 2))


def _cluster_variance(contributions, clusters, *, correct):
    """Cluster-robust variance of a sum of centred contributions: Σ_g (Σ_{i in g} c_i)², with the
    G/(G-1) small-sample factor when clustering (`correct`)."""
    totals = {}
    for value, cluster in zip(contributions, clusters):
        totals[cluster] = totals.get(cluster, 0.0) + value
    g = len(totals)
    variance = float(sum(t * t for t in totals.values()))
    return variance * (g / (g - 1) if correct and g > 1 else 1.0), g


def power_tuning(y, f_lab, f_unlab):
    """PPI++'s λ for a mean: Cov(Y, f) / ((1 + n/N) Var(f)), clipped to [0, 1] (λ = 0 is gold alone)."""
    y, f_lab, f_unlab = (np.asarray(a, dtype=float) for a in (y, f_lab, f_unlab))
    n, big_n = len(y), len(f_unlab)
    if n < 2 or big_n < 1:
        return 0.0
    cov = float(np.mean((y - y.mean()) * (f_lab - f_lab.mean())))
    var = float(np.var(np.concatenate([f_lab, f_unlab]), ddof=1))
    if var == 0:
        return 0.0
    return float(np.clip(cov / ((1 + n / big_n) * var), 0.0, 1.0))


def ppi_mean(y, f_lab, f_unlab, *, clusters_lab=None, clusters_unlab=None, lam=None, confidence=CONFIDENCE,
             min_clusters=MIN_CLUSTERS):
    """The prediction-powered mean: λ·mean_N(f) + mean_n(Y - λ f), f on the N answers without a
    gold, (Y, f) on the n with one (a random subset). λ is tuned (PPI++) unless given (1: plain PPI).

    Clusters (question ids) give a cluster-robust variance of the two means together; without them
    every answer is its own cluster and the variance is ppi-python's, λ² var(f)/N + var(Y - λf)/n.
    """
    y, f_lab, f_unlab = (np.asarray(a, dtype=float) for a in (y, f_lab, f_unlab))
    n, big_n = len(y), len(f_unlab)
    if n < 2 or big_n < 1:
        return Estimate(None, n=n, reason="empty")
    lam = power_tuning(y, f_lab, f_unlab) if lam is None else float(lam)
    residual = y - lam * f_lab
    value = lam * float(f_unlab.mean()) + float(residual.mean())
    clustered = clusters_lab is not None
    if clustered:
        contributions = list(lam * (f_unlab - f_unlab.mean()) / big_n) + list((residual - residual.mean()) / n)
        variance, g = _cluster_variance(contributions, list(clusters_unlab) + list(clusters_lab), correct=True)
    else:
        variance = float(lam * lam * np.var(f_unlab) / big_n + np.var(residual) / n)
        g = n + big_n
    estimate = Estimate(value, n=n, clusters=g, extra={"lambda": lam, "N": big_n,
                                                         "variance": variance, "clustered": clustered})
    if clustered and g < min_clusters:
        estimate.reason = "clusters"
        return estimate
    half = _z(confidence) * math.sqrt(variance)
    estimate.low, estimate.high = value - half, value + half
    return estimate


def classical_mean(y, *, clusters=None, confidence=CONFIDENCE, min_clusters=MIN_CLUSTERS):
    """The experts-only estimate: the mean of the golds, its (cluster-robust) normal interval."""
    y = np.asarray(y, dtype=float)
    if len(y) < 2:
        return Estimate(None if not len(y) else float(y.mean()), n=len(y), reason="empty")
    if clusters is None:
        variance, g = float(np.var(y) / len(y)), len(y)
    else:
        variance, g = _cluster_variance(list((y - y.mean()) / len(y)), list(clusters), correct=True)
    estimate = Estimate(float(y.mean()), n=len(y), clusters=g, extra={"variance": variance})
    if clusters is not None and g < min_clusters:
        estimate.reason = "clusters"
        return estimate
    half = _z(confidence) * math.sqrt(variance)
    estimate.low, estimate.high = estimate.value - half, estimate.value + half
    return estimate


def effective_golds(ppi: Estimate, classical: Estimate):
    """How many golds the experts-only estimate would need for the PPI interval's width."""
    if ppi.reason == "empty" or classical.reason == "empty" or not ppi.extra.get("variance"):
        return None
    return classical.n * classical.extra["variance"] / ppi.extra["variance"]


def golds_for_width(width, y, f_lab, f_unlab, *, clusters_lab=None, clusters_unlab=None, confidence=CONFIDENCE):
    """Golds (drawn at random) the PPI interval needs to be `width` wide, at today's λ and variances.

    Var(n) = λ² var(f)/N + var(Y - λf)/n, inflated by today's design effect (the clustered variance
    over the unclustered one); returns (golds in all, None when the judge's own part alone is
    wider than asked: more golds cannot reach it, only gold on more of the answers)."""
    y, f_lab, f_unlab = (np.asarray(a, dtype=float) for a in (y, f_lab, f_unlab))
    if len(y) < 2 or len(f_unlab) < 1 or width <= 0:
        return None
    lam = power_tuning(y, f_lab, f_unlab)
    plain = ppi_mean(y, f_lab, f_unlab, lam=lam)
    effect = 1.0
    if clusters_lab is not None:
        clustered = ppi_mean(y, f_lab, f_unlab, lam=lam, clusters_lab=clusters_lab, clusters_unlab=clusters_unlab,
                             min_clusters=0)
        if plain.extra["variance"] > 0:
            effect = max(1.0, clustered.extra["variance"] / plain.extra["variance"])
    target = (width / (2 * _z(confidence))) ** 2 / effect
    judge_part = lam * lam * float(np.var(f_unlab)) / len(f_unlab)
    residual_var = float(np.var(y - lam * f_lab))
    if target <= judge_part:
        return None
    return max(len(y), math.ceil(residual_var / (target - judge_part)))


# --- 3. Deferral with a guarantee -------------------------------------------------------------------

def clopper_pearson_upper(k, n, delta):
    """One-sided (1 - δ) Clopper-Pearson upper bound of a proportion k/n."""
    if n == 0:
        return 1.0
    if k >= n:
        return 1.0
    return float(sps.beta.ppf(1 - delta, k + 1, n - k))


@dataclass
class Deferral:
    threshold: float | None  # answers whose risk signal is <= this are graded by the judge alone
    accepted: int = 0
    calibration: int = 0
    wrong_accepted: int = 0
    upper_bound: float | None = None
    steps: list = field(default_factory=list)  # (threshold, accepted, wrong, upper bound) tested in order


def candidate_thresholds(signal, grid=10):
    """The thresholds tried: the signal's values at the 1/grid, 2/grid, ..., 1 quantiles (fixed
    before looking at which answers are wrong), distinct."""
    values = np.sort(np.asarray(signal, dtype=float))
    if not len(values):
        return []
    picks = [values[max(0, math.ceil(k * len(values) / grid) - 1)] for k in range(1, grid + 1)]
    return sorted(set(float(v) for v in picks))


def calibrate_deferral(signal, wrong, *, alpha, delta=0.1, grid=10):
    """The largest accept-set {signal <= τ} whose share of wrong answers is <= α with confidence 1 - δ.

    Learn-then-Test with a Bonferroni correction over a fixed grid of thresholds (the signal's
    deciles): each τ is certified when the Clopper-Pearson (1 - δ/K) upper bound of the error share
    among the calibration answers it accepts is <= α, and the largest certified τ is chosen. All K
    certificates hold together with probability >= 1 - δ, whatever the shape of the risk."""
    signal, wrong = np.asarray(signal, dtype=float), np.asarray(wrong, dtype=bool)
    result = Deferral(threshold=None, calibration=len(signal))
    candidates = candidate_thresholds(signal, grid)
    level = delta / max(1, len(candidates))
    for tau in candidates:
        accepted = signal <= tau
        n_acc, k = int(accepted.sum()), int((wrong & accepted).sum())
        bound = clopper_pearson_upper(k, n_acc, level)
        result.steps.append((tau, n_acc, k, bound))
        if bound <= alpha:
            result.threshold, result.accepted, result.wrong_accepted, result.upper_bound = tau, n_acc, k, bound
    return result


def crc_threshold(signal, wrong, *, alpha):
    """Conformal risk control (marginal): the largest τ with (n·R̂(τ) + 1)/(n + 1) <= α, for the loss
    1{accepted and wrong} (monotone in τ, bounded by 1): the expected share of new answers that are
    both auto-accepted and off by >= d points is at most α."""
    signal, wrong = np.asarray(signal, dtype=float), np.asarray(wrong, dtype=bool)
    n = len(signal)
    best = None
    for tau in np.unique(signal):
        risk = float((wrong & (signal <= tau)).sum()) / n
        if (n * risk + 1) / (n + 1) <= alpha:
            best = float(tau)
        else:
            break
    return best


# --- 4. Where does it go wrong -----------------------------------------------------------------------

def agreement(judge, gold, *, full_score=None):
    """Raw exact and within-1 agreement beside chance-corrected agreement (quadratic-weighted κ on
    points rounded to whole points, Krippendorff's interval α), for paired scores."""
    from sklearn.metrics import cohen_kappa_score  # lazy: scikit-learn is slow to import

    judge, gold = np.asarray(judge, dtype=float), np.asarray(gold, dtype=float)
    n = len(judge)
    out = {"n": n, "exact": None, "within_1": None, "qwk": None, "alpha": None}
    if n == 0:
        return out
    out["exact"] = float(np.mean(np.abs(judge - gold) < 0.5))
    out["within_1"] = float(np.mean(np.abs(judge - gold) <= 1 + 1e-9))
    rounded_j, rounded_g = np.rint(judge).astype(int), np.rint(gold).astype(int)
    if n >= 2 and len(set(rounded_j) | set(rounded_g)) > 1:
        kappa = cohen_kappa_score(rounded_g, rounded_j, weights="quadratic")
        out["qwk"] = None if math.isnan(kappa) else float(kappa)
    out["alpha"] = interval_alpha(judge, gold)
    return out


def interval_alpha(a, b):
    """Krippendorff's α (interval metric) of two coders on the same units; None below two units."""
    import krippendorff  # lazy: the page's only user

    if len(a) < 2:
        return None
    values = np.vstack([np.asarray(a, dtype=float), np.asarray(b, dtype=float)])
    if np.all(values == values.flat[0]):
        return None
    value = krippendorff.alpha(reliability_data=values, level_of_measurement="interval")
    return None if value is None or math.isnan(value) else float(value)


def cohen_kappa(a, b):
    """Cohen's κ of two raters' nominal labels on the same items (unweighted): (p_o − p_e)/(1 − p_e),
    p_e from each rater's own label shares. None when undefined: no item, or chance agreement 1
    (both raters give one and the same label to every item)."""
    if len(a) != len(b):
        raise ValueError("two raters, the same items")
    n = len(a)
    if n == 0:
        return None
    observed = sum(1 for x, y in zip(a, b) if x == y) / n
    labels = set(a) | set(b)
    expected = sum((sum(1 for x in a if x == k) / n) * (sum(1 for y in b if y == k) / n) for k in labels)
    if expected >= 1 - 1e-12:
        return None
    return (observed - expected) / (1 - expected)


def first_wrong_step(cases):
    """ProcessBench's figures on [(judge_index or None, expert_index or None)]: the index of the first
    wrong step (None: no wrong step). Accuracy on erroneous answers (exact, and within one step), on
    correct ones, and their harmonic mean F1."""
    wrong = [(j, e) for j, e in cases if e is not None]
    right = [(j, e) for j, e in cases if e is None]
    acc_err = sum(1 for j, e in wrong if j == e) / len(wrong) if wrong else None
    within = sum(1 for j, e in wrong if j is not None and abs(j - e) <= 1) / len(wrong) if wrong else None
    acc_ok = sum(1 for j, _ in right if j is None) / len(right) if right else None
    f1 = None
    if acc_err is not None and acc_ok is not None:
        f1 = 0.0 if acc_err + acc_ok == 0 else 2 * acc_err * acc_ok / (acc_err + acc_ok)
    return {"erroneous": len(wrong), "correct": len(right), "accuracy_erroneous": acc_err,
            "within_one": within, "accuracy_correct": acc_ok, "f1": f1}


def calibration(samples, gold, *, bins=10):
    """Expected calibration error and Brier score of k sampled scores per answer.

    Each answer's samples, rounded to whole points, are its predicted distribution; the confidence
    is the share of its most frequent score, correct when that score equals the rounded gold. The
    Brier score is Σ_c (p_c - 1{gold = c})², averaged over answers. Returns the reliability table too.
    """
    rows = []
    for answer_samples, g in zip(samples, gold):
        values = [round(float(s)) for s in answer_samples if s is not None and math.isfinite(float(s))]
        if len(values) < 2:
            continue
        counts = {}
        for v in values:
            counts[v] = counts.get(v, 0) + 1
        top = max(sorted(counts), key=lambda v: counts[v])
        truth = round(float(g))
        brier = sum((c / len(values) - (1.0 if v == truth else 0.0)) ** 2 for v, c in counts.items())
        brier += 0.0 if truth in counts else 1.0
        rows.append((counts[top] / len(values), top == truth, brier))
    if not rows:
        return None
    table = []
    ece = 0.0
    for b in range(bins):
        low, high = b / bins, (b + 1) / bins
        members = [r for r in rows if low < r[0] <= high or (b == 0 and r[0] == 0)]
        if not members:
            continue
        confidence = float(np.mean([r[0] for r in members]))
        accuracy = float(np.mean([r[1] for r in members]))
        ece += len(members) / len(rows) * abs(confidence - accuracy)
        table.append({"low": low, "high": high, "n": len(members), "confidence": confidence, "accuracy": accuracy})
    return {"n": len(rows), "ece": ece, "brier": float(np.mean([r[2] for r in rows])), "bins": table}
