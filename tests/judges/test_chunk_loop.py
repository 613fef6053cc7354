"""grading.runs.engine.call_each, the one chunk loop of generation, probe and meta-evaluation runs."""
import threading
import time

from grading.runs import engine as runs


def test_at_most_width_calls_at_once_and_every_value_recorded():
    lock, state = threading.Lock(), {"now": 0, "most": 0}

    def call(job):
        with lock:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
        time.sleep(0.02)
        with lock:
            state["now"] -= 1
        if job == 3:
            raise ValueError("three")
        return job * 10

    recorded, record_threads = {}, set()

    def record(job, value):
        recorded[job] = value
        record_threads.add(threading.get_ident())

    left = runs.call_each(range(10), call, record, width=3, is_live=lambda: True)
    assert left == []
    assert state["most"] == 3
    assert {job: value for job, value in recorded.items() if job != 3} == {j: j * 10 for j in range(10) if j != 3}
    assert isinstance(recorded[3], ValueError)
    assert record_threads == {threading.get_ident()}  # the database is touched in the chunk's thread only


def test_a_stopped_run_starts_no_new_call_and_records_those_in_flight(monkeypatch):
    monkeypatch.setattr(runs, "CANCEL_CHECK_SECONDS", 0.01)
    started, recorded = [], []

    def call(job):
        started.append(job)
        time.sleep(0.05)
        return job

    left = runs.call_each(range(6), call, lambda job, value: recorded.append(job), width=2, is_live=lambda: False)
    assert sorted(started) == [0, 1]
    assert sorted(recorded) == [0, 1]
    assert left == [2, 3, 4, 5]


def test_after_each_runs_once_per_wait():
    calls = []
    runs.call_each([1], lambda job: job, lambda job, value: None, width=4, is_live=lambda: True,
                   after_each=lambda: calls.append(1))
    assert calls == [1]
