"""The statistics of the error-geometry and step-surprisal study (numpy, scikit-learn, umap; no Django).

Definitions (the RealMath-Eval paper's, docs/studies.md "Error geometry"):

- vectors are L2-normalised first (`normalise`); distances are cosine distances, 1 - cos;
- local dispersion of a point: the mean cosine distance to its k = 5 nearest neighbours in its
  own group (itself excluded); of a group: the mean over its points (`local_dispersion`);
- total variance: the trace of the group's sample covariance (ddof = 1) (`total_variance`);
- top-10 share: the share of the total variance in the first 10 principal components (PCA on the
  group's vectors) (`explained_variance`);
- clusters: UMAP(n_neighbors=15, n_components=10, min_dist=0, cosine, seeded) then
  HDBSCAN(min_cluster_size=5, min_samples=3); the noise share; the cosine silhouette of the
  clustered points, on the normalised vectors (`umap_hdbscan`);
- GMM: diagonal covariance on the first 50 principal components, k = 2..30 capped at one component
  per 10 points (n // 10: with 35 segments k = 2..3, not 30 components of 69 parameters each), best k
  by BIC, flagged `at_edge` when it is the largest k tried (the sweep did not find a minimum) (`gmm_bic`);
- heatmap: pairwise cosine distances, rows in the leaf order of a Ward linkage (`sorted_distances`);
- intervals (core.uncertainty's rules; none from fewer than 5 questions): the mean dispersion,
  surprisal and LL by a percentile bootstrap of whole questions, seeded (`cluster_bootstrap`); total
  variance and the top-10 share by a delete-one-question jackknife (`jackknife_interval`): a
  bootstrap duplicates rows, which lowers rank and variance, so its percentile interval of these
  statistics is biased (on the paper's segments it excluded its own estimate); the jackknife
  leaves questions out without replacement and its interval contains the estimate. A resample
  with fewer than two distinct segments is undefined (counted), never a share or variance of 0;
- human vs synthetic: a permutation test of the difference in mean local dispersion, the group
  labels shuffled among all segments and the neighbours found again in each shuffled group
  (`dispersion_permutation_test`);
- surprisal of a step: the mean of -log p over its tokens given the steps before it (nats);
  logical likelihood (LL): the highest probability, at the context's last position, among the
  step's tokens (`transition_figures`).

Everything seeded gives the same figures for the same vectors and seed.

Cancelling: the long functions take `tick`, a function of no arguments called between stages and
at every resample, permutation and mixture fit (None: never). It returns nothing, or raises
`Cancelled` to stop the computation (the services' tick asks the database, at most twice a second).
The only stretches without a tick are single library calls: one UMAP fit, one HDBSCAN, one SVD.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from core import uncertainty

K_NEIGHBOURS = 5
TOP_COMPONENTS = 10
UMAP_PARAMS = {"n_neighbors": 15, "n_components": 10, "min_dist": 0.0, "metric": "cosine"}
HDBSCAN_PARAMS = {"min_cluster_size": 5, "min_samples": 3}
GMM_DIMS = 50
GMM_KS = range(2, 31)
GMM_POINTS_PER_COMPONENT = 10
Tick = Callable[[], None] | None


class Cancelled(Exception):
    """Raised by a tick: the analysis is no longer wanted."""


def _tick(tick: Tick) -> None:
    if tick is not None:
        tick()


def normalise(vectors) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero)."""
    array = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    return np.divide(array, norms, out=np.zeros_like(array), where=norms > 0)


def cosine_distances(vectors) -> np.ndarray:
    """Pairwise 1 - cos of normalised rows, clipped to [0, 2], zero diagonal."""
    unit = normalise(vectors)
    distances = np.clip(1.0 - unit @ unit.T, 0.0, 2.0)
    np.fill_diagonal(distances, 0.0)
    return distances


def knn_dispersion_from_distances(distances: np.ndarray, k: int = K_NEIGHBOURS) -> np.ndarray:
    """Per point: the mean distance to its k nearest other points (k capped at n - 1)."""
    n = distances.shape[0]
    if n < 2:
        return np.full(n, np.nan)
    k = min(k, n - 1)
    off = distances + np.diag(np.full(n, np.inf))
    nearest = np.partition(off, k - 1, axis=1)[:, :k]
    return nearest.mean(axis=1)


def local_dispersion(vectors, k: int = K_NEIGHBOURS) -> np.ndarray:
    """Per point: the mean cosine distance to its k nearest neighbours within `vectors`."""
    return knn_dispersion_from_distances(cosine_distances(vectors), k)


def total_variance(vectors) -> float:
    """Trace of the sample covariance (ddof = 1) of the normalised vectors."""
    unit = normalise(vectors)
    if unit.shape[0] < 2:
        return float("nan")
    return float(unit.var(axis=0, ddof=1).sum())


def explained_variance(vectors) -> np.ndarray:
    """Explained-variance ratios of a full PCA of the normalised vectors (descending): the squared
    singular values of the centred matrix over their sum, which is what scikit-learn's PCA
    reports (`explained_variance_ratio_`), without its per-call overhead (bootstraps call it 1,000 times)."""
    unit = normalise(vectors)
    if unit.shape[0] < 2:
        return np.array([])
    centred = unit - unit.mean(axis=0)
    squared = np.linalg.svd(centred, compute_uv=False) ** 2
    total = squared.sum()
    return squared / total if total > 0 else np.zeros_like(squared)


def top_share(ratios: np.ndarray, m: int = TOP_COMPONENTS) -> float:
    return float(np.sum(ratios[:m])) if len(ratios) else float("nan")


def umap_hdbscan(vectors, seed: int = 42) -> dict:
    """UMAP to 10 dimensions then HDBSCAN: labels, clusters, noise share, cosine silhouette.

    Small groups: n_neighbors is capped at n - 1 and n_components at n - 2; with fewer than
    HDBSCAN's min_cluster_size points nothing is clustered (all noise).
    """
    from sklearn.cluster import HDBSCAN  # lazy: scikit-learn takes seconds to load
    from sklearn.metrics import silhouette_samples  # lazy: scikit-learn takes seconds to load

    unit = normalise(vectors)
    n = unit.shape[0]
    out = {"labels": [-1] * n, "clusters": 0, "noise_share": 1.0 if n else float("nan"), "silhouette": None,
           "silhouette_values": []}
    if n < HDBSCAN_PARAMS["min_cluster_size"] or n < 4:
        return out
    embedded = umap_embedding(unit, seed)
    labels = HDBSCAN(**HDBSCAN_PARAMS, copy=True).fit_predict(embedded)
    clustered = labels >= 0
    clusters = int(len(set(labels[clustered].tolist())))
    out.update(labels=labels.tolist(), clusters=clusters, noise_share=float(np.mean(~clustered)))
    if clusters >= 2 and clustered.sum() > clusters:
        values = silhouette_samples(unit[clustered], labels[clustered], metric="cosine")
        out["silhouette"] = float(np.mean(values))
        out["silhouette_values"] = [[int(c), float(v)] for c, v in zip(labels[clustered], values)]
    return out


def umap_embedding(unit: np.ndarray, seed: int) -> np.ndarray:
    """The seeded UMAP of the study (n_neighbors and n_components capped for small groups)."""
    # umap-learn pulls in numba and pynndescent (seconds to import, JIT on first use): imported
    # only here, so web processes and tests that never cluster do not pay for it.
    import warnings

    import umap  # lazy: umap-learn (numba) takes seconds to load

    n = unit.shape[0]
    params = dict(UMAP_PARAMS, n_neighbors=min(UMAP_PARAMS["n_neighbors"], n - 1),
                  n_components=min(UMAP_PARAMS["n_components"], n - 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "n_jobs overridden by random_state": a seeded UMAP is single-threaded
        return umap.UMAP(**params, random_state=seed).fit_transform(unit)


def gmm_bic(vectors, seed: int = 0, ks=GMM_KS, dims: int = GMM_DIMS, tick: Tick = None) -> dict:
    """Diagonal-covariance Gaussian mixtures on the first 50 principal components: BIC for each
    k up to n // GMM_POINTS_PER_COMPONENT (at least 10 points per component) and the k with the
    lowest BIC; `at_edge` when that is the largest k tried (the minimum may lie beyond the sweep),
    `max_k` the cap."""
    from sklearn.decomposition import PCA  # lazy: scikit-learn takes seconds to load
    from sklearn.mixture import GaussianMixture  # lazy: scikit-learn takes seconds to load

    unit = normalise(vectors)
    n, d = unit.shape
    max_k = n // GMM_POINTS_PER_COMPONENT
    tried = [int(k) for k in ks if k <= max_k and k < n]
    if n < 3 or not tried:
        return {"dims": 0, "bic": {}, "best_k": None, "max_k": max_k, "at_edge": False}
    dims = min(dims, n - 1, d)
    reduced = PCA(n_components=dims, svd_solver="full", random_state=seed).fit_transform(unit)
    bic = {}
    for k in tried:
        _tick(tick)
        model = GaussianMixture(n_components=k, covariance_type="diag", random_state=seed, reg_covar=1e-6)
        bic[k] = float(model.fit(reduced).bic(reduced))
    best = min(bic, key=bic.get) if bic else None
    return {"dims": int(dims), "bic": bic, "best_k": best, "max_k": max_k,
            "at_edge": best is not None and len(bic) > 1 and best == max(bic)}


def sorted_distances(vectors, max_points: int = 160, seed: int = 0) -> dict:
    """The heatmap: cosine distances with rows in Ward-linkage leaf order (at most `max_points`
    rows, a seeded sample when the group is larger), rounded to 3 decimals."""
    from scipy.cluster.hierarchy import leaves_list, linkage  # scikit-learn's own dependency

    unit = normalise(vectors)
    n = unit.shape[0]
    index = np.arange(n)
    if n > max_points:
        index = np.sort(np.random.default_rng(seed).choice(n, size=max_points, replace=False))
    sample = unit[index]
    order = leaves_list(linkage(sample, method="ward")) if len(sample) > 2 else np.arange(len(sample))
    matrix = cosine_distances(sample)[np.ix_(order, order)]
    return {"rows": [int(i) for i in index[order]], "matrix": np.round(matrix, 3).tolist()}


def percentile_interval(values, level: float = 0.95):
    values = np.asarray([v for v in values if v is not None and np.isfinite(v)], dtype=float)
    if not len(values):
        return None
    tail = (1 - level) / 2 * 100
    return [float(np.percentile(values, tail)), float(np.percentile(values, 100 - tail))]


def cluster_bootstrap_interval(n_rows: int, clusters, statistic: Callable[[np.ndarray], float], *,
                               resamples: int = 1000, seed: int = 0, level: float = 0.95,
                               tick: Tick = None) -> uncertainty.Interval:
    """core.uncertainty's cluster bootstrap of statistic(row indices): whole clusters (questions)
    drawn with replacement; not estimable below MIN_CLUSTERS questions; NaN resamples counted."""
    return uncertainty.bootstrap_statistic(statistic, np.asarray(clusters)[:n_rows], n_resamples=resamples, seed=seed,
                                           confidence=level, tick=tick)


def cluster_bootstrap(n_rows: int, clusters, statistic: Callable[[np.ndarray], float], *, resamples: int = 1000,
                      seed: int = 0, level: float = 0.95, tick: Tick = None):
    """cluster_bootstrap_interval as [low, high], None when not estimable."""
    interval = cluster_bootstrap_interval(n_rows, clusters, statistic, resamples=resamples, seed=seed, level=level,
                                          tick=tick)
    return interval.bounds() if interval.estimable else None


def jackknife_interval(clusters, statistic: Callable[[np.ndarray], float], *, level: float = 0.95,
                       tick: Tick = None) -> uncertainty.Interval:
    """core.uncertainty's delete-one-question jackknife of statistic(row indices): for the
    statistics a bootstrap biases (total variance, PCA shares); the interval contains the estimate."""
    return uncertainty.jackknife(statistic, clusters, confidence=level, tick=tick)


def _defined(statistic: Callable[[np.ndarray], float]) -> Callable[[np.ndarray], float]:
    """statistic(rows), NaN (undefined, counted) when the rows hold fewer than two distinct
    segments: a resample of one repeated segment has no spread to measure, not a spread of 0."""
    def wrapped(rows):
        if len(np.unique(rows)) < 2:
            return float("nan")
        return statistic(rows)
    return wrapped


def _interval_entry(interval: uncertainty.Interval):
    return interval.bounds() if interval.estimable else None


def dispersion_permutation_test(distances: np.ndarray, in_a, *, k: int = K_NEIGHBOURS, permutations: int = 1000,
                                seed: int = 0, tick: Tick = None) -> dict:
    """Two-sided permutation test of mean local dispersion of group A minus group B.

    `distances` are the pairwise cosine distances of all segments, `in_a` a boolean mask. Each
    permutation shuffles the mask and recomputes each group's k-NN dispersion within the
    shuffled group. p = (1 + shuffles at least as extreme) / (1 + permutations).
    """
    in_a = np.asarray(in_a, dtype=bool)

    def difference(mask):
        a, b = np.flatnonzero(mask), np.flatnonzero(~mask)
        return float(np.mean(knn_dispersion_from_distances(distances[np.ix_(a, a)], k))
                     - np.mean(knn_dispersion_from_distances(distances[np.ix_(b, b)], k)))

    if in_a.sum() < 2 or (~in_a).sum() < 2:
        return {"difference": None, "p": None, "permutations": 0}
    observed = difference(in_a)
    if permutations <= 0:
        return {"difference": observed, "p": None, "permutations": 0}
    rng = np.random.default_rng(seed)
    extreme = 0
    for _ in range(permutations):
        _tick(tick)
        if abs(difference(rng.permutation(in_a))) >= abs(observed) - 1e-12:
            extreme += 1
    return {"difference": observed, "p": uncertainty.monte_carlo_p(extreme, permutations), "permutations": permutations,
            "resolution": 1 / (1 + permutations)}


def density(values, points: int = 64) -> dict:
    """A Gaussian kernel density curve of `values` on an even grid, bandwidth by Silverman's rule
    for one dimension, sd * (3n/4)^(-1/5) (about 1.06 sd n^(-1/5)), as
    scipy.stats.gaussian_kde(values, bw_method="silverman")."""
    values = np.asarray([v for v in values if v is not None and np.isfinite(v)], dtype=float)
    if len(values) < 2 or np.ptp(values) == 0:
        return {"x": [], "y": []}
    bandwidth = values.std(ddof=1) * (len(values) * 3 / 4) ** (-1 / 5)
    grid = np.linspace(values.min() - 3 * bandwidth, values.max() + 3 * bandwidth, points)
    curve = np.exp(-0.5 * ((grid[:, None] - values[None, :]) / bandwidth) ** 2).sum(axis=1)
    curve /= len(values) * bandwidth * math.sqrt(2 * math.pi)
    return {"x": np.round(grid, 5).tolist(), "y": np.round(curve, 5).tolist()}


def group_geometry(vectors, questions, *, seed: int = 42, bootstrap: int = 1000, cluster: bool = True,
                   tick: Tick = None) -> dict:
    """Every macro statistic of one group of segment vectors (rows), with intervals over questions:
    the dispersion by a cluster bootstrap, total variance and top-10 share by a delete-one-question
    jackknife (a bootstrap biases them). `uncertainty` says how each was made, or why none."""
    unit = normalise(vectors)
    n = unit.shape[0]
    distances = cosine_distances(unit)
    per_point = knn_dispersion_from_distances(distances)
    ratios = explained_variance(unit)
    _tick(tick)
    out = {
        "n": int(n),
        "questions": int(len(set(questions))),
        "dispersion": float(np.mean(per_point)) if n >= 2 else None,
        "dispersion_median": float(np.median(per_point)) if n >= 2 else None,
        "total_variance": total_variance(unit) if n >= 2 else None,
        "top10_share": top_share(ratios) if n >= 2 else None,
        "cumulative_variance": np.round(np.cumsum(ratios[:50]), 5).tolist(),
        "dispersion_density": density(per_point),
        "heatmap": sorted_distances(unit, seed=seed) if n >= 2 else {"rows": [], "matrix": []},
    }
    _tick(tick)
    intervals = {
        "dispersion": cluster_bootstrap_interval(n, questions, lambda rows: float(np.mean(per_point[rows])),
                                                 resamples=bootstrap, seed=seed, tick=tick),
        "total_variance": jackknife_interval(questions, _defined(lambda rows: total_variance(unit[rows])), tick=tick),
        "top10_share": jackknife_interval(
            questions, _defined(lambda rows: top_share(explained_variance(unit[rows]))), tick=tick),
    } if n >= 2 and bootstrap else {}
    for name in ("dispersion", "total_variance", "top10_share"):
        out[f"{name}_ci"] = _interval_entry(intervals[name]) if name in intervals else None
    out["uncertainty"] = {name: interval.as_dict() for name, interval in intervals.items()}
    if cluster:
        clusters = umap_hdbscan(unit, seed=seed)
        _tick(tick)
        out.update(clusters=clusters["clusters"], noise_share=clusters["noise_share"],
                   silhouette=clusters["silhouette"], silhouette_values=clusters["silhouette_values"],
                   cluster_labels=clusters["labels"])
        out["gmm"] = gmm_bic(unit, seed=seed, tick=tick)
    return out


# --- surprisal ------------------------------------------------------------------------------

def transition_figures(tokens, token_logprobs, top_logprobs, offsets, context_end: int, prompt_end: int,
                       top_k: int | None = None) -> dict | None:
    """Surprisal and LL of a step from the echoed log-probabilities of "context + newline + step".

    `tokens`, `token_logprobs`, `top_logprobs` (per position {token: logprob} or None) and
    `offsets` (each token's first character) are the completions API's echoed prompt; the
    context is the prompt's first `context_end` characters, the prompt `prompt_end` long (tokens
    after it were generated, and are ignored). The step's tokens are those that start at or
    after the context's end and reach past the newline after it (a tokenizer may glue the
    newline to the step's first word).

    - surprisal: mean of -logprob over the step's tokens (nats);
    - ll: the highest probability, at the context's last position (the distribution that predicts
      the step's first token), among the step's tokens. With top-k log-probabilities only, the
      step's tokens outside the top k are unknown: `ll` is then the best of the first token's own
      probability and those in the top k, a lower bound (`ll_exact` False when no step token is in
      the top k, `outside_top_k` the number of distinct step tokens missing from it).
    The top-k dictionary at that position is cut to its `top_k` largest entries: servers add the
    position's own token when it is not among the k best (up to k + 1 entries), and that token
    is not evidence that a step token is in the top k.
    Returns None when no step token has a log-probability.
    """
    boundary = context_end + 1
    positions = [
        i for i, offset in enumerate(offsets)
        if context_end <= offset < prompt_end and offset + len(tokens[i]) > boundary and token_logprobs[i] is not None
    ]
    if not positions:
        return None
    logprobs = [float(token_logprobs[i]) for i in positions]
    first = positions[0]
    step_tokens = {tokens[i] for i in positions}
    top = (top_logprobs[first] or {}) if top_logprobs and first < len(top_logprobs) else {}
    if top_k is not None and len(top) > top_k:
        top = dict(sorted(top.items(), key=lambda item: -float(item[1]))[:top_k])
    in_top = {token: float(value) for token, value in top.items() if token in step_tokens}
    best = max([logprobs[0], *in_top.values()])
    return {
        "tokens": len(positions),
        "surprisal": float(-np.mean(logprobs)),
        "ll": float(math.exp(best)),
        "ll_exact": bool(in_top),
        "outside_top_k": len(step_tokens - set(in_top)),
        "top_k": len(top),
    }


def summary(values, clusters, *, bootstrap: int = 1000, seed: int = 0, tick: Tick = None) -> dict:
    """n, mean, median with cluster-bootstrap intervals, and a density curve."""
    values = np.asarray(values, dtype=float)
    clusters = np.asarray(clusters)
    if not len(values):
        return {"n": 0, "mean": None, "median": None, "mean_ci": None, "median_ci": None, "density": {"x": [], "y": []}}
    mean = cluster_bootstrap_interval(len(values), clusters, lambda r: float(np.mean(values[r])),
                                      resamples=bootstrap, seed=seed, tick=tick)
    median = cluster_bootstrap_interval(len(values), clusters, lambda r: float(np.median(values[r])),
                                        resamples=bootstrap, seed=seed, tick=tick)
    return {
        "n": int(len(values)),
        "mean": float(np.mean(values)),
        "median": float(np.median(values)),
        "mean_ci": _interval_entry(mean),
        "median_ci": _interval_entry(median),
        "uncertainty": {"mean": mean.as_dict(), "median": median.as_dict()},
        "density": density(values),
    }


# --- the lexical baseline -------------------------------------------------------------------

LEXICAL_LABEL = "lexical baseline, not semantic"
LEXICAL_PARAMS = {"analyzer": "char_wb", "ngram_range": [2, 4], "min_df": 1, "sublinear_tf": True,
                  "svd_components": 128}


def lexical_vectors(texts: list[str], seed: int = 0, tick: Tick = None) -> np.ndarray:
    """TF-IDF over character 2-4-grams (within word boundaries), then truncated SVD to at most 128
    dimensions (seeded), rows normalised: a model-free stand-in, not a semantic embedding."""
    from sklearn.decomposition import TruncatedSVD  # lazy: scikit-learn takes seconds to load
    from sklearn.feature_extraction.text import TfidfVectorizer  # lazy: scikit-learn takes seconds to load

    matrix = TfidfVectorizer(analyzer=LEXICAL_PARAMS["analyzer"], ngram_range=tuple(LEXICAL_PARAMS["ngram_range"]),
                             min_df=LEXICAL_PARAMS["min_df"], sublinear_tf=LEXICAL_PARAMS["sublinear_tf"]).fit_transform(texts)
    _tick(tick)
    components = min(LEXICAL_PARAMS["svd_components"], matrix.shape[0] - 1, matrix.shape[1] - 1)
    if components < 1:
        return normalise(matrix.toarray())
    return normalise(TruncatedSVD(n_components=components, random_state=seed).fit_transform(matrix))
