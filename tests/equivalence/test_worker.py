"""The worker processes: hard kill on overrun, memory cap, fork and thread safety, order."""
import multiprocessing
import os
import signal
import threading
import time

import pytest

from equivalence import check_equivalence, check_many, runner
from equivalence.worker import GRACE_SECONDS, SECOND_OPINION_LOAD_SECONDS, WorkerPool, WorkerProcess


@pytest.fixture(scope="module")
def _module_pool():
    """A one-worker pool of its own, so stopping its process cannot disturb other tests."""
    pool = WorkerPool(size=1, memory_mb=768, warmup=False)
    yield pool
    pool.shutdown()


@pytest.fixture
def private_pool(_module_pool, monkeypatch):
    monkeypatch.setattr(runner, "pool", lambda: _module_pool)
    return _module_pool


def _wait_until_gone(pid, seconds=10):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.02)
    return False


def _idle_worker(pool):
    check_equivalence("1", "1")  # make sure one worker is started and idle
    assert len(pool._idle) == 1
    return pool._idle[0]


def test_a_worker_that_stops_answering_is_killed_and_replaced(private_pool):
    worker = _idle_worker(private_pool)
    stuck_pid = worker.process.pid
    # SIGSTOP freezes the process exactly like a C-level computation that never yields.
    os.kill(stuck_pid, signal.SIGSTOP)
    started = time.monotonic()
    verdict = check_equivalence("x^2", "x*x", timeout=0.5)
    waited = time.monotonic() - started
    assert verdict.equivalent is None
    assert verdict.method == "timeout"
    # The timeout plus the grace period, and half a second for a loaded machine (CI runs two
    # test processes on two cores) to kill the worker and answer.
    assert waited < 0.5 + GRACE_SECONDS + 0.5
    assert verdict.elapsed_ms <= (0.5 + GRACE_SECONDS + 0.5) * 1000
    assert _wait_until_gone(stuck_pid)  # killed and reaped (in the background)
    replacement = check_equivalence("x^2", "x*x")
    assert replacement.equivalent is True
    assert private_pool._idle[0].process.pid != stuck_pid


FAMILY = ("[kπ+5π/8, kπ+9π/8], k ∈ Z", r"\left[k\pi-\frac{3\pi}{8},k\pi+\frac{\pi}{8}\right],k\in\mathbb{Z}")


def _warm(timeout=60):
    """Start the pool's worker and load Math-Verify in it, with time to spare on a busy machine."""
    assert check_equivalence("1/2", "0.5", second_opinion=True, timeout=timeout).second_opinion["equivalent"] is True


def test_math_verify_overrunning_is_killed_and_our_verdict_stands(private_pool, monkeypatch):
    """The second opinion runs after our verdict is sent; freezing it mid-way costs nothing of ours."""
    _warm()
    assert check_equivalence(*FAMILY, timeout=30).equivalent is True  # warm for the family check
    pid = private_pool._idle[0].process.pid
    wait_for_second_opinion = WorkerProcess._second_opinion

    def frozen_after_our_verdict(worker, timeout):
        os.kill(worker.process.pid, signal.SIGSTOP)  # frozen inside Math-Verify, like a C-level hang
        return wait_for_second_opinion(worker, timeout)

    monkeypatch.setattr(WorkerProcess, "_second_opinion", frozen_after_our_verdict)
    started = time.monotonic()
    verdict = check_equivalence(*FAMILY, timeout=1.0, second_opinion=True)
    assert verdict.equivalent is True and verdict.method == "family"
    assert verdict.second_opinion["equivalent"] is None
    assert "stopped" in verdict.second_opinion["explanation"]
    assert time.monotonic() - started < 1.0 + GRACE_SECONDS + SECOND_OPINION_LOAD_SECONDS + 1.0
    assert _wait_until_gone(pid)
    monkeypatch.undo()
    assert check_equivalence("x^2", "x*x", timeout=30).equivalent is True  # a replacement took over


def test_a_second_opinion_never_changes_our_verdict(private_pool):
    _warm()
    verdict = check_equivalence("0.333", r"\frac13", second_opinion=True, timeout=30)
    assert verdict.equivalent is True and verdict.second_opinion["equivalent"] is False
    assert verdict.agreement == "disagree"
    assert check_equivalence("0.333", r"\frac13").equivalent is True


def test_a_worker_that_dies_gives_an_undecided_verdict_then_recovers(private_pool):
    worker = _idle_worker(private_pool)
    os.kill(worker.process.pid, signal.SIGKILL)
    verdict = check_equivalence("1/2", "0.5")
    assert verdict.equivalent is None and verdict.method in ("crashed", "timeout")
    assert check_equivalence("1/2", "0.5").equivalent is True


def test_worker_runs_under_an_address_space_cap(private_pool):
    worker = _idle_worker(private_pool)
    with open(f"/proc/{worker.process.pid}/limits") as handle:
        line = next(row for row in handle if row.startswith("Max address space"))
    assert line.split()[3] == str(768 * 1024 * 1024)


def test_soft_budget_answers_before_the_hard_limit():
    # Large symbolic work: the worker gives up on its own and says so, without being killed.
    verdict = check_equivalence("(x+y+z+1)^{40}", "(x+y+z+1)^{40} + 10^{-30}", timeout=1.0)
    assert verdict.equivalent in (False, None)
    assert verdict.elapsed_ms < (1.0 + GRACE_SECONDS) * 1000 + 100


def test_order_is_kept_across_workers():
    pairs = [("1/2", "0.5"), ("1/2", "0.6"), ("x+x", "2x"), ("x+x", "3x")] * 25
    verdicts = check_many(pairs, workers=2)
    assert [v.equivalent for v in verdicts] == [True, False, True, False] * 25


def test_many_threads_share_the_pool():
    results = {}

    def work(k):
        results[k] = check_equivalence(f"{k}/2", f"{k * 5}/10").equivalent and not check_equivalence(f"{k}", f"{k + 1}").equivalent

    threads = [threading.Thread(target=work, args=(k,)) for k in range(1, 9)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert results == {k: True for k in range(1, 9)}


def _check_in_child(queue):
    queue.put(check_equivalence(r"\frac{1}{\sqrt2}", r"\frac{\sqrt2}{2}").equivalent)


def test_works_in_a_daemonic_forked_process_like_celery_prefork(monkeypatch):
    check_equivalence("1", "1")  # the parent already has workers when it forks
    monkeypatch.setattr(runner.pool(), "warmup", False)  # the child's own worker starts faster
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_check_in_child, args=(queue,), daemon=True)
    child.start()
    assert queue.get(timeout=60) is True
    child.join(30)
    assert child.exitcode == 0
    assert check_equivalence("2", "2.0").equivalent is True  # the parent's workers are untouched


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError):
        check_equivalence("1", "1", mode="lenient")
    with pytest.raises(ValueError):
        check_equivalence("1", "1", timeout=0)
    with pytest.raises(TypeError):
        check_equivalence(1, "1")
    with pytest.raises(TypeError):
        check_many([("1",)])


def test_over_long_answers_are_undecided_without_a_worker():
    verdict = check_equivalence("1" * 6000, "1")
    assert verdict.equivalent is None and verdict.method == "too-long"


def test_verdict_as_dict_has_the_documented_fields():
    data = check_equivalence("x \\geq 2", "[2, +\\infty)").as_dict()
    assert data["equivalent"] is True
    for key in ("method", "explanation", "pred_parsed", "gold_parsed", "pred_latex", "gold_latex", "mode", "elapsed_ms"):
        assert key in data
    assert data["gold_parsed"] == "[2, \u221e)"


def test_the_pool_takes_its_settings_from_django_and_configure(settings):
    import equivalence
    from equivalence.worker import pool

    shared = pool()
    assert (shared.size, shared.memory_mb, shared.warmup) == (
        settings.EQUIVALENCE_WORKERS, settings.EQUIVALENCE_MEMORY_MB, settings.EQUIVALENCE_WARMUP)
    before = (shared.size, shared.memory_mb, shared.warmup, shared.debug)
    try:
        equivalence.configure(workers=3, memory_mb=900)
        assert (shared.size, shared.memory_mb, shared.warmup, shared.debug) == (3, 900, before[2], before[3])
    finally:
        shared.configure(workers=before[0], memory_mb=before[1])
