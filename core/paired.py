"""Two judge settings compared on the same answers: paired differences with cluster-bootstrap
intervals, a cluster sign-flip permutation test and an exact sign test. Pure numpy (no Django).

Every function takes parallel arrays over the answers both settings scored: the two settings'
scores `a` and `b`, the gold score and a cluster id per answer (its question: answers to one
question are not independent, so intervals and the permutation test resample or flip whole
questions). Differences are always B - A: for an error measure (MSE, MAE, FR_d, |bias|) a
negative difference means B is closer to gold. `bias` is the signed mean error (judge - gold),
not an error measure: its difference says which way B moved, not whether it got closer; the
error measure is `abs_bias`, |bias B| - |bias A|.

The uncertainty rules are core.uncertainty's: no interval from fewer than MIN_CLUSTERS questions,
undefined resamples counted, permutation p-values never 0. Shared by the judge review (settings
compared, grading.review.selectors.comparison) and the studies (the style ablation, studies.style): it sits
below both and imports no Django and no app (an import-linter contract keeps it so).
"""
from dataclasses import dataclass
from math import comb

import numpy as np

from . import uncertainty

FR_DISTANCES = (1, 2, 3, 4, 5)  # FR_d: the share with |judge − gold| >= d points (grading.review.metrics)

_EPS = 1e-9
RESAMPLING = ("cluster bootstrap: whole questions drawn with replacement, every answer of a drawn question kept, "
              "both settings re-measured on the same draw")
EXACT_FLIPS_MAX_CLUSTERS = 16  # up to 2**16 sign patterns are enumerated; more are sampled
MEASURES = ("mse", "mae", "bias", "abs_bias", *(f"fr_{d}" for d in FR_DISTANCES), "pearson")
SIGN_TEST_ASSUMPTION = "treats answers as independent (ignores that answers to one question share it)"


def _measures(score, gold):
    """Every measure of one setting on one (re)sample, as a dict of floats (NaN where undefined)."""
    delta = score - gold
    out = {
        "mse": float(np.mean(delta**2)),
        "mae": float(np.mean(np.abs(delta))),
        "bias": float(np.mean(delta)),
        "abs_bias": float(abs(np.mean(delta))),
        **{f"fr_{d}": float(np.mean(np.abs(delta) >= d - _EPS)) for d in FR_DISTANCES},
    }
    sx, sy = score - score.mean(), gold - gold.mean()
    denominator = np.sqrt(np.sum(sx * sx) * np.sum(sy * sy))
    out["pearson"] = float(np.sum(sx * sy) / denominator) if denominator > 0 else float("nan")
    return out


def _clean(value):
    return None if value is None or not np.isfinite(value) else float(value)


def _cluster_layout(clusters):
    """(order, starts, sizes): answers sorted by cluster, where each cluster starts, its size."""
    order = np.argsort(clusters, kind="stable")
    _, starts, sizes = np.unique(np.asarray(clusters)[order], return_index=True, return_counts=True)
    return order, starts, sizes


def _resample_measures(score, gold, idx, rid, counts):
    """Every measure of one setting on a block of resamples at once: `idx` holds the resamples'
    answer indices one after the other, `rid` the resample of each, `counts` their sizes; a dict
    of arrays, one value per resample (NaN where undefined), equal to _measures on each."""
    x, y = score[idx], gold[idx]
    delta = x - y
    size = len(counts)

    def total(weights):
        return np.bincount(rid, weights=weights, minlength=size)

    absolute = np.abs(delta)
    out = {
        "mse": total(delta * delta) / counts,
        "mae": total(absolute) / counts,
        "bias": total(delta) / counts,
        "abs_bias": np.abs(total(delta) / counts),
        **{f"fr_{d}": total((absolute >= d - _EPS).astype(float)) / counts for d in FR_DISTANCES},
    }
    # Pearson from centred sums, as _measures: each value minus its resample's mean.
    sx = x - (total(x) / counts)[rid]
    sy = y - (total(y) / counts)[rid]
    denominator = np.sqrt(total(sx * sx) * total(sy * sy))
    with np.errstate(invalid="ignore", divide="ignore"):
        out["pearson"] = np.where(denominator > 0, total(sx * sy) / np.where(denominator > 0, denominator, 1), np.nan)
    return out


BLOCK_INDICES = 2_000_000  # answer indices held at once by the vectorised bootstrap (16 MB)


def bootstrap_differences(a, b, gold, clusters, rng, n_resamples):
    """{measure: array of B - A over `n_resamples` cluster-bootstrap resamples}, computed a block
    of resamples at a time (cluster_bootstrap_blocks, bincount): no numpy call per resample."""
    draws = {m: [] for m in MEASURES}
    for idx, rid, counts in cluster_bootstrap_blocks(rng, clusters, n_resamples):
        ra, rb = _resample_measures(a, gold, idx, rid, counts), _resample_measures(b, gold, idx, rid, counts)
        for m in MEASURES:
            draws[m].append(rb[m] - ra[m])
    return {m: np.concatenate(values) if values else np.array([]) for m, values in draws.items()}


def cluster_bootstrap_blocks(rng, clusters, n_resamples, block_indices=BLOCK_INDICES):
    """Blocks of a one-stage cluster bootstrap (core.uncertainty's), as (idx, rid, counts): draw as
    many clusters as there are, with replacement, and keep every answer of each drawn cluster.
    `idx` holds the block's resamples' answer indices one after the other, `rid` the resample of
    each index, `counts` the size of each resample (as floats). Seeded by `rng`."""
    order, starts, sizes = _cluster_layout(clusters)
    k = len(sizes)
    per_block = max(1, block_indices // max(1, len(order)))
    done = 0
    while done < n_resamples:
        r = min(per_block, n_resamples - done)
        drawn = rng.integers(0, k, size=(r, k))
        lengths = sizes[drawn].ravel()
        offsets = np.repeat(starts[drawn].ravel(), lengths)
        ends = np.cumsum(lengths)
        within = np.arange(int(ends[-1]) if len(ends) else 0) - np.repeat(ends - lengths, lengths)
        counts = sizes[drawn].sum(axis=1)
        yield order[offsets + within], np.repeat(np.arange(r), counts), counts.astype(float)
        done += r


def cluster_bootstrap_indices(rng, clusters, n_resamples):
    """The resamples of cluster_bootstrap_blocks one at a time, as index arrays."""
    for idx, _rid, counts in cluster_bootstrap_blocks(rng, clusters, n_resamples):
        bounds = np.concatenate([[0], np.cumsum(counts.astype(int))])
        for low, high in zip(bounds[:-1], bounds[1:]):
            yield idx[low:high]


@dataclass
class SignTest:
    b_better: int  # answers where |B - gold| < |A - gold|
    a_better: int
    ties: int
    p_value: float | None  # exact two-sided binomial test on the answers that differ

    def as_dict(self):
        return {"b_better": self.b_better, "a_better": self.a_better, "ties": self.ties, "p_value": self.p_value,
                "assumption": SIGN_TEST_ASSUMPTION}


def sign_test(a, b, gold):
    """Exact two-sided sign test on the per-answer absolute errors (ties dropped). Not
    assumption-free: it treats answers as independent, so with answers clustered in questions
    its p is too small (0.036 where the cluster permutation test gives 0.215); the permutation
    test below respects the clustering and is shown first."""
    a, b, gold = (np.asarray(x, dtype=float) for x in (a, b, gold))
    diff = np.abs(b - gold) - np.abs(a - gold)
    b_better, a_better = int(np.sum(diff < -_EPS)), int(np.sum(diff > _EPS))
    n = b_better + a_better
    if not n:
        return SignTest(b_better, a_better, int(diff.size - n), None)
    k = min(b_better, a_better)
    tail = sum(comb(n, i) for i in range(k + 1)) / 2**n
    return SignTest(b_better, a_better, int(diff.size - n), float(min(1.0, 2 * tail)))


def cluster_permutation_test(a, b, gold, clusters, *, n_permutations=10_000, seed=0):
    """Sign-flip permutation test of the mean difference in absolute error, |B - gold| - |A - gold|,
    flipping whole clusters (under H0 the two settings are exchangeable on every answer of a
    question at once). Exact (every sign pattern) up to EXACT_FLIPS_MAX_CLUSTERS clusters, else
    `n_permutations` seeded random patterns. Returns (p value, method): exact, b / 2^k (the
    observed pattern and its mirror are among them, so p >= 2 / 2^k); sampled, (1 + b) / (1 + N),
    never 0 (core.uncertainty). `permutation_resolution` gives the smallest p each can give."""
    a, b, gold = (np.asarray(x, dtype=float) for x in (a, b, gold))
    diff = np.abs(b - gold) - np.abs(a - gold)
    if not diff.size:
        return None, "none"
    _, codes = np.unique(np.asarray(clusters), return_inverse=True)
    sums = np.bincount(codes, weights=diff)
    k, n = len(sums), diff.size
    observed = abs(sums.sum()) / n
    if k <= EXACT_FLIPS_MAX_CLUSTERS:
        patterns = ((np.arange(2**k)[:, None] >> np.arange(k)) & 1) * 2 - 1
        method = f"exact over all {2**k} sign patterns of {k} questions"
    else:
        rng = np.random.default_rng(seed)
        patterns = rng.choice([-1, 1], size=(n_permutations, k))
        method = f"{n_permutations} seeded random sign patterns of {k} questions"
    extreme = int(np.sum(np.abs(patterns @ sums) / n >= observed - _EPS))
    if k <= EXACT_FLIPS_MAX_CLUSTERS:
        return uncertainty.exact_p(extreme, len(patterns)), method
    return uncertainty.monte_carlo_p(extreme, n_permutations), method


def permutation_resolution(n_questions, n_permutations=10_000):
    """The smallest p cluster_permutation_test can give for this many questions."""
    if not n_questions:
        return None
    if n_questions <= EXACT_FLIPS_MAX_CLUSTERS:
        return 2 / 2**n_questions
    return 1 / (1 + n_permutations)


def paired_comparison(a, b, gold, clusters, *, n_resamples=1000, seed=0, confidence=0.95):
    """Both settings' measures, their difference B - A and its cluster-bootstrap interval (none
    from fewer than core.uncertainty.MIN_CLUSTERS questions: `interval_note` says so), the
    permutation test (whole questions) and the sign test (answers as independent), on the same
    answers."""
    a, b, gold = (np.asarray(x, dtype=float) for x in (a, b, gold))
    clusters = np.asarray(clusters)
    if not (a.shape == b.shape == gold.shape == clusters.shape):
        raise ValueError("scores, gold and clusters must pair up")
    n = int(a.size)
    k = int(len(np.unique(clusters))) if n else 0
    out = {"n": n, "n_questions": k, "resampling": RESAMPLING,
           "n_resamples": n_resamples, "seed": seed, "confidence": confidence,
           "min_questions": uncertainty.MIN_CLUSTERS, "interval_note": ""}
    if not n:
        out.update(measures={m: {"a": None, "b": None, "difference": None, "ci": [None, None], "undefined": 0}
                             for m in MEASURES},
                   permutation={"p_value": None, "method": "none", "resolution": None},
                   sign_test=sign_test(a, b, gold).as_dict())
        out["interval_note"] = uncertainty.note("empty", 0)
        return out
    ma, mb = _measures(a, gold), _measures(b, gold)
    intervals = {}
    if not n_resamples:
        out["interval_note"] = uncertainty.note("empty", k)
    elif k < uncertainty.MIN_CLUSTERS:
        out["interval_note"] = uncertainty.note("clusters", k)
    else:
        draws = bootstrap_differences(a, b, gold, clusters, np.random.default_rng(seed), n_resamples)
        intervals = {m: uncertainty.percentile(draws[m], confidence=confidence, clusters=k) for m in MEASURES}
    out["measures"] = {
        m: {
            "a": _clean(ma[m]), "b": _clean(mb[m]),
            "difference": _clean(mb[m] - ma[m]),
            "ci": intervals[m].bounds() if m in intervals else [None, None],
            "undefined": intervals[m].undefined if m in intervals else 0,
            **({"ci_note": intervals[m].note()} if m in intervals and not intervals[m].estimable else {}),
        }
        for m in MEASURES
    }
    p_value, method = cluster_permutation_test(a, b, gold, clusters, seed=seed)
    out["permutation"] = {"p_value": p_value, "method": method, "resolution": permutation_resolution(k),
                          "statistic": "mean of |B - gold| - |A - gold| over answers"}
    out["sign_test"] = sign_test(a, b, gold).as_dict()
    return out


def split_cases(a, b, gold, *, close=1.0, off=2.0):
    """Indices of answers where one setting is within `close` of gold and the other `off` or more
    away: (A close and B off, B close and A off)."""
    a, b, gold = (np.asarray(x, dtype=float) for x in (a, b, gold))
    ea, eb = np.abs(a - gold), np.abs(b - gold)
    a_close_b_off = np.flatnonzero((ea <= close + _EPS) & (eb >= off - _EPS))
    b_close_a_off = np.flatnonzero((eb <= close + _EPS) & (ea >= off - _EPS))
    return a_close_b_off.tolist(), b_close_a_off.tolist()
