"""The uncertainty rules of every interval and p-value the tool shows, written once (pure numpy;
no Django, no app: review, studies, labelling and the methods report import it).

The rules (docs/review.md and docs/studies.md, "Uncertainty"):

- **What is resampled.** Answers to one question share its difficulty and rubric, so they are not
  independent: an answer-level statistic is resampled by whole clusters (`cluster_bootstrap`,
  one-stage: draw as many clusters as there are, with replacement, keep every answer of each
  drawn cluster). The cluster is the question by default; where every answer of a group belongs to
  one question (a per-question row) the unit is the answer, and the caller says so (`unit`).
- **Minimum clusters.** Below MIN_CLUSTERS clusters no interval is given: "not estimable:
  1 question" (a percentile interval from 2 or 3 clusters only lists their values).
- **Proportions at the boundary** (0 of n, n of n) have no bootstrap spread: a Wilson score interval
  on the answers is given instead (`wilson`), whose bound away from the boundary is positive. Not
  below MIN_CLUSTERS: from 1 to 4 clusters the answers' dependence cannot be estimated either, and a
  Wilson interval on one question's 0 of 8 answers ([0, 0.324]) would treat them as independent, so
  a boundary proportion is "not estimable" there like any other statistic.
- **Undefined resamples** (a statistic with no value on a resample: a correlation of constant
  scores, a ratio 0/0) are counted and reported, never scored as 0; when more than the interval's
  tail share (2.5 % at 95 %) is undefined the interval is not estimable, since the missing
  resamples could move a bound.
- **Ratios** may be unbounded: a resample whose denominator is 0 and numerator positive is +inf,
  kept; when the upper percentile falls on it the interval has no upper bound.
- **Statistics a bootstrap biases** (total variance, PCA shares: duplicated rows lower rank and
  variance) are given a delete-one-cluster jackknife interval (`jackknife`: subsamples of the
  clusters without replacement, no duplicate rows), centred on the estimate, so it contains it.
- **p-values of permutation and randomisation tests** are (1 + b) / (1 + N) for N random draws
  (b as or more extreme), b / N when every pattern is enumerated (the observed one among them),
  so never 0; they are printed with their resolution (`format_p`: "< 0.0001").

Every function that draws is seeded: the same data and seed give the same interval.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

CONFIDENCE = 0.95
RESAMPLES = 1000
MIN_CLUSTERS = 5
CLUSTER_BOOTSTRAP = "cluster bootstrap: whole clusters drawn with replacement, every answer of a drawn cluster kept"
WILSON = "Wilson score interval (a proportion at 0 or 1: no bootstrap spread)"
JACKKNIFE = "delete-one-cluster jackknife (clusters left out in turn, without replacement), t interval"
# unit -> (singular, plural), the words of "not estimable: 1 question"
UNITS = {"question": ("question", "questions"), "answer": ("answer", "answers"),
         "student": ("student", "students"), "segment": ("segment", "segments")}
_EPS = 1e-9


@dataclass
class Interval:
    """One interval and how it was made. `low`/`high` are None when not estimable; `unbounded`
    when the upper bound is +inf (a ratio whose denominator can be 0). `reason`: None (estimable),
    "clusters" (fewer than MIN_CLUSTERS), "undefined" (too many undefined resamples), "empty"
    (no data or no resamples), "degenerate" (the jackknife found no spread)."""

    low: float | None
    high: float | None
    method: str
    unit: str = "question"
    clusters: int = 0
    resamples: int = 0
    undefined: int = 0
    unbounded: bool = False
    reason: str | None = None
    extra: dict = field(default_factory=dict)

    @property
    def estimable(self) -> bool:
        return self.reason is None

    def bounds(self) -> list:
        """[low, high] (JSON-ready; high None when unbounded or not estimable)."""
        return [self.low, None if self.unbounded else self.high]

    def note(self) -> str:
        """Why there is no interval (English; data, e.g. for the JSON and the CSV), or ""."""
        return note(self.reason, self.clusters, self.unit, self.undefined, self.resamples)

    def as_dict(self) -> dict:
        return {"low": self.low, "high": None if self.unbounded else self.high, "method": self.method,
                "unit": self.unit, "clusters": self.clusters, "resamples": self.resamples,
                "undefined": self.undefined, "unbounded": self.unbounded, "reason": self.reason,
                "note": self.note(), **self.extra}


def note(reason, clusters, unit="question", undefined=0, resamples=0) -> str:
    """The English note of a missing interval: "not estimable: 1 question"."""
    if reason == "clusters":
        singular, plural = UNITS.get(unit, (unit, unit + "s"))
        return f"not estimable: {clusters} {singular if clusters == 1 else plural}"
    if reason == "undefined":
        return f"not estimable: undefined in {undefined} of {resamples} resamples"
    if reason == "degenerate":
        return "not estimable: no spread between clusters"
    if reason == "empty":
        return "not estimable: no data"
    return ""


def not_estimable(reason, *, method, unit="question", clusters=0, resamples=0, undefined=0) -> Interval:
    return Interval(None, None, method, unit=unit, clusters=clusters, resamples=resamples, undefined=undefined,
                    reason=reason)


# --- clusters -------------------------------------------------------------------------------

def cluster_codes(clusters) -> tuple[np.ndarray, int]:
    """(code 0..k-1 of each row's cluster, k)."""
    clusters = np.asarray(clusters)
    if not clusters.size:
        return np.array([], dtype=int), 0
    _, codes = np.unique(clusters, return_inverse=True)
    codes = codes.reshape(-1)
    return codes, int(codes.max()) + 1


def cluster_sums(columns, codes, k) -> np.ndarray:
    """k x m array: each cluster's sum of each column (columns: n x m, or n)."""
    columns = np.asarray(columns, dtype=float)
    if columns.ndim == 1:
        columns = columns[:, None]
    if codes.size == k and np.array_equal(codes, np.arange(k)):
        return columns.copy()  # one answer per cluster, already in order
    return np.column_stack([np.bincount(codes, weights=column, minlength=k) for column in columns.T])


def cluster_draws(rng, multiplicity, n_resamples) -> np.ndarray:
    """R x T counts of each cluster type in each one-stage cluster-bootstrap resample: k clusters
    drawn with replacement, clusters of identical content pooled as one type (`multiplicity` of
    each), which is the same distribution as drawing the k clusters one by one."""
    multiplicity = np.asarray(multiplicity, dtype=float)
    k = int(multiplicity.sum())
    return rng.multinomial(k, multiplicity / k, size=n_resamples)


def cluster_types(sums) -> tuple[np.ndarray, np.ndarray]:
    """(distinct rows of a k x m sums table, how many clusters have each): answers resampled one
    by one (unit answer) collapse to their distinct values, so 100,000 answers cost what 100 do."""
    sums = np.ascontiguousarray(np.round(np.asarray(sums, dtype=float), 9) + 0.0)  # + 0.0: no -0.0
    rows = sums.view(np.dtype((np.void, sums.dtype.itemsize * sums.shape[1]))).reshape(-1)
    _, first, counts = np.unique(rows, return_index=True, return_counts=True)  # a 1-D sort of row bytes
    return sums[first], counts


def resampled_totals(table, codes, k, rng, n_resamples) -> np.ndarray:
    """R x m: each column of `table` (n x m, one row per answer) summed over each one-stage
    cluster-bootstrap resample (a column of ones gives the resample's size)."""
    types, multiplicity = cluster_types(cluster_sums(table, codes, k))
    return cluster_draws(rng, multiplicity, n_resamples).astype(float) @ types


# --- intervals from draws -------------------------------------------------------------------

def percentile(draws, *, confidence=CONFIDENCE, method=CLUSTER_BOOTSTRAP, unit="question", clusters=0,
               estimate=None) -> Interval:
    """The percentile interval of bootstrap draws: NaN draws are undefined (counted; too many and
    the interval is not estimable); +inf draws are kept (an unbounded upper bound)."""
    draws = np.asarray(draws, dtype=float).reshape(-1)
    resamples = int(draws.size)
    if not resamples:
        return not_estimable("empty", method=method, unit=unit, clusters=clusters)
    defined = draws[~np.isnan(draws)]
    undefined = resamples - int(defined.size)
    tail = (1 - confidence) / 2
    if not defined.size or undefined > tail * resamples:
        return not_estimable("undefined", method=method, unit=unit, clusters=clusters, resamples=resamples,
                             undefined=undefined)
    ordered = np.sort(defined)
    low = _quantile(ordered, tail)
    high = _quantile(ordered, 1 - tail)
    unbounded = bool(math.isinf(high) and high > 0)
    interval = Interval(float(low), None if unbounded else float(high), method, unit=unit, clusters=clusters,
                        resamples=resamples, undefined=undefined, unbounded=unbounded)
    if math.isinf(low):
        interval.low = None
    return interval


def _quantile(ordered, q):
    """numpy's linear percentile, but +inf values stay +inf (no inf - inf = NaN)."""
    if np.isinf(ordered).any():
        position = q * (len(ordered) - 1)
        below, above = ordered[int(math.floor(position))], ordered[int(math.ceil(position))]
        if math.isinf(below) or math.isinf(above):
            return above if position % 1 else below
    return float(np.quantile(ordered, q))


def ratio_draws(numerator, denominator) -> np.ndarray:
    """numerator / denominator per resample: +inf where only the denominator is 0, NaN (undefined)
    where both are."""
    numerator, denominator = np.asarray(numerator, dtype=float), np.asarray(denominator, dtype=float)
    out = np.full(numerator.shape, np.nan)
    zero = np.abs(denominator) < _EPS
    np.divide(numerator, denominator, out=out, where=~zero)
    out[zero & (np.abs(numerator) >= _EPS)] = np.inf
    return out


def wilson(successes, n, *, confidence=CONFIDENCE) -> tuple:
    """Wilson score interval of successes/n as (low, high); (None, None) when n is 0. Inside
    [0, 1] and usable at 0/n and n/n (0/448: upper bound 0.0085)."""
    if not n:
        return (None, None)
    from statistics import NormalDist

    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(max(0.0, p * (1 - p)) / n + z * z / (4 * n * n)) / denominator
    low = 0.0 if successes <= 0 else max(0.0, centre - half)
    high = 1.0 if successes >= n else min(1.0, centre + half)
    return (low, high)


def wilson_interval(successes, n, *, unit="answer", clusters=None, confidence=CONFIDENCE) -> Interval:
    low, high = wilson(successes, n, confidence=confidence)
    if low is None:
        return not_estimable("empty", method=WILSON, unit=unit, clusters=clusters or 0)
    return Interval(low, high, WILSON, unit=unit, clusters=clusters if clusters is not None else n)


# --- the cluster bootstrap of means -----------------------------------------------------------

def cluster_bootstrap(columns: dict, clusters, *, n_resamples=RESAMPLES, seed=0, confidence=CONFIDENCE,
                      unit="question", proportions=(), ratios=None, min_clusters=MIN_CLUSTERS,
                      repeats=None) -> dict:
    """{name: Interval} of the mean of each per-answer column in `columns` ({name: values, one per
    answer}), resampling whole clusters (one-stage cluster bootstrap, seeded).

    - `proportions`: names of 0/1 columns; at an estimate of 0 or 1 they get a Wilson interval
      (from `min_clusters` clusters on, like every interval);
    - `ratios`: {name: (numerator column, denominator column)}: the ratio of two columns' means,
      unbounded where a resample's denominator is 0.
    - `repeats`: with `clusters` None, each row stands for that many identical answers, each its
      own cluster (unit "answer": 100,000 answers given as their few distinct values).
    Fewer than `min_clusters` clusters: every interval is "not estimable"."""
    ratios = ratios or {}
    names = list(columns) + list(ratios)
    if repeats is not None:
        repeats = np.asarray(repeats, dtype=int)
        k = n = int(repeats.sum())
    else:
        codes, k = cluster_codes(clusters)
        n = int(codes.size)
    if not n or not n_resamples:
        return {name: not_estimable("empty", method=CLUSTER_BOOTSTRAP, unit=unit, clusters=k) for name in names}
    keys = list(columns)
    rows = len(repeats) if repeats is not None else n
    table = np.column_stack([np.ones(rows)] + [np.asarray(columns[key], dtype=float) for key in keys])
    weights = repeats if repeats is not None else np.ones(n)
    if k < min_clusters:  # a boundary proportion too: with so few clusters their dependence is unknown
        return {name: not_estimable("clusters", method=CLUSTER_BOOTSTRAP, unit=unit, clusters=k) for name in names}
    out = {}
    for j, key in enumerate(keys, start=1):
        # A proportion of 0 or 1 has no spread in any resample: Wilson on the answers.
        estimate = float(np.average(table[:, j], weights=weights))
        if key in proportions and (estimate <= _EPS or estimate >= 1 - _EPS):
            interval = wilson_interval(int(round(estimate * n)), n, unit="answer", confidence=confidence)
            interval.extra = {"boundary": True}
            out[key] = interval
    rng = np.random.default_rng(seed)
    if repeats is not None:
        totals = cluster_draws(rng, repeats, n_resamples).astype(float) @ table
    else:
        totals = resampled_totals(table, codes, k, rng, n_resamples)
    for j, key in enumerate(keys, start=1):
        if key not in out:
            out[key] = percentile(totals[:, j] / totals[:, 0], confidence=confidence, unit=unit, clusters=k)
    for name, (top, bottom) in ratios.items():
        i, j = keys.index(top) + 1, keys.index(bottom) + 1
        out[name] = percentile(ratio_draws(totals[:, i], totals[:, j]), confidence=confidence, unit=unit,
                               clusters=k)
    return out


def bootstrap_statistic(statistic, clusters, *, n_resamples=RESAMPLES, seed=0, confidence=CONFIDENCE,
                        unit="question", min_clusters=MIN_CLUSTERS, tick=None) -> Interval:
    """Cluster-bootstrap percentile interval of statistic(row indices) (any statistic: a median, a
    correlation); NaN results are undefined resamples, counted. Seeded."""
    codes, k = cluster_codes(clusters)
    if not codes.size or not n_resamples:
        return not_estimable("empty", method=CLUSTER_BOOTSTRAP, unit=unit, clusters=k)
    if k < min_clusters:
        return not_estimable("clusters", method=CLUSTER_BOOTSTRAP, unit=unit, clusters=k)
    members = [np.flatnonzero(codes == c) for c in range(k)]
    rng = np.random.default_rng(seed)
    draws = np.empty(n_resamples)
    for r in range(n_resamples):
        if tick is not None:
            tick()
        picked = rng.integers(0, k, size=k)
        value = statistic(np.concatenate([members[i] for i in picked]))
        draws[r] = np.nan if value is None else value
    return percentile(draws, confidence=confidence, unit=unit, clusters=k)


def jackknife(statistic, clusters, *, estimate=None, confidence=CONFIDENCE, unit="question",
              min_clusters=MIN_CLUSTERS, tick=None) -> Interval:
    """Delete-one-cluster jackknife interval of statistic(row indices): each cluster left out in
    turn (subsamples without replacement: no row is duplicated, so a statistic of rank or spread
    is not biased down as by a bootstrap), standard error sqrt((k-1)/k * sum (t_-i - mean)^2),
    estimate ± t_{k-1} * se. It contains the estimate. A leave-one-out value that is undefined
    (None, NaN) is counted; any makes the interval not estimable."""
    codes, k = cluster_codes(clusters)
    if not codes.size:
        return not_estimable("empty", method=JACKKNIFE, unit=unit)
    if k < min_clusters:
        return not_estimable("clusters", method=JACKKNIFE, unit=unit, clusters=k)
    everything = np.arange(codes.size)
    estimate = statistic(everything) if estimate is None else estimate
    if estimate is None or not np.isfinite(estimate):
        return not_estimable("empty", method=JACKKNIFE, unit=unit, clusters=k)
    values = np.empty(k)
    for c in range(k):
        if tick is not None:
            tick()
        value = statistic(everything[codes != c])
        values[c] = np.nan if value is None else value
    undefined = int(np.isnan(values).sum())
    if undefined:
        return not_estimable("undefined", method=JACKKNIFE, unit=unit, clusters=k, resamples=k, undefined=undefined)
    se = math.sqrt((k - 1) / k * float(np.sum((values - values.mean()) ** 2)))
    from scipy.stats import t as student_t  # lazy: scipy.stats takes a second to load

    half = float(student_t.ppf(1 - (1 - confidence) / 2, k - 1)) * se
    bias = (k - 1) * (float(values.mean()) - float(estimate))
    return Interval(float(estimate) - half, float(estimate) + half, JACKKNIFE, unit=unit, clusters=k, resamples=k,
                    extra={"se": se, "jackknife_bias": bias})


# --- p-values -------------------------------------------------------------------------------

def monte_carlo_p(extreme: int, draws: int) -> float | None:
    """p of a randomisation test from `draws` random permutations, `extreme` of them as or more
    extreme than the observed: (1 + b) / (1 + N), never 0 (Phipson & Smyth 2010)."""
    if draws <= 0:
        return None
    return (1 + int(extreme)) / (1 + int(draws))


def exact_p(extreme: int, patterns: int) -> float | None:
    """p of a test that enumerates every pattern, the observed one included (b >= 1): b / N."""
    if patterns <= 0:
        return None
    return max(int(extreme), 1) / int(patterns)


def p_resolution(method_draws: int | None = None, *, exact_patterns: int | None = None) -> float | None:
    """The smallest p a test can give: 1 / (1 + N) for N random draws, 1 / N (or 2 / N two-sided,
    when the caller says so through exact_patterns) for an enumeration."""
    if exact_patterns:
        return 1 / exact_patterns
    if method_draws:
        return 1 / (1 + method_draws)
    return None


def format_p(p, resolution=None, digits=3) -> str:
    """A p-value as printed: "—" when none; at the test's smallest possible p, "< 0.0001" (the
    resolution rounded up to two significant digits); below 0.001, two significant digits; else
    `digits` decimals. Never "0.000"."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "—"
    p = float(p)
    if resolution and p <= resolution * (1 + 1e-9):
        return "< " + _round_up(resolution)
    if p < 10 ** -digits:
        return f"{p:.2g}" if p >= 1e-4 else f"{p:.1e}"
    return f"{p:.{digits}f}"


def _round_up(value: float) -> str:
    exponent = math.floor(math.log10(value)) - 1
    scaled = math.ceil(value / 10**exponent - 1e-9) * 10**exponent
    text = f"{scaled:.{max(0, -exponent)}f}".rstrip("0").rstrip(".")
    return text
