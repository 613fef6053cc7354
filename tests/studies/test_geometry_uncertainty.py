"""Issue 36 on the geometry study: on the paper's 606 error segments (the release's bundle) the
intervals of total variance and top-10 share contain their estimates, where the percentile
bootstrap of whole questions excluded them (duplicated rows lower rank and variance); no interval
from fewer than 5 questions; a resample of one repeated segment is undefined, not 0; the GMM sweep
is capped and flagged at its edge; the density's bandwidth is Silverman's, as scipy's."""
import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import gaussian_kde
from threadpoolctl import threadpool_limits

from studies.geometry import stats

BUNDLE = Path("fixtures/realmath_eval_full/error_segment_bundle")


def _segments(name):
    rows = [json.loads(line) for line in (BUNDLE / name).read_text(encoding="utf-8").splitlines() if line.strip()]
    return [row["segment_text"] for row in rows], np.array([row["question"] for row in rows])


@pytest.fixture(scope="module")
def paper_groups():
    groups = {}
    for group, name in (("human", "human_error_segments.jsonl"), ("synthetic", "llm_error_segments.jsonl")):
        texts, questions = _segments(name)
        groups[group] = (stats.lexical_vectors(texts, seed=0), questions)
    return groups


def _old_percentile_bootstrap(unit, questions, statistic, resamples=60, seed=0):
    names = np.unique(questions)
    members = [np.flatnonzero(questions == name) for name in names]
    rng = np.random.default_rng(seed)
    draws = [statistic(unit[np.concatenate([members[i] for i in rng.integers(0, len(names), len(names))])])
             for _ in range(resamples)]
    return np.percentile(draws, [2.5, 97.5])


def test_paper_segments_intervals_contain_their_estimates(paper_groups):
    with threadpool_limits(limits=1):  # hundreds of small SVDs: one BLAS thread is faster on a shared machine
        _check_paper_groups(paper_groups)


def _check_paper_groups(paper_groups):
    assert {g: len(q) for g, (_, q) in paper_groups.items()} == {"human": 278, "synthetic": 328}  # the paper's 606
    excluded_before = 0
    for vectors, questions in paper_groups.values():
        out = stats.group_geometry(vectors, questions, seed=42, bootstrap=100, cluster=False)
        for name in ("dispersion", "total_variance", "top10_share"):
            low, high = out[f"{name}_ci"]
            assert low <= out[name] <= high, name
        assert out["uncertainty"]["top10_share"]["method"].startswith("delete-one-cluster jackknife")
        unit = stats.normalise(vectors)
        low, high = _old_percentile_bootstrap(unit, questions, lambda x: stats.top_share(stats.explained_variance(x)))
        excluded_before += not (low <= out["top10_share"] <= high)
    assert excluded_before >= 1  # the old interval missed its own estimate on the paper's data


def test_few_questions_give_no_interval_and_a_repeated_segment_is_undefined():
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(12, 6))
    out = stats.group_geometry(vectors, ["a", "b", "c"] * 4, bootstrap=50, cluster=False)
    assert out["dispersion_ci"] is None and out["top10_share_ci"] is None and out["total_variance_ci"] is None
    assert out["uncertainty"]["top10_share"]["note"] == "not estimable: 3 questions"
    summary = stats.summary([1.0, 2.0, 3.0], ["a", "a", "b"], bootstrap=50)
    assert summary["mean_ci"] is None and summary["uncertainty"]["mean"]["note"] == "not estimable: 2 questions"
    # one segment drawn five times has no spread to measure: undefined, not a share or variance of 0
    unit = stats.normalise(vectors)
    wrapped = stats._defined(lambda rows: stats.total_variance(unit[rows]))  # noqa: SLF001
    assert np.isnan(wrapped(np.array([3, 3, 3, 3, 3]))) and wrapped(np.array([1, 2])) > 0


def test_gmm_sweep_is_capped_below_the_number_of_points_and_flagged_at_the_edge():
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(35, 40))  # the 35 segments: k = 2..30 tried before, 30 picked
    out = stats.gmm_bic(vectors, seed=0)
    assert out["max_k"] == 3 and set(out["bic"]) == {2, 3}
    assert out["at_edge"] == (out["best_k"] == 3)
    assert stats.gmm_bic(vectors[:15], seed=0)["bic"] == {}  # 15 points: not even two components of ten


def test_density_bandwidth_is_silvermans_as_scipy():
    values = np.random.default_rng(2).gamma(2.0, 0.1, 80)
    curve = stats.density(values, points=64)
    kde = gaussian_kde(values, bw_method="silverman")
    bandwidth = float(np.sqrt(kde.covariance[0, 0]))  # scipy's Silverman bandwidth
    grid = np.linspace(values.min() - 3 * bandwidth, values.max() + 3 * bandwidth, 64)
    assert np.allclose(curve["x"], np.round(grid, 5))  # the same bandwidth sets the same grid
    assert np.allclose(curve["y"], kde(grid), atol=1e-5)


@pytest.mark.django_db
def test_run_page_says_why_an_interval_is_missing_and_flags_the_gmm_edge(reviewer_client):
    from django.urls import reverse
    from django.utils import translation

    from studies.geometry.models import GeometryRun

    from .helpers import lexical_geometry_run

    run = lexical_geometry_run("an answer")
    groups = run.results["groups"]
    questions = {name: group["questions"] for name, group in groups.items()}
    assert all(n < 5 for n in questions.values())  # the helper's few questions: no interval
    for group in groups.values():
        group["gmm"] = {"best_k": 3, "max_k": 3, "at_edge": True, "bic": {"2": 1.0, "3": 0.5}, "dims": 2}
    GeometryRun.objects.filter(pk=run.pk).update(results=run.results)
    url = reverse("studies:geometry_run", args=[run.pk])
    page = reviewer_client.get(url).content.decode()
    n = min(questions.values())
    assert f"not estimable: {n} question" in page
    assert "(the largest k tried, 3: the minimum may lie beyond)" in page
    reviewer_client.cookies["django_language"] = "zh-hans"
    chinese = reviewer_client.get(url).content.decode()
    translation.activate("en")
    table = chinese.split('id="geometry-table"')[1].split("</table>")[0]  # the page, not its JSON data
    assert f"无法估计：{n} 道题" in table and "not estimable" not in table
    assert "（所试的最大 k 为 3：最小值可能在范围之外）" in chinese
