"""The benchmarks' runner and process handling (bench/smoke.py, bench/_procs.py; issue 35): a
bench stopped by its time limit, by SIGTERM or Ctrl-C stops every process it started, and the
runner names any process a bench left running."""
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import smoke  # noqa: E402

pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc")

STARTS_A_CHILD = """
import subprocess, sys, time
sys.path.insert(0, {bench!r})
import _procs
_procs.install()
child = {start}
print("child", child.pid, flush=True)
if {finish}:
    raise SystemExit(0)
time.sleep(600)
"""


def _bench(tmp_path, name, start, finish=False):
    path = tmp_path / f"{name}_bench.py"
    path.write_text(textwrap.dedent(STARTS_A_CHILD.format(bench=str(ROOT / "bench"), start=start, finish=finish)))
    return path


SPAWNED = "_procs.spawn([sys.executable, '-c', 'import time; time.sleep(600)'])"
ESCAPED = "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'], start_new_session=True)"


def test_a_bench_stopped_at_its_limit_stops_what_it_started(tmp_path):
    seconds, problem, output = smoke.run_one(_bench(tmp_path, "slow", SPAWNED), 3, tmp_path / "none.sqlite3")
    assert problem == "still running after 3 s: stopped"  # and nothing left running
    assert "child" in output and seconds < 30


def test_a_process_a_bench_leaves_running_is_named_and_killed(tmp_path):
    seconds, problem, output = smoke.run_one(_bench(tmp_path, "leaky", ESCAPED, finish=True), 20,
                                             tmp_path / "none.sqlite3")
    assert "left 1 process(es) running" in problem and "time.sleep(600)" in problem
    pid = int(output.split()[1])
    time.sleep(0.5)
    assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_sigterm_stops_the_spawned_children(tmp_path, sig):
    process = subprocess.Popen([sys.executable, str(_bench(tmp_path, "interrupted", SPAWNED))], stdout=subprocess.PIPE,
                               text=True, start_new_session=True)
    pid = int(process.stdout.readline().split()[1])
    os.kill(process.pid, sig)  # Ctrl-C in a terminal sends SIGINT
    process.wait(20)
    time.sleep(0.5)
    assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]


def test_a_bench_killed_outright_takes_its_children_with_it(tmp_path):
    process = subprocess.Popen([sys.executable, str(_bench(tmp_path, "killed", SPAWNED))], stdout=subprocess.PIPE,
                               text=True, start_new_session=True)
    pid = int(process.stdout.readline().split()[1])
    os.kill(process.pid, signal.SIGKILL)  # no handler runs: the kernel's parent-death signal does it
    process.wait(20)
    deadline = time.monotonic() + 10
    while Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]:
        assert time.monotonic() < deadline, "the child outlived its killed bench"
        time.sleep(0.2)


def test_every_bench_has_a_smoke_size():
    for path in smoke.benches():
        assert "--smoke" in path.read_text() or "smoke_argument(parser)" in path.read_text(), path.name
    assert len(smoke.benches()) >= 13
