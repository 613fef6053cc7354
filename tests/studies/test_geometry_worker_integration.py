"""error_geometry without --inline: a served-model study goes to a real Celery worker on the real
broker (the judge queue, through grading/runs/engine.py), its chunks fetch the vectors from the loopback
server, the worker analyses it, and the command follows it to the end."""
import json
from io import StringIO

import pytest
from django.core.management import call_command

from studies.geometry.models import GeometryRun
from tests.factories import API_KEY_ENV
from tests.llm_server import LlmServer
from tests.workers import Worker, judge_worker_env, on_a_database_workers_reach, purge_queue

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def test_error_geometry_through_a_real_worker(tmp_path, settings):
    on_a_database_workers_reach(tmp_path, lambda: _scenario(tmp_path, settings))


def _scenario(tmp_path, settings):
    queue, env = judge_worker_env(tmp_path, settings, "geometry-test")
    segments = tmp_path / "segments.jsonl"
    segments.write_text("\n".join(json.dumps({
        "segment_text": f"{s} segment {i}", "sample_id": f"{s}{i}", "question": f"Q{i % 3}", "sub_id": "(1)",
        "real_score": 0, "max_score": 2, "analysis_subset": s}) for s in ("human", "synthetic") for i in range(10)))
    with LlmServer(latency=0.02) as server:
        worker = Worker(env, tmp_path / "worker.log")
        try:
            worker.wait_ready()
            out = StringIO()
            call_command("error_geometry", "--base-url", server.url, "--model", "embed-worker", "--api-key-env",
                         API_KEY_ENV, "--segments-in", str(segments), "--no-clusters", "--bootstrap", "50",
                         "--permutations", "50", "--format", "json", stdout=out, stderr=StringIO())
        finally:
            worker.stop()
            purge_queue(queue)
    results = json.loads(out.getvalue())
    assert results["model"] == "embed-worker" and results["counts"]["segments"] == 20
    run = GeometryRun.objects.get()
    assert run.status == GeometryRun.Status.DONE and run.analysis_state == "done"
    assert sum(len(r.payload["input"]) for r in server.requests) == 20
    log = (tmp_path / "worker.log").read_text()
    assert "run_geometry_chunk" in log and "analyse_geometry_run" in log
