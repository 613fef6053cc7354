"""A real Celery worker on the real broker: killed with SIGKILL mid-run, the run resumed,
and not one result missing or duplicated.

The worker is a separate process, so it must reach the test database: PostgreSQL's test
database by name; SQLite's only if it is a file. When the suite runs on SQLite's in-memory
test database, this test first moves it into a file (SQLite's backup API copies schema and
data in milliseconds) and points the test's own connection there for its duration.
"""
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.db import connection

from grading.judges import services
from grading.models import JudgeResult, JudgeRun, JudgeRunItem
from tests.factories import API_KEY_ENV, make_endpoint, make_question, make_responses, make_setting
from tests.llm_server import LlmServer, Reply, message_text

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
N_RESPONSES = 40
CONCURRENCY = 4
CHUNK = 8
LATENCY = 0.3


def _database_url():
    settings = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{settings['NAME']}"
    if connection.vendor == "postgresql":
        user = settings.get("USER") or ""
        password = f":{settings['PASSWORD']}" if settings.get("PASSWORD") else ""
        auth = f"{user}{password}@" if user else ""
        return f"postgres://{auth}{settings.get('HOST') or '127.0.0.1'}:{settings.get('PORT') or 5432}/{settings['NAME']}"
    pytest.fail(f"No worker database URL for {connection.vendor}")


def _in_memory_sqlite():
    return connection.vendor == "sqlite" and connection.is_in_memory_db()


def test_sigkill_mid_run_then_resume_loses_and_duplicates_nothing(tmp_path, settings):
    if _in_memory_sqlite():
        with file_backed_database(tmp_path / "test-db.sqlite3"):
            _scenario(tmp_path, settings)
    else:
        _scenario(tmp_path, settings)


@contextmanager
def file_backed_database(path):
    """Copy the in-memory test database into `path` and use that file until the block ends."""
    connection.ensure_connection()
    memory = connection.connection
    target = sqlite3.connect(str(path))
    memory.backup(target)
    target.close()
    name = connection.settings_dict["NAME"]
    connection.connection = None  # the in-memory database lives on in `memory`
    connection.settings_dict["NAME"] = str(path)
    try:
        yield
    finally:
        connection.close()
        connection.settings_dict["NAME"] = name
        connection.connection = memory


class Worker:
    """`celery worker` in its own process group, so SIGKILL takes its pool process too."""

    def __init__(self, env, log_path):
        self.log_path = log_path
        self.log = open(log_path, "w")
        self.proc = subprocess.Popen(
            [
                sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", env["REALMATH_JUDGE_QUEUE"],
                "--concurrency", "1", "--pool", "prefork", "--without-gossip", "--without-mingle",
                "--without-heartbeat", "--loglevel", "INFO", "-n", f"judges-test-{uuid.uuid4().hex[:6]}@%h",
            ],
            cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
        )

    def wait_ready(self, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"worker exited early:\n{self.log_path.read_text()[-4000:]}")
            if re.search(r"\bready\.", self.log_path.read_text()):
                return
            time.sleep(0.2)
        pytest.fail(f"worker not ready after {timeout}s:\n{self.log_path.read_text()[-4000:]}")

    def kill(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        self.log.close()


def _wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    pytest.fail(f"timed out after {timeout}s waiting for {what}")


def _answer_no(text):
    match = re.search(r"Answer (\d+):", text)
    return int(match.group(1)) if match else None


def _purge(queue):
    from config.celery import app

    try:
        with app.connection_for_write() as conn:
            conn.default_channel.queue_purge(queue)
    except Exception:  # the queue may not exist any more; nothing to clean then
        pass


def _scenario(tmp_path, settings):
    queue = f"judges-test-{uuid.uuid4().hex[:10]}"
    settings.JUDGE_TASK_QUEUE = queue  # the producer (this process) routes there too
    env = dict(
        os.environ,
        DATABASE_URL=_database_url(),
        REALMATH_JUDGE_QUEUE=queue,
        REALMATH_RATELIMIT_DIR=str(tmp_path / "ratelimit"),
        REALMATH_RATELIMIT_PREFIX=f"realmath-test:{queue}:",
        DJANGO_SETTINGS_MODULE="config.settings",
        OMP_THREAD_LIMIT="1",
    )
    env[API_KEY_ENV] = "sk-integration"
    env.pop("CELERY_TASK_ALWAYS_EAGER", None)
    workers = []

    def reply(payload):
        number = _answer_no(message_text(payload))
        return Reply(f"Reasoning.\n\nOverall Score: {number % 11}")

    with LlmServer(default=reply, latency=LATENCY) as server:
        try:
            question = make_question("Integration problem: find x.", full_score=10)
            make_responses(question, N_RESPONSES)
            endpoint = make_endpoint(server, max_concurrency=CONCURRENCY, timeout_seconds=1.0, max_attempts=3)
            config = make_setting(endpoint, name=f"integration-{queue}")

            # Two workers share the queue; one of them is killed in the middle of the run.
            workers = [Worker(env, tmp_path / f"worker{n}.log") for n in (1, 2)]
            for worker in workers:
                worker.wait_ready()
            run = services.start_judge_run(config, chunk_size=CHUNK)  # autocommit: queued at once
            finished = lambda: JudgeRunItem.objects.filter(run=run).exclude(state="pending").count()  # noqa: E731
            _wait_for(lambda: finished() >= 12, 60, "the first results")
            workers[0].kill()
            done_at_kill = finished()
            assert 12 <= done_at_kill < N_RESPONSES, "the worker must die mid-run"
            run.refresh_from_db()
            assert run.status == JudgeRun.Status.RUNNING

            # What the killed worker had claimed or fetched is only finished after a resume.
            run = services.resume_judge_run(run)
            assert run.epoch == 2
            _wait_for(lambda: JudgeRun.objects.get(pk=run.pk).status == JudgeRun.Status.DONE, 120, "the resumed run")
        finally:
            for worker in workers:
                worker.stop()
            _purge(queue)

        results = JudgeResult.objects.filter(config=config)
        assert results.count() == N_RESPONSES, "zero missing, zero duplicated"
        per_response = Counter(results.values_list("response_id", flat=True))
        assert len(per_response) == N_RESPONSES and set(per_response.values()) == {1}
        assert not results.exclude(status=JudgeResult.Status.OK).exists()
        items = JudgeRunItem.objects.filter(run=run).select_related("result", "response")
        assert all(i.state == "ok" and i.result.response_id == i.response_id for i in items)
        for item in items:
            assert item.result.score == _answer_no(item.response.transcript) % 11

        asked = Counter(_answer_no(r.text) for r in server.requests if r.status == 200)
        assert set(asked) == set(range(N_RESPONSES)), "every response was judged"
        repeated = sum(n - 1 for n in asked.values())
        # Only calls in flight when the worker died or the run was resumed are made again
        # (at most the endpoint's concurrency, shared by both workers); finished work is not.
        assert repeated <= CONCURRENCY, asked
