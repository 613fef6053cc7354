"""A hostile embeddings or completions endpoint answering NaN, ±Infinity or 1e300-sized numbers
(issue 40, item 10): the numbers are refused as a bad response of their own kind ("non_finite")
with a message, never stored; the analysis fails with a message (never stuck "running") and
resume, once the endpoint answers sensibly, finishes the run."""
import json
import math

import numpy as np
import pytest

from studies.geometry import services
from studies.geometry.models import GeometryRun, GeometrySegment, SegmentVector
from tests.llm_server import hash_vector, word_scores

pytestmark = pytest.mark.django_db

TEXTS = {"human": ["human step one", "human step two", "poisoned step"], "synthetic": ["synthetic a", "synthetic b"]}


def segments(groups=TEXTS, steps=False):
    lines = []
    for subset, texts in groups.items():
        for i, text in enumerate(texts):
            body = f"{text}\nalpha beta\ngamma delta" if steps else text
            lines.append(json.dumps({"segment_text": body, "sample_id": f"{subset}-{i}", "question": f"Q{i}",
                                     "sub_id": "(1)", "real_score": 1, "max_score": 3, "analysis_subset": subset}))
    return services.parse_segments_jsonl("\n".join(lines))


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf"), 1e300])
def test_non_finite_vectors_fail_the_analysis_cleanly_and_resume_finishes(endpoint, llm_server, bad):
    def embedder(text):
        vector = hash_vector(text)
        if "poisoned" in text:
            vector[3] = bad
        return vector

    llm_server.embedder = embedder
    run = services.start_run(backend="served", endpoint=endpoint, model="embed-test", segments=segments(),
                             cluster=False, bootstrap=10, permutations=10, enqueue=False)
    run = services.run_inline(run)
    assert run.analysis_state == GeometryRun.Analysis.FAILED  # not "running", and no crash
    assert "not finite" in run.analysis_error and "resume" in run.analysis_error
    failed = run.items.filter(state=GeometrySegment.State.ERROR)
    assert failed.exists()
    errors = [e for row in failed.values_list("errors", flat=True) for e in row]
    assert errors and all(e["kind"] == "non_finite" for e in errors)
    assert "embedding vectors" in errors[0]["message"]
    for blob in SegmentVector.objects.filter(model="embed-test").values_list("vector", flat=True):
        assert np.isfinite(np.frombuffer(bytes(blob), dtype=np.float32)).all()  # nothing poisoned was cached

    llm_server.embedder = hash_vector  # the endpoint is fixed
    run = services.run_inline(services.resume_run(run, enqueue=False))
    assert run.analysis_state == GeometryRun.Analysis.DONE, run.analysis_error
    assert run.items.filter(state=GeometrySegment.State.OK).count() == 5


@pytest.mark.parametrize("bad", [float("nan"), float("-inf"), 1e300])
def test_non_finite_log_probabilities_fail_the_surprisal_analysis_cleanly(endpoint, llm_server, bad):
    def scorer(prompt):
        rows = word_scores(prompt)
        if "poisoned" in prompt:
            token, _, top = rows[-1]
            rows[-1] = (token, bad, top)
        return rows

    llm_server.scorer = scorer
    run = services.start_run(kind="surprisal", endpoint=endpoint, model="causal-test", segments=segments(steps=True),
                             bootstrap=10, enqueue=False)
    run = services.run_inline(run)
    assert run.analysis_state == GeometryRun.Analysis.FAILED
    assert "not finite" in run.analysis_error
    errors = [e for row in run.items.filter(state=GeometrySegment.State.ERROR).values_list("errors", flat=True)
              for e in row]
    assert errors and all(e["kind"] == "non_finite" for e in errors)

    llm_server.scorer = word_scores
    run = services.run_inline(services.resume_run(run, enqueue=False))
    assert run.analysis_state == GeometryRun.Analysis.DONE, run.analysis_error
    assert all(math.isfinite(f["surprisal"]) for row in run.items.values_list("figures", flat=True) for f in row)


def test_a_cached_non_finite_vector_or_unsavable_figures_fail_the_analysis_not_leave_it_running(
        endpoint, llm_server, monkeypatch):
    run = services.start_run(backend="served", endpoint=endpoint, model="embed-test", segments=segments(),
                             cluster=False, bootstrap=10, permutations=10, enqueue=False)
    run = services.run_inline(run)
    assert run.analysis_state == GeometryRun.Analysis.DONE, run.analysis_error
    # A vector cached before vectors were checked.
    row = SegmentVector.objects.filter(model="embed-test").first()
    row.vector = np.full(16, np.nan, dtype=np.float32).tobytes()
    row.save()
    GeometryRun.objects.filter(pk=run.pk).update(analysis_state=GeometryRun.Analysis.WAITING)
    services.analyse(run.pk)
    run.refresh_from_db()
    assert run.analysis_state == GeometryRun.Analysis.FAILED and "not finite" in run.analysis_error
    # Figures JSON cannot hold: the save fails the analysis with a message.
    monkeypatch.setattr(services, "geometry_results", lambda run, tick=None: {"dispersion": float("nan")})
    GeometryRun.objects.filter(pk=run.pk).update(analysis_state=GeometryRun.Analysis.WAITING)
    services.analyse(run.pk)
    run.refresh_from_db()
    assert run.analysis_state == GeometryRun.Analysis.FAILED
    assert "could not be saved" in run.analysis_error and "resume" in run.analysis_error
