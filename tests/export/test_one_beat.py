"""One beat, whatever dies (issue 40, item 13).

A worker with its embedded beat (`-B`, as `make run` used to start it) is killed with SIGKILL in its
main process (what the OOM killer does) and started again: before, the first beat lived on,
orphaned, and the restarted worker ran a second one, so every periodic task was sent twice. Now an
embedded beat dies with its worker, and a beat that finds another one running (the lock file,
config/celery.py `one_beat`) refuses to start. Counted by the periodic stale checks the beats send
to a queue nobody reads."""
import os
import signal
import subprocess
import sys
import time

import pytest

from config.celery import app
from tests.workers import ROOT, Worker, judge_worker_env, on_a_database_workers_reach, purge_queue, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

INTERVAL = 0.5  # REALMATH_STALE_CHECK_SECONDS: each beat sends two stale checks per interval


def queued(queue):
    with app.connection_for_write() as conn:
        try:
            return conn.default_channel.queue_declare(queue=queue, passive=True).message_count
        except Exception:  # noqa: BLE001 - no message yet: the queue does not exist
            return 0


def rate(queue, seconds=5.0):
    """Periodic tasks sent to `queue` per second, over `seconds`."""
    purge_queue(queue)
    time.sleep(seconds)
    return queued(queue) / seconds


def test_one_beat_after_the_worker_is_killed_and_started_again(tmp_path, settings):
    on_a_database_workers_reach(tmp_path, lambda: _scenario(tmp_path, settings))


def _scenario(tmp_path, settings):
    work_queue, env = judge_worker_env(tmp_path, settings, "beat-work")
    beat_queue = f"{work_queue}-periodic"  # where the beats send; nobody reads it
    env.update(REALMATH_DEFAULT_QUEUE=beat_queue, REALMATH_STALE_CHECK_SECONDS=str(INTERVAL),
               REALMATH_BEAT_LOCK=str(tmp_path / "beat.lock"))
    first = second = None
    try:
        first = Worker(env, tmp_path / "first.log", queue=work_queue, extra_args=("-B", "-s", str(tmp_path / "s1")))
        first.wait_ready()
        wait_for(lambda: queued(beat_queue) >= 2, 30, "the first beat's periodic tasks")
        one = rate(beat_queue)
        assert 2 / INTERVAL * 0.5 <= one <= 2 / INTERVAL * 1.5, one

        os.kill(first.proc.pid, signal.SIGKILL)  # the main process only, as the OOM killer does
        first.proc.wait(10)
        second = Worker(env, tmp_path / "second.log", queue=work_queue, extra_args=("-B", "-s", str(tmp_path / "s2")))
        second.wait_ready()
        time.sleep(2)  # the new beat starts after the worker is ready
        after = rate(beat_queue)
        assert after <= 2 / INTERVAL * 1.5, f"{after:.1f} periodic tasks a second: more than one beat is running"
        assert after >= 2 / INTERVAL * 0.5, f"{after:.1f} periodic tasks a second: no beat is running"

        # A beat started by hand beside it refuses to start.
        started = subprocess.run(
            [sys.executable, "-m", "celery", "-A", "config", "beat", "-s", str(tmp_path / "s3"), "--loglevel", "INFO"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
        )
        assert started.returncode != 0
        assert "Another celery beat" in started.stdout + started.stderr
    finally:
        for worker in (first, second):
            if worker is not None:
                try:
                    os.killpg(worker.proc.pid, signal.SIGKILL)  # an orphaned beat is in its worker's group
                except ProcessLookupError:
                    pass
                worker.stop()
        purge_queue(beat_queue)
        purge_queue(work_queue)
