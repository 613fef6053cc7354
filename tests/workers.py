"""Real Celery workers for integration tests: a worker process on its own queue, the test
database reachable from it (PostgreSQL by name; SQLite moved from memory into a file), and the
queue purged afterwards. Used by tests/judges, tests/studies and tests/ocr."""
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.db import connection

from tests.factories import API_KEY_ENV

ROOT = Path(__file__).resolve().parents[1]


def database_url():
    settings = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{settings['NAME']}"
    if connection.vendor == "postgresql":
        user = settings.get("USER") or ""
        password = f":{settings['PASSWORD']}" if settings.get("PASSWORD") else ""
        auth = f"{user}{password}@" if user else ""
        return f"postgres://{auth}{settings.get('HOST') or '127.0.0.1'}:{settings.get('PORT') or 5432}/{settings['NAME']}"
    pytest.fail(f"No worker database URL for {connection.vendor}")


def in_memory_sqlite():
    return connection.vendor == "sqlite" and connection.is_in_memory_db()


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


def on_a_database_workers_reach(tmp_path, scenario):
    """Run scenario() where a worker process can reach the test database: as it is, or, on
    SQLite's in-memory test database, after moving it into a file for the scenario's duration."""
    if in_memory_sqlite():
        with file_backed_database(tmp_path / "test-db.sqlite3"):
            return scenario()
    return scenario()


def wait_for(predicate, timeout, what):
    """Poll `predicate` every 0.1 s until it returns a true value (returned), else fail the test."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    pytest.fail(f"timed out after {timeout}s waiting for {what}")


def judge_worker_env(tmp_path, settings, prefix):
    """A fresh judge queue for one test (this process routes its tasks there too) and the
    environment of the workers that read it: the test database, a rate-limit folder and prefix of
    their own, the endpoint key variable set, tasks not eager."""
    queue = f"{prefix}-{uuid.uuid4().hex[:10]}"
    settings.JUDGE_TASK_QUEUE = queue
    env = dict(
        os.environ, DATABASE_URL=database_url(), REALMATH_JUDGE_QUEUE=queue,
        REALMATH_RATELIMIT_DIR=str(tmp_path / "ratelimit"), REALMATH_RATELIMIT_PREFIX=f"realmath-test:{queue}:",
        DJANGO_SETTINGS_MODULE="config.settings", OMP_THREAD_LIMIT="1",
    )
    env[API_KEY_ENV] = "sk-integration"
    env.pop("CELERY_TASK_ALWAYS_EAGER", None)
    return queue, env


class Worker:
    """`celery worker` in its own process group, so SIGKILL takes its pool process too. It reads
    `queue` (default: the environment's judge queue) with `concurrency` pool processes; `prefix`
    goes before the command (e.g. setpriv) and `cwd` is its working folder (default: the checkout)."""

    def __init__(self, env, log_path, *, queue=None, concurrency=1, extra_args=(), prefix=(), cwd=None):
        self.log_path = log_path
        self.log = open(log_path, "w")
        self.proc = subprocess.Popen(
            [
                *prefix, sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", queue or env["REALMATH_JUDGE_QUEUE"],
                "--concurrency", str(concurrency), "--pool", "prefork", "--without-gossip", "--without-mingle",
                "--without-heartbeat", "--loglevel", "INFO", "-n", f"realmath-test-{uuid.uuid4().hex[:6]}@%h",
                *extra_args,
            ],
            cwd=cwd or ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
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


def purge_queue(queue):
    from config.celery import app

    try:
        with app.connection_for_write() as conn:
            conn.default_channel.queue_purge(queue)
    except Exception:  # noqa: BLE001 - the queue may not exist any more; nothing to clean then
        pass

