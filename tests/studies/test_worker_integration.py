"""probe_judge without --inline: the run goes to a real Celery worker on the real broker
(through grading/runs/engine.py and the judge queue) and the command follows it to the end."""
import json
from io import StringIO

import pytest
from django.core.management import call_command

from studies.models import ProbeRun
from tests.factories import make_endpoint, make_question, make_setting
from tests.llm_server import LlmServer
from tests.workers import Worker, judge_worker_env, on_a_database_workers_reach, purge_queue

from .helpers import FAIR, make_answers

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def test_probe_judge_through_a_real_worker(tmp_path, settings):
    on_a_database_workers_reach(tmp_path, lambda: _scenario(tmp_path, settings))


def _scenario(tmp_path, settings):
    queue, env = judge_worker_env(tmp_path, settings, "studies-test")
    with LlmServer(default=FAIR, latency=0.05) as server:
        worker = Worker(env, tmp_path / "worker.log")
        try:
            make_answers(make_question(), 6)
            make_setting(make_endpoint(server, max_concurrency=4), name=f"probe-{queue}")
            worker.wait_ready()
            out = StringIO()
            call_command("probe_judge", "--setting", f"probe-{queue}", "--probe", "drop-final-answer",
                         "--format", "json", stdout=out, stderr=StringIO())
        finally:
            worker.stop()
            purge_queue(queue)
    rates = json.loads(out.getvalue())["drop-final-answer"]
    assert (rates["n"], rates["detected"], rates["rate"]) == (6, 6, 1.0)
    assert ProbeRun.objects.get().status == ProbeRun.Status.DONE
    assert "run_probe_chunk" in (tmp_path / "worker.log").read_text()
