"""Judge-vs-gold figures: MSE, MAE, signed error, FR_d, correlations, bootstrap intervals.

Pure functions over paired score arrays; no database access here (see selectors for that).
FR_d is the share of answers with |judge - gold| >= d (FR_2 is the paper's "serious error").
"""
from dataclasses import dataclass, field

import numpy as np
from django.utils.translation import gettext

from core import uncertainty
from core.paired import FR_DISTANCES

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
    uncertainty: dict | None = None

    def as_dict(self):
        out = {
            "n": self.n, "mse": self.mse, "mae": self.mae, "mean_signed_error": self.mean_signed_error,
            **{f"fr_{d}": v for d, v in self.fr.items()},
            "pearson": self.pearson, "spearman": self.spearman, "over": self.over, "under": self.under,
            **{f"{name}_ci": list(bounds) for name, bounds in self.ci.items()},
        }
        if self.uncertainty is not None:
            out["uncertainty"] = self.uncertainty
        return out


def score_metrics(pred, gold, *, bootstrap=0, seed=0, clusters=None, unit=None, correlations=False):
    """All figures for one group of paired scores; bootstrap > 0 adds 95% intervals (MSE, MAE,
    mean signed error, FR_1..FR_5; Pearson and Spearman too with `correlations`) from `bootstrap`
    resamples of whole clusters (core.uncertainty): `clusters` gives each answer's question
    (unit "question"); None resamples answers one by one (unit "answer", for a group whose answers
    are independent, such as one question's). `uncertainty` says what was resampled and why an
    interval is missing."""
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
        intervals = delta_uncertainty(delta, clusters=clusters, unit=unit, n_resamples=bootstrap, seed=seed)
        if correlations:
            for method in ("pearson", "spearman"):
                intervals[method] = correlation_uncertainty(pred, gold, method, clusters=clusters, unit=unit,
                                                            n_resamples=bootstrap, seed=seed)
        result.ci = {name: tuple(interval.bounds()) for name, interval in intervals.items()}
        result.uncertainty = uncertainty_summary(intervals, seed=seed)
    return result


def uncertainty_summary(intervals, *, seed):
    """What a group's intervals rest on, for the page, the CSV and the JSON: the unit resampled,
    how many clusters, the resamples and seed, the note of a missing interval, which figures got
    a Wilson interval (a proportion at 0 or 1) and how many resamples were undefined."""
    resampled = [i for i in intervals.values() if i.method != uncertainty.WILSON] or list(intervals.values())
    notes = {name: interval.note() for name, interval in intervals.items() if not interval.estimable}
    return {
        "unit": resampled[0].unit,
        "clusters": resampled[0].clusters,
        "method": uncertainty.CLUSTER_BOOTSTRAP,
        "resamples": max(i.resamples for i in intervals.values()),
        "seed": seed,
        "min_clusters": uncertainty.MIN_CLUSTERS,
        "note": next(iter(notes.values()), ""),
        "notes": notes,
        "wilson": sorted(name for name, interval in intervals.items() if interval.method == uncertainty.WILSON),
        "undefined": {name: interval.undefined for name, interval in intervals.items() if interval.undefined},
    }


# --- intervals -----------------------------------------------------------------------------
#
# The rules are core.uncertainty's: whole clusters (questions) resampled, no interval below
# MIN_CLUSTERS clusters, Wilson at a proportion of 0 or 1, undefined resamples counted.
# MSE, MAE, signed error and FR_d are means of per-answer values, so a resample is summarised by
# each drawn cluster's sums: one multinomial draw over the distinct clusters per resample,
# O(resamples x distinct clusters), and answers resampled one by one (unit "answer") collapse to
# their distinct deltas, so 100,000 results bootstrap as fast as 100.

DELTA_NAMES = ("mse", "mae", "mean_signed_error", *(f"fr_{d}" for d in FR_DISTANCES))


def _clusters_or_answers(n, clusters, unit):
    if clusters is None:
        return np.arange(n), unit or "answer"
    clusters = np.asarray(clusters)
    if clusters.shape != (n,):
        raise ValueError(gettext("every answer needs its question"))
    return clusters, unit or "question"


def _delta_columns(delta):
    absolute = np.abs(delta)
    return {"mse": delta**2, "mae": absolute, "mean_signed_error": delta,
            **{f"fr_{d}": (absolute >= d - _EPS).astype(float) for d in FR_DISTANCES}}


def delta_uncertainty(delta, *, clusters=None, unit=None, n_resamples=1000, seed=0, confidence=0.95):
    """{name: core.uncertainty.Interval} of MSE, MAE, mean signed error and FR_d from the deltas
    judge - gold, whole clusters resampled (seeded, so repeatable)."""
    delta = np.asarray(delta, dtype=float)
    repeats = None
    if clusters is None:  # answers one by one: only their distinct deltas matter
        delta, repeats = np.unique(np.round(delta, 9), return_counts=True)
    else:
        clusters, unit = _clusters_or_answers(delta.size, clusters, unit)
    return uncertainty.cluster_bootstrap(
        _delta_columns(delta), clusters, n_resamples=n_resamples, seed=seed, confidence=confidence,
        unit=unit or ("answer" if repeats is not None else "question"), proportions={f"fr_{d}" for d in FR_DISTANCES},
        repeats=repeats)


def delta_intervals(delta, *, clusters=None, unit=None, n_resamples=1000, seed=0, confidence=0.95):
    """delta_uncertainty as {name: (low, high)}."""
    return {name: tuple(interval.bounds()) for name, interval in delta_uncertainty(
        delta, clusters=clusters, unit=unit, n_resamples=n_resamples, seed=seed, confidence=confidence).items()}


def wilson_interval(successes, n, *, confidence=0.95):
    """Wilson score interval of a proportion successes/n, as (low, high); (None, None) when n is 0
    (core.uncertainty.wilson). Unlike the normal approximation it stays inside [0, 1] and is usable
    at 0/n and n/n."""
    return uncertainty.wilson(successes, n, confidence=confidence)


def bootstrap_interval(pred, gold, statistic, *, clusters=None, unit=None, n_resamples=1000, seed=0,
                       confidence=0.95):
    """Cluster-bootstrap percentile interval of statistic(pred, gold) (whole clusters resampled;
    None: answers one by one). Seeded: repeatable. (None, None) when not estimable."""
    return tuple(bootstrap_uncertainty(pred, gold, statistic, clusters=clusters, unit=unit, n_resamples=n_resamples,
                                       seed=seed, confidence=confidence).bounds())


def bootstrap_uncertainty(pred, gold, statistic, *, clusters=None, unit=None, n_resamples=1000, seed=0,
                          confidence=0.95):
    pred, gold = _arrays(pred, gold)
    clusters, unit = _clusters_or_answers(pred.size, clusters, unit)
    return uncertainty.bootstrap_statistic(lambda rows: statistic(pred[rows], gold[rows]), clusters,
                                           n_resamples=n_resamples, seed=seed, confidence=confidence, unit=unit)


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


def _draw_counts(rng, counts, n_resamples):
    n = int(counts.sum())
    return rng.multinomial(n, counts / n, size=n_resamples), n


def distinct_pairs(pred, gold):
    """(pairs, counts): the distinct (judge, gold) pairs, a k x 2 array, and how often each occurs."""
    pairs, counts, _ = _pair_codes(pred, gold)
    return pairs, counts


def _pair_codes(pred, gold):
    """(distinct pairs, their counts, each answer's pair code)."""
    pred, gold = _arrays(pred, gold)
    pred, gold = np.round(pred, 9), np.round(gold, 9)
    if not pred.size:
        return np.empty((0, 2)), np.array([], dtype=int), np.array([], dtype=int)
    gold_values, gold_codes = np.unique(gold, return_inverse=True)
    pred_values, pred_codes = np.unique(pred, return_inverse=True)
    keys, inverse, counts = np.unique(pred_codes * len(gold_values) + gold_codes, return_inverse=True,
                                      return_counts=True)  # one 1-D sort
    pairs = np.stack([pred_values[keys // len(gold_values)], gold_values[keys % len(gold_values)]], axis=1)
    return pairs, counts, inverse.reshape(-1)


def correlation_interval(pred, gold, method="pearson", *, clusters=None, unit=None, n_resamples=1000, seed=0,
                         confidence=0.95):
    """Percentile interval of the Pearson or Spearman correlation, whole clusters resampled (None:
    answers one by one); resamples where it is undefined (constant scores) are counted, and too
    many make it not estimable. Seeded: repeatable. (None, None) when not estimable."""
    return tuple(correlation_uncertainty(pred, gold, method, clusters=clusters, unit=unit, n_resamples=n_resamples,
                                         seed=seed, confidence=confidence).bounds())


def correlation_uncertainty(pred, gold, method="pearson", *, clusters=None, unit=None, n_resamples=1000, seed=0,
                            confidence=0.95):
    """correlation_interval as a core.uncertainty.Interval.

    Both correlations depend on a resample only through how often each distinct (judge, gold)
    pair comes up (Spearman: Pearson of the average ranks). A resample draws clusters; each
    distinct cluster is a row of pair counts, so a resample's pair counts are its cluster counts
    times that table: O(resamples x distinct pairs), and 100,000 results cost what 100 do."""
    if method not in ("pearson", "spearman"):
        raise KeyError(method)
    pairs, counts, pair_of = _pair_codes(pred, gold)
    independent = clusters is None
    clusters, unit = _clusters_or_answers(pair_of.size, clusters, unit)
    codes, k = uncertainty.cluster_codes(clusters)
    method_name = uncertainty.CLUSTER_BOOTSTRAP
    if pair_of.size < 3 or not n_resamples:
        return uncertainty.not_estimable("empty", method=method_name, unit=unit, clusters=k)
    if k < uncertainty.MIN_CLUSTERS:
        return uncertainty.not_estimable("clusters", method=method_name, unit=unit, clusters=k)
    if independent:  # each answer its own cluster: the distinct clusters are the distinct pairs
        types, multiplicity = np.eye(len(pairs)), counts
    else:
        table = np.zeros((k, len(pairs)))
        np.add.at(table, (codes, pair_of), 1.0)
        types, multiplicity = uncertainty.cluster_types(table)
    x_values, x_codes = np.unique(pairs[:, 0], return_inverse=True)
    y_values, y_codes = np.unique(pairs[:, 1], return_inverse=True)
    rng = np.random.default_rng(seed)
    chunk = max(1, min(n_resamples, 2_000_000 // max(len(pairs), len(types))))
    values, done = [], 0
    while done < n_resamples:
        size = min(chunk, n_resamples - done)
        weights = uncertainty.cluster_draws(rng, multiplicity, size).astype(float) @ types
        defined = _varies(weights, x_codes, len(x_values)) & _varies(weights, y_codes, len(y_values))
        if method == "spearman":
            x = _average_ranks(weights, x_codes, len(x_values))
            y = _average_ranks(weights, y_codes, len(y_values))
        else:
            x, y = pairs[:, 0], pairs[:, 1]
        with np.errstate(invalid="ignore", divide="ignore"):
            r = _weighted_pearson(weights, x, y)
        values.append(np.where(defined & np.isfinite(r), r, np.nan))
        done += size
    return uncertainty.percentile(np.concatenate(values), confidence=confidence, unit=unit, clusters=k)


def correlation_interval_from_counts(pairs, counts, method="pearson", *, n_resamples=1000, seed=0, confidence=0.95):
    """correlation_interval for pairs already grouped (distinct (judge, gold) rows and their
    counts), answers resampled one by one: only for answers known to be independent."""
    pairs, counts = np.asarray(pairs, dtype=float).reshape(-1, 2), np.asarray(counts, dtype=int)
    return correlation_interval(np.repeat(pairs[:, 0], counts), np.repeat(pairs[:, 1], counts), method,
                                n_resamples=n_resamples, seed=seed, confidence=confidence)


@dataclass
class EvaluationGap:
    mse_ratio: float | None
    mse_ratio_ci: tuple
    fr2_human: float | None
    fr2_synthetic: float | None
    fr2_difference_ci: tuple
    uncertainty: dict | None = None

    def as_dict(self):
        out = {
            "mse_ratio": self.mse_ratio, "mse_ratio_ci": list(self.mse_ratio_ci),
            "fr2_human": self.fr2_human, "fr2_synthetic": self.fr2_synthetic,
            "fr2_difference_ci": list(self.fr2_difference_ci),
        }
        if self.uncertainty is not None:
            out["uncertainty"] = self.uncertainty
        return out


def evaluation_gap(human_pred, human_gold, synthetic_pred, synthetic_gold, *, human_clusters=None,
                   synthetic_clusters=None, unit=None, n_resamples=1000, seed=0):
    """Human MSE / synthetic MSE and FR_2 of each, with intervals: each group's clusters
    (questions; None: answers one by one) resampled apart. The ratio's interval has no upper
    bound when a resample's synthetic MSE can be 0 (its resamples are kept as +inf, not dropped);
    a ratio with synthetic MSE 0 itself is undefined (None)."""
    hp, hg = _arrays(human_pred, human_gold)
    sp, sg = _arrays(synthetic_pred, synthetic_gold)
    fr2_h, fr2_s = failure_rate(hp, hg, 2), failure_rate(sp, sg, 2)
    synthetic_mse = mse(sp, sg)
    human_mse = mse(hp, hg)
    ratio = human_mse / synthetic_mse if synthetic_mse and human_mse is not None else None
    h_clusters, h_unit = _clusters_or_answers(hp.size, human_clusters, unit)
    s_clusters, s_unit = _clusters_or_answers(sp.size, synthetic_clusters, unit)
    h_codes, h_k = uncertainty.cluster_codes(h_clusters)
    s_codes, s_k = uncertainty.cluster_codes(s_clusters)
    k = min(h_k, s_k)
    info = {"unit": h_unit, "clusters": {"human": h_k, "synthetic": s_k}, "method": uncertainty.CLUSTER_BOOTSTRAP,
            "resamples": n_resamples, "seed": seed, "min_clusters": uncertainty.MIN_CLUSTERS,
            "ratio_unbounded": False, "ratio_undefined": 0, "note": ""}
    if not hp.size or not sp.size or not n_resamples:
        info["note"] = uncertainty.note("empty", k)
        return EvaluationGap(ratio, (None, None), fr2_h, fr2_s, (None, None), info)
    if k < uncertainty.MIN_CLUSTERS:
        info["note"] = uncertainty.note("clusters", k, h_unit if h_k <= s_k else s_unit)
        return EvaluationGap(ratio, (None, None), fr2_h, fr2_s, (None, None), info)
    rng = np.random.default_rng(seed)

    def totals(delta, codes, k):
        table = np.column_stack([np.ones(delta.size), delta**2, (np.abs(delta) >= 2 - _EPS).astype(float)])
        out = uncertainty.resampled_totals(table, codes, k, rng, n_resamples)
        return out[:, 1] / out[:, 0], out[:, 2] / out[:, 0]

    h_mse, h_fr2 = totals(hp - hg, h_codes, h_k)
    s_mse, s_fr2 = totals(sp - sg, s_codes, s_k)
    ratio_interval = uncertainty.percentile(uncertainty.ratio_draws(h_mse, s_mse), unit=h_unit, clusters=k)
    difference = uncertainty.percentile(h_fr2 - s_fr2, unit=h_unit, clusters=k)
    info.update(ratio_unbounded=ratio_interval.unbounded, ratio_undefined=ratio_interval.undefined,
                note=ratio_interval.note())
    return EvaluationGap(ratio, tuple(ratio_interval.bounds()), fr2_h, fr2_s, tuple(difference.bounds()), info)


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
