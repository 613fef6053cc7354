"""Cancelling a study mid-analysis: a real Celery worker (concurrency 1) analysing a long lexical
study stops within seconds of Cancel (its tick asks the database between stages and at every
resample), is free for the next study at once, and Resume analyses the first again."""
import re
import time

import pytest

from studies.geometry import services
from studies.geometry.models import GeometryRun
from tests.studies.test_geometry_runs import jsonl_segments
from tests.workers import Worker, judge_worker_env, on_a_database_workers_reach, purge_queue, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

TEXTS = {group: [f"{group} answer {i}: since x = {i}, therefore y = {i * i} and the area is {i + 3}" for i in range(40)]
         for group in ("human", "synthetic")}


def test_cancel_stops_a_running_analysis_on_a_real_worker(tmp_path, settings):
    on_a_database_workers_reach(tmp_path, lambda: _scenario(tmp_path, settings))


def _scenario(tmp_path, settings):
    queue, env = judge_worker_env(tmp_path, settings, "geometry-cancel")
    log = tmp_path / "worker.log"
    worker = Worker(env, log)
    try:
        worker.wait_ready()
        # 200,000 resamples per statistic: far longer than this test waits.
        long = services.start_run(segments=jsonl_segments(TEXTS), bootstrap=200_000, permutations=200_000, cluster=False)
        wait_for(lambda: GeometryRun.objects.get(pk=long.pk).analysis_state == "running", 120, "the analysis starting")
        time.sleep(1.0)  # well into the bootstraps
        cancelled_at = time.monotonic()
        run = services.cancel_run(long)
        assert (run.status, run.analysis_state) == ("cancelled", "cancelled")
        # The worker's task ends within seconds (it logs the task's end) ...
        ended = wait_for(lambda: re.search(r"analyse_geometry_run\[[^\]]+\] succeeded in ([0-9.]+)s", log.read_text()),
                         30, "the cancelled analysis ending")
        stopped_after = time.monotonic() - cancelled_at
        # ... and, with one worker process, the next study is analysed right after.
        short = services.start_run(segments=jsonl_segments(TEXTS), bootstrap=10, permutations=10, cluster=False)
        wait_for(lambda: GeometryRun.objects.get(pk=short.pk).analysis_state == "done", 60, "the next study's analysis")
        run = GeometryRun.objects.get(pk=long.pk)
        assert (run.status, run.analysis_state, run.results) == ("cancelled", "cancelled", {})
        # Resume: done again and analysed again (cheaply this time).
        GeometryRun.objects.filter(pk=long.pk).update(params={**run.params, "bootstrap": 10, "permutations": 10})
        services.resume_run(run)
        wait_for(lambda: GeometryRun.objects.get(pk=long.pk).analysis_state == "done", 60, "the resumed analysis")
    finally:
        worker.stop()
        purge_queue(queue)
    print(f"cancel took effect in {stopped_after:.2f} s; the cancelled task ran {ended.group(1)} s")
    assert stopped_after < 10, f"the analysis went on {stopped_after:.1f} s after Cancel (task: {ended.group(1)} s)"
    run = GeometryRun.objects.get(pk=long.pk)
    assert run.status == "done" and run.results["groups"]["human"]["n"] == 40
