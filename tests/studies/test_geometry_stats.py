"""Every statistic of studies/geometry/stats.py against a direct numpy / scikit-learn
computation on the same vectors (the definitions of docs/studies.md, "Error geometry")."""
import math

import numpy as np
import pytest
from scipy.cluster.hierarchy import leaves_list, linkage
from sklearn.cluster import HDBSCAN
from sklearn.decomposition import PCA
from sklearn.metrics import silhouette_score
from sklearn.mixture import GaussianMixture
from sklearn.neighbors import NearestNeighbors

from studies.geometry import stats


@pytest.fixture
def vectors():
    rng = np.random.default_rng(7)
    centres = rng.normal(size=(3, 24))
    return np.vstack([centres[i % 3] + 0.3 * rng.normal(size=24) for i in range(45)])


def unit(x):
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_local_dispersion_is_the_mean_cosine_distance_to_five_neighbours(vectors):
    nn = NearestNeighbors(n_neighbors=6, metric="cosine").fit(vectors)
    distances, _ = nn.kneighbors(vectors)
    expected = distances[:, 1:].mean(axis=1)  # the first neighbour is the point itself
    assert np.allclose(stats.local_dispersion(vectors), expected, atol=1e-9)


def test_total_variance_is_the_trace_of_the_covariance(vectors):
    assert stats.total_variance(vectors) == pytest.approx(np.trace(np.cov(unit(vectors).T)), rel=1e-9)


def test_top_ten_share_is_pca_explained_variance(vectors):
    pca = PCA().fit(unit(vectors))
    ratios = stats.explained_variance(vectors)
    assert np.allclose(ratios[: len(pca.explained_variance_ratio_)], pca.explained_variance_ratio_, atol=1e-9)
    assert stats.top_share(ratios) == pytest.approx(pca.explained_variance_ratio_[:10].sum(), rel=1e-9)


def test_umap_hdbscan_and_silhouette_as_defined(vectors):
    import umap

    got = stats.umap_hdbscan(vectors, seed=42)
    embedded = umap.UMAP(n_neighbors=15, n_components=10, min_dist=0.0, metric="cosine",
                         random_state=42).fit_transform(unit(vectors))
    labels = HDBSCAN(min_cluster_size=5, min_samples=3).fit_predict(embedded)
    assert got["labels"] == labels.tolist()
    clustered = labels >= 0
    assert got["clusters"] == len(set(labels[clustered])) == 3
    assert got["noise_share"] == pytest.approx(np.mean(~clustered))
    assert got["silhouette"] == pytest.approx(silhouette_score(unit(vectors)[clustered], labels[clustered], metric="cosine"))


def test_gmm_bic_sweep_on_fifty_pca_dimensions(vectors):
    got = stats.gmm_bic(vectors, seed=3, ks=range(2, 8))
    reduced = PCA(n_components=min(50, 44, 24), svd_solver="full", random_state=3).fit_transform(unit(vectors))
    # 45 points: at most 45 // 10 = 4 components (at least ten points each)
    expected = {k: GaussianMixture(k, covariance_type="diag", random_state=3, reg_covar=1e-6).fit(reduced).bic(reduced)
                for k in range(2, 5)}
    assert got["dims"] == 24 and got["max_k"] == 4
    assert got["bic"] == pytest.approx(expected)
    assert got["best_k"] == min(expected, key=expected.get)
    assert got["at_edge"] == (got["best_k"] == 4)


def test_heatmap_rows_follow_ward_leaf_order(vectors):
    got = stats.sorted_distances(vectors)
    order = leaves_list(linkage(unit(vectors), method="ward"))
    assert got["rows"] == order.tolist()
    u = unit(vectors)[order]
    assert np.allclose(got["matrix"], np.round(np.clip(1 - u @ u.T, 0, 2) * (1 - np.eye(len(u))), 3), atol=1e-3)


def test_cluster_bootstrap_resamples_whole_questions():
    values = np.array([1.0, 1.0, 5.0, 5.0, 9.0, 2.0, 7.0, 7.0])
    questions = ["a", "a", "b", "b", "c", "d", "e", "e"]
    got = stats.cluster_bootstrap(8, questions, lambda rows: float(values[rows].mean()), resamples=300, seed=1)
    rng = np.random.default_rng(1)
    members = [np.array([0, 1]), np.array([2, 3]), np.array([4]), np.array([5]), np.array([6, 7])]
    draws = [values[np.concatenate([members[i] for i in rng.integers(0, 5, size=5)])].mean() for _ in range(300)]
    assert got == pytest.approx([np.percentile(draws, 2.5), np.percentile(draws, 97.5)])
    assert stats.cluster_bootstrap(5, ["a"] * 5, lambda rows: 0.0) is None  # one question: no interval
    assert stats.cluster_bootstrap(3, ["a", "b", "c"], lambda rows: 0.0) is None  # 3 questions: below the minimum


def test_permutation_test_matches_a_direct_loop(vectors):
    rng = np.random.default_rng(0)
    diffuse = rng.normal(size=(20, 24))
    everything = np.vstack([vectors[:20], diffuse])
    in_a = np.arange(40) < 20
    got = stats.dispersion_permutation_test(stats.cosine_distances(everything), in_a, permutations=200, seed=5)

    def mean_knn(x):
        d, _ = NearestNeighbors(n_neighbors=6, metric="cosine").fit(x).kneighbors(x)
        return d[:, 1:].mean()

    observed = mean_knn(everything[in_a]) - mean_knn(everything[~in_a])
    shuffles = np.random.default_rng(5)
    extreme = 0
    for _ in range(200):
        mask = shuffles.permutation(in_a)
        extreme += abs(mean_knn(everything[mask]) - mean_knn(everything[~mask])) >= abs(observed) - 1e-12
    assert got["difference"] == pytest.approx(observed, abs=1e-9)
    assert got["p"] == pytest.approx((1 + extreme) / 201)
    assert got["difference"] < 0 and got["p"] < 0.01


def test_transition_figures_by_hand():
    # prompt "a b\nc d": context "a b" (3 characters), step "c d"; the tokenizer glues "\n" to "c".
    tokens = ["a", " b", "\nc", " d"]
    offsets = [0, 1, 3, 5]
    logprobs = [None, -1.0, -2.0, -0.5]
    tops = [None, {" b": -1.0}, {" x": -0.1, " d": -1.5, "\nc": -2.0}, {" d": -0.5}]
    got = stats.transition_figures(tokens, logprobs, tops, offsets, context_end=3, prompt_end=7)
    assert got["tokens"] == 2
    assert got["surprisal"] == pytest.approx((2.0 + 0.5) / 2)
    # At the context's last position, the step's tokens "\nc" and " d" have p = e^-2 and e^-1.5.
    assert got["ll"] == pytest.approx(math.exp(-1.5))
    assert got["ll_exact"] is True and got["outside_top_k"] == 0
    # Top-k without any step token: LL is the first token's own probability, a lower bound.
    tops[2] = {" x": -0.1, " y": -0.2}
    got = stats.transition_figures(tokens, logprobs, tops, offsets, context_end=3, prompt_end=7)
    assert got["ll"] == pytest.approx(math.exp(-2.0))
    assert got["ll_exact"] is False and got["outside_top_k"] == 2


def test_lexical_vectors_are_seeded_and_normalised():
    texts = [f"sin x = {i} / 2, therefore x = {i}" for i in range(12)]
    a, b = stats.lexical_vectors(texts, seed=0), stats.lexical_vectors(texts, seed=0)
    assert np.array_equal(a, b)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0)


def test_the_tick_runs_at_every_resample_and_its_cancel_stops_the_statistics():
    rng = np.random.default_rng(3)
    vectors, questions = rng.normal(size=(30, 8)), [f"q{i % 6}" for i in range(30)]
    calls = []
    stats.group_geometry(vectors, questions, bootstrap=7, cluster=False, tick=lambda: calls.append(1))
    assert len(calls) == 2 + 7 + 2 * 6  # two stages, the dispersion bootstrap's resamples, two jackknifes of 6 questions

    def cancel_after(n):
        seen = []

        def tick():
            seen.append(1)
            if len(seen) > n:
                raise stats.Cancelled()
        return tick

    with pytest.raises(stats.Cancelled):
        stats.group_geometry(vectors, questions, bootstrap=10_000, cluster=False, tick=cancel_after(50))
    with pytest.raises(stats.Cancelled):
        stats.dispersion_permutation_test(stats.cosine_distances(vectors), np.arange(30) < 15, permutations=10_000,
                                          tick=cancel_after(5))
    with pytest.raises(stats.Cancelled):
        stats.gmm_bic(vectors, tick=cancel_after(1))  # 30 points: k = 2, 3
    with pytest.raises(stats.Cancelled):
        stats.lexical_vectors(["a b", "c d", "e f"], tick=cancel_after(0))


@pytest.mark.django_db
def test_the_services_tick_asks_the_database_at_most_every_half_second():
    from studies.geometry import services
    from studies.geometry.models import GeometryRun

    run = GeometryRun.objects.create(status="done", analysis_state="running")
    now = [100.0]
    tick = services.cancel_check(run.pk, every=0.5, clock=lambda: now[0])
    GeometryRun.objects.filter(pk=run.pk).update(status="cancelled", analysis_state="cancelled")
    tick()  # within half a second of the last look: no query, no stop
    now[0] += 0.6
    with pytest.raises(stats.Cancelled):
        tick()
