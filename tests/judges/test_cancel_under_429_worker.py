"""Cancel and shutdown reach calls waiting out 429s, in a real Celery worker (issue 40, item 11).

- A judge run against a server answering every call 429 with a Retry-After: once the run is
  cancelled, the worker makes no request at all (before, each waiting call was sent again after
  its Retry-After, carrying a student's transcript), and the claims of the stopped calls are
  given back, so a resume starts them again.
- A warm shutdown (SIGTERM to the worker's main process, as systemd or `make run`'s Ctrl-C
  sends) while calls wait out a 300 s Retry-After ends in seconds, not after the pause.
"""
import os
import signal
import subprocess
import time

import pytest

from grading.judges import services
from grading.models import JudgeResult, JudgeRun, JudgeRunItem
from tests.factories import make_endpoint, make_question, make_responses, make_setting
from tests.llm_server import LlmServer, Reply
from tests.workers import Worker, judge_worker_env, on_a_database_workers_reach, purge_queue, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def test_a_cancelled_run_makes_no_request_after_the_cancel(tmp_path, settings):
    on_a_database_workers_reach(tmp_path, lambda: _cancel_scenario(tmp_path, settings))


def _cancel_scenario(tmp_path, settings):
    queue, env = judge_worker_env(tmp_path, settings, "cancel-429")
    # A short Retry-After: without the cancel reaching the waits, they are sent again within the test.
    with LlmServer(default=Reply(status=429, retry_after=3)) as server:
        worker = None
        try:
            question = make_question("Cancel problem: find x.", full_score=10)
            make_responses(question, 6)
            endpoint = make_endpoint(server, max_concurrency=3, timeout_seconds=2.0, max_attempts=3)
            setting = make_setting(endpoint, name=f"cancel-{queue}")
            worker = Worker(env, tmp_path / "worker.log")
            worker.wait_ready()
            run = services.start_judge_run(setting, chunk_size=8)
            wait_for(lambda: server.request_count >= 1, 60, "the first (429) answers")
            time.sleep(1.0)  # the calls are waiting out their Retry-After or the endpoint's cooldown
            services.cancel_judge_run(run)
            at_cancel = server.request_count
            time.sleep(8.0)  # more than two Retry-Afters
            assert server.request_count == at_cancel, "requests were sent after the cancel"
            # The stopped calls' claims were given back: nothing is left running, every item open.
            wait_for(lambda: not JudgeResult.objects.filter(setting=setting, status="running").exists(), 10,
                     "the cancelled calls' claims to be given back")
            assert JudgeRunItem.objects.filter(run=run, state="pending").count() == 6
            # Resume: the same work is done once the server answers.
            server.default = Reply("Reasoning.\nOverall Score: 7")
            run = services.resume_judge_run(run)
            wait_for(lambda: JudgeRun.objects.get(pk=run.pk).status == JudgeRun.Status.DONE, 60, "the resumed run")
            assert JudgeResult.objects.filter(setting=setting, status="ok").count() == 6
        finally:
            if worker is not None:
                worker.stop()
            purge_queue(queue)


def test_a_warm_shutdown_does_not_wait_out_rate_limit_pauses(tmp_path, settings):
    on_a_database_workers_reach(tmp_path, lambda: _shutdown_scenario(tmp_path, settings))


def _shutdown_scenario(tmp_path, settings):
    queue, env = judge_worker_env(tmp_path, settings, "shutdown-429")
    with LlmServer(default=Reply(status=429, retry_after=300)) as server:
        worker = None
        try:
            question = make_question("Shutdown problem: find x.", full_score=10)
            make_responses(question, 6)
            endpoint = make_endpoint(server, max_concurrency=2, timeout_seconds=2.0, max_attempts=3)
            setting = make_setting(endpoint, name=f"shutdown-{queue}")
            worker = Worker(env, tmp_path / "worker.log", concurrency=2)
            worker.wait_ready()
            run = services.start_judge_run(setting, chunk_size=3)  # two chunks: a task and a tail
            # One 429 is enough: its Retry-After pauses every call to the endpoint (a second request
            # may or may not have left before the first answer came back: not waited for).
            wait_for(lambda: server.request_count >= 1, 90, "the first (429) answer")
            time.sleep(1.5)
            at_signal = server.request_count
            started = time.monotonic()
            os.kill(worker.proc.pid, signal.SIGTERM)  # the main process only: a warm shutdown
            try:
                worker.proc.wait(30)
            except subprocess.TimeoutExpired:
                pytest.fail("the warm shutdown waited out the rate-limit pause:\n"
                            + (tmp_path / "worker.log").read_text()[-3000:])
            assert time.monotonic() - started < 30
            assert server.request_count == at_signal  # nothing was sent while stopping
            assert "Warm shutdown" in (tmp_path / "worker.log").read_text()
            # The run goes on elsewhere: it is still running, its work open for a take-over.
            run.refresh_from_db()
            assert run.status == JudgeRun.Status.RUNNING
            assert not JudgeResult.objects.filter(setting=setting).exclude(status="running").exists()
        finally:
            if worker is not None:
                worker.stop()
            purge_queue(queue)
