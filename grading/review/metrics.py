"""Judge-vs-gold figures: MSE, MAE, signed error, FR_d, correlations, bootstrap intervals.

Pure functions over paired score arrays; no database access here (see selectors for that).
FR_d is the share of answers with |judge - gold| >= d (FR_2 is the paper's "serious error").
"""
import math
from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np
from django.utils.translation import gettext

FR_DISTANCES = (1, 2, 3, 4, 5)
_EPS = 1e-9


def _arrays(pred, gold):
    pred = np.asarray(pred, dtype=float)
    gold = np.asarray(gold, dtype=float)
    if pred.shape != gold.shape:
        raise ValueError(gettext("judge and gold scores must pair up"))
    return pred, gold


def mse(pred, gold):
    pred, gold = _arrays(pred, gold)
    return float(np.mean((pred - gold) ** 2)) if pred.size else None


def failure_rate(pred, gold, d):
    pred, gold = _arrays(pred, gold)
    return float(np.mean(np.abs(pred - gold) >= d - _EPS)) if pred.size else None


def _correlation(func, pred, gold):
    if pred.size < 3 or np.ptp(pred) == 0 or np.ptp(gold) == 0:
        return None  # undefined for constant input
    return float(func(pred, gold))


def _pearson(x, y):
    """Pearson's r (as scipy.stats.pearsonr's statistic, without its test: a report computes
    dozens, and scipy's per-call overhead was most of their cost)."""
    sx, sy = x - x.mean(), y - y.mean()
    r = float(np.sum(sx * sy) / np.sqrt(np.sum(sx * sx) * np.sum(sy * sy)))
    return max(-1.0, min(1.0, r))


def _ranks(values):
    """Ranks from 1, ties given their average rank (scipy.stats.rankdata's 'average')."""
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    return ((ends - counts + 1 + ends) / 2.0)[inverse]


def _spearman(x, y):
    """Spearman's rho: Pearson's r of the average ranks (scipy.stats.spearmanr's statistic)."""
    return _pearson(_ranks(x), _ranks(y))


@dataclass
class ScoreMetrics:
    n: int
    mse: float | None
    mae: float | None
    mean_signed_error: float | None
    fr: dict = field(default_factory=dict)
    pearson: float | None = None
    spearman: float | None = None
    over: int = 0
    under: int = 0
    ci: dict = field(default_factory=dict)

    def as_dict(self):
        return {
            "n": self.n, "mse": self.mse, "mae": self.mae, "mean_signed_error": self.mean_signed_error,
            **{f"fr_{d}": v for d, v in self.fr.items()},
            "pearson": self.pearson, "spearman": self.spearman, "over": self.over, "under": self.under,
            **{f"{name}_ci": list(bounds) for name, bounds in self.ci.items()},
        }


def score_metrics(pred, gold, *, bootstrap=0, seed=0):
    """All figures for one group of paired scores; bootstrap > 0 adds 95% intervals
    (MSE, MAE, mean signed error, FR_1..FR_5), from `bootstrap` resamples of the pairs."""
    pred, gold = _arrays(pred, gold)
    if not pred.size:
        return ScoreMetrics(n=0, mse=None, mae=None, mean_signed_error=None, fr={d: None for d in FR_DISTANCES})
    delta = pred - gold
    result = ScoreMetrics(
        n=int(pred.size),
        mse=float(np.mean(delta**2)),
        mae=float(np.mean(np.abs(delta))),
        mean_signed_error=float(np.mean(delta)),
        fr={d: float(np.mean(np.abs(delta) >= d - _EPS)) for d in FR_DISTANCES},
        pearson=_correlation(_pearson, pred, gold),
        spearman=_correlation(_spearman, pred, gold),
        over=int(np.sum(delta > _EPS)),
        under=int(np.sum(delta < -_EPS)),
    )
    if bootstrap:
        result.ci = delta_intervals(delta, n_resamples=bootstrap, seed=seed)
    return result


# --- bootstrap ---------------------------------------------------------------------------
#
# MSE, MAE, signed error and FR_d depend on the pairs only through their deltas, so resampling
# n pairs with replacement is the same as drawing, for each distinct delta, how many times it
# comes up: one multinomial draw per resample over the k distinct deltas. That costs
# O(resamples x k) instead of O(resamples x n), and scores are mostly whole or half points (k is
# small), so 100,000 results bootstrap as fast as 100.

def _distinct_deltas(delta):
    values, counts = np.unique(np.round(np.asarray(delta, dtype=float), 9), return_counts=True)
    return values, counts


def _draw_counts(rng, counts, n_resamples):
    n = int(counts.sum())
    return rng.multinomial(n, counts / n, size=n_resamples), n


def _percentiles(values, confidence=0.95):
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return (float(low), float(high))


def _delta_statistics(values):
    """Per-distinct-delta contributions whose count-weighted mean is each statistic."""
    rows = {"mse": values**2, "mae": np.abs(values), "mean_signed_error": values}
    rows.update({f"fr_{d}": (np.abs(values) >= d - _EPS).astype(float) for d in FR_DISTANCES})
    return rows


def delta_intervals(delta, *, n_resamples=1000, seed=0, confidence=0.95):
    """Percentile bootstrap intervals of MSE, MAE, mean signed error and FR_d from the deltas
    judge - gold (pairs resampled with replacement; seeded, so repeatable)."""
    delta = np.asarray(delta, dtype=float)
    names = ["mse", "mae", "mean_signed_error", *(f"fr_{d}" for d in FR_DISTANCES)]
    if delta.size < 2:
        return {name: (None, None) for name in names}
    values, counts = _distinct_deltas(delta)
    draws, n = _draw_counts(np.random.default_rng(seed), counts, n_resamples)
    return {name: _percentiles(draws @ row / n, confidence) for name, row in _delta_statistics(values).items()}


def wilson_interval(successes, n, *, confidence=0.95):
    """Wilson score interval of a proportion successes/n, as (low, high); (None, None) when n is 0.

    Unlike the normal approximation it stays inside [0, 1] and is usable at 0/n and n/n."""
    if not n:
        return (None, None)
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    low = 0.0 if successes <= 0 else max(0.0, centre - half)
    high = 1.0 if successes >= n else min(1.0, centre + half)
    return (low, high)


def _resample_indices(rng, n, n_resamples, chunk=None):
    """Index arrays of resamples, a few at a time (an n_resamples x n matrix would not fit for large n)."""
    chunk = chunk or max(1, min(n_resamples, 2_000_000 // max(n, 1)))
    done = 0
    while done < n_resamples:
        size = min(chunk, n_resamples - done)
        yield from rng.integers(0, n, size=(size, n))
        done += size


def bootstrap_interval(pred, gold, statistic, *, n_resamples=1000, seed=0, confidence=0.95):
    """Percentile bootstrap interval of statistic(pred, gold), resampling pairs. Seeded: repeatable."""
    pred, gold = _arrays(pred, gold)
    if pred.size < 2:
        return (None, None)
    rng = np.random.default_rng(seed)
    values = [statistic(pred[idx], gold[idx]) for idx in _resample_indices(rng, pred.size, n_resamples)]
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return (float(low), float(high))


def _weighted_pearson(weights, x, y):
    """Pearson correlation under each row of `weights` (counts of the distinct pairs x[i], y[i]
    in one resample, or their ranks per row when x, y are 2-D); NaN where a row is constant."""
    n = weights.sum(axis=1)
    x = np.broadcast_to(x, weights.shape)
    y = np.broadcast_to(y, weights.shape)
    mx = np.einsum("ij,ij->i", weights, x) / n
    my = np.einsum("ij,ij->i", weights, y) / n
    dx, dy = x - mx[:, None], y - my[:, None]
    sxx = np.einsum("ij,ij,ij->i", weights, dx, dx)
    syy = np.einsum("ij,ij,ij->i", weights, dy, dy)
    sxy = np.einsum("ij,ij,ij->i", weights, dx, dy)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = sxy / np.sqrt(sxx * syy)
    return np.clip(r, -1.0, 1.0)


def _average_ranks(weights, codes, n_values):
    """Average ranks (1-based, ties averaged, as scipy's rankdata) of each distinct pair's value
    in each resample: `codes` maps a pair to its value's position among the sorted distinct values."""
    per_value = np.zeros((weights.shape[0], n_values))
    np.add.at(per_value.T, codes, weights.T)
    below = np.cumsum(per_value, axis=1) - per_value
    return (below + (per_value + 1) / 2)[:, codes]


def _varies(weights, codes, n_values):
    per_value = np.zeros((weights.shape[0], n_values))
    np.add.at(per_value.T, codes, weights.T)
    return (per_value > 0).sum(axis=1) > 1


def distinct_pairs(pred, gold):
    """(pairs, counts): the distinct (judge, gold) pairs, a k x 2 array, and how often each occurs."""
    pred, gold = _arrays(pred, gold)
    pred, gold = np.round(pred, 9), np.round(gold, 9)
    if not pred.size:
        return np.empty((0, 2)), np.array([], dtype=int)
    gold_values, gold_codes = np.unique(gold, return_inverse=True)
    pred_values, pred_codes = np.unique(pred, return_inverse=True)
    keys, counts = np.unique(pred_codes * len(gold_values) + gold_codes, return_counts=True)  # one 1-D sort
    pairs = np.stack([pred_values[keys // len(gold_values)], gold_values[keys % len(gold_values)]], axis=1)
    return pairs, counts


def correlation_interval(pred, gold, method="pearson", *, n_resamples=1000, seed=0, confidence=0.95):
    """Percentile bootstrap interval of the Pearson or Spearman correlation (pairs resampled;
    resamples where it is undefined, constant scores, are skipped). Seeded: repeatable.

    As for delta_intervals, resampling the n pairs with replacement is drawing how often each
    distinct (judge, gold) pair comes up (one multinomial draw per resample); both correlations
    depend on the resample only through those counts (Spearman: Pearson of the average ranks),
    so each resample costs O(distinct pairs), not O(n), and 100,000 results cost what 100 do."""
    pairs, counts = distinct_pairs(pred, gold)
    return correlation_interval_from_counts(pairs, counts, method, n_resamples=n_resamples, seed=seed,
                                            confidence=confidence)


def correlation_interval_from_counts(pairs, counts, method="pearson", *, n_resamples=1000, seed=0, confidence=0.95):
    """correlation_interval for pairs already grouped: distinct (judge, gold) rows and their counts."""
    if method not in ("pearson", "spearman"):
        raise KeyError(method)
    pairs, counts = np.asarray(pairs, dtype=float).reshape(-1, 2), np.asarray(counts, dtype=int)
    if counts.sum() < 3 or not n_resamples:
        return (None, None)
    x_values, x_codes = np.unique(pairs[:, 0], return_inverse=True)
    y_values, y_codes = np.unique(pairs[:, 1], return_inverse=True)
    rng = np.random.default_rng(seed)
    chunk = max(1, min(n_resamples, 2_000_000 // len(pairs)))
    values, done = [], 0
    while done < n_resamples:
        size = min(chunk, n_resamples - done)
        weights, _ = _draw_counts(rng, counts, size)
        weights = weights.astype(float)
        defined = _varies(weights, x_codes, len(x_values)) & _varies(weights, y_codes, len(y_values))
        if method == "spearman":
            x = _average_ranks(weights, x_codes, len(x_values))
            y = _average_ranks(weights, y_codes, len(y_values))
        else:
            x, y = pairs[:, 0], pairs[:, 1]
        r = _weighted_pearson(weights, x, y)
        values.append(r[defined & np.isfinite(r)])
        done += size
    values = np.concatenate(values)
    return _percentiles(values, confidence) if values.size else (None, None)


@dataclass
class EvaluationGap:
    mse_ratio: float | None
    mse_ratio_ci: tuple
    fr2_human: float | None
    fr2_synthetic: float | None
    fr2_difference_ci: tuple

    def as_dict(self):
        return {
            "mse_ratio": self.mse_ratio, "mse_ratio_ci": list(self.mse_ratio_ci),
            "fr2_human": self.fr2_human, "fr2_synthetic": self.fr2_synthetic,
            "fr2_difference_ci": list(self.fr2_difference_ci),
        }


def evaluation_gap(human_pred, human_gold, synthetic_pred, synthetic_gold, *, n_resamples=1000, seed=0):
    """Human MSE / synthetic MSE and FR_2 of each, with bootstrap intervals (groups resampled apart)."""
    hp, hg = _arrays(human_pred, human_gold)
    sp, sg = _arrays(synthetic_pred, synthetic_gold)
    if hp.size < 2 or sp.size < 2:
        return EvaluationGap(None, (None, None), failure_rate(hp, hg, 2), failure_rate(sp, sg, 2), (None, None))
    synthetic_mse = mse(sp, sg)
    ratio = mse(hp, hg) / synthetic_mse if synthetic_mse else None
    if not n_resamples:
        return EvaluationGap(ratio, (None, None), failure_rate(hp, hg, 2), failure_rate(sp, sg, 2), (None, None))
    rng = np.random.default_rng(seed)
    (h_values, h_counts), (s_values, s_counts) = _distinct_deltas(hp - hg), _distinct_deltas(sp - sg)
    h_draws, h_n = _draw_counts(rng, h_counts, n_resamples)
    s_draws, s_n = _draw_counts(rng, s_counts, n_resamples)
    h_mse, s_mse = h_draws @ h_values**2 / h_n, s_draws @ s_values**2 / s_n
    serious = lambda values: (np.abs(values) >= 2 - _EPS).astype(float)  # noqa: E731
    differences = h_draws @ serious(h_values) / h_n - s_draws @ serious(s_values) / s_n
    usable = s_mse > 0
    ratio_ci = _percentiles(h_mse[usable] / s_mse[usable]) if usable.any() else (None, None)
    return EvaluationGap(ratio, ratio_ci, failure_rate(hp, hg, 2), failure_rate(sp, sg, 2), _percentiles(differences))


def fr_curve(pred, gold, distances=FR_DISTANCES):
    return [failure_rate(pred, gold, d) for d in distances]


def delta_histogram(pred, gold, *, width=1.0):
    """Counts of judge - gold in bins of `width`, keyed by the bin's lower edge."""
    pred, gold = _arrays(pred, gold)
    if not pred.size:
        return {}
    bins = np.floor((pred - gold) / width + _EPS) * width
    edges, counts = np.unique(bins, return_counts=True)
    return {float(e): int(c) for e, c in zip(edges, counts)}
