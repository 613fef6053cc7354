"""Checks run in separate, persistent worker processes that are killed when they overrun.

Why a process: SymPy and mpmath can spend minutes inside one C-level big-integer operation
(``10^{10^{10}}``, a power tower); no signal interrupts that, and signals do not work off the
main thread at all (web server threads, Celery). Killing the process always works.

Why a fresh interpreter (``subprocess``) and not ``fork``/``multiprocessing``: forking a
threaded web server or a Celery worker copies locks in unknown states, and Celery's prefork
children are daemonic, which ``multiprocessing`` refuses to let have children. A started
interpreter has none of these problems; it is started once and then answers checks over a
pipe (newline-delimited JSON), so a check costs milliseconds. When a check overruns, the worker
is killed and a replacement starts at once, in the background.

The worker caps its own address space (``resource.RLIMIT_AS``) so a runaway expression cannot
take the machine's memory.
"""
import atexit
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
GRACE_SECONDS = 0.25  # after the timeout, for the worker's own "out of time" reply to arrive
STARTUP_SECONDS = 60.0
SECOND_OPINION_LOAD_SECONDS = 15.0  # extra wait while a worker imports Math-Verify the first time
# Defaults of the pool's settings; the Django side passes its own through configure().
DEFAULT_MEMORY_MB = 1024
DEFAULT_POOL_SIZE = 2
WARMUP = [
    (r"\frac{1}{\sqrt{2}}", r"\frac{\sqrt{2}}{2}"), (r"\cos^2 x - \sin^2 x", r"\cos 2x"),
    (r"x \geq 2", r"[2, \infty)"), ("0.333", "1/3"), ("x^2 - 1 = 0", r"\{1, -1\}"),
    (r"\ln(2x) - \ln x", r"\ln 2"), ("(x+1)^2", "x^2+2x+1"), ("x^2 < 4", "-2 < x < 2"),
    (r"\frac{x-1}{x+2} \ge 0", r"x < -2 \text{ or } x \ge 1"), (r"\log_2 3 + \log_2 5", r"\log_2 15"),
    ("x^2+y^2=1", r"y=\sqrt{1-x^2}"), (r"\sqrt{2}e^{i\pi/4}", "1+i"), ("x+y>1", "x+y>2"),
    (r"\begin{pmatrix}1&2\\3&4\end{pmatrix}", "[[1,2],[3,4]]"), ("2^{2^{2^{2^2}}}", "2^{65535}"),
    ("5 cm", "50 mm"),  # loads SymPy's units library
    ("[kπ+5π/8, kπ+9π/8], k ∈ Z", r"x = (-1)^k \frac{\pi}{6} + k\pi, k \in \mathbb{Z}"),  # families
    ("(x-1)^{500}(x+1)^{500}", "(x^2-1)^{500}"),
]


class WorkerError(RuntimeError):
    """A worker process could not be started or stopped answering."""


class WorkerProcess:
    """One persistent checking process and the pipe protocol to it."""

    def __init__(self, memory_mb=DEFAULT_MEMORY_MB, warmup=True, debug=False):
        env = dict(os.environ)
        env["PYTHONPATH"] = str(PROJECT_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONHASHSEED="0")
        env.pop("DJANGO_SETTINGS_MODULE", None)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "equivalence.worker", str(int(memory_mb)), "warm" if warmup else "cold"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None if debug else subprocess.DEVNULL,
            cwd=str(PROJECT_ROOT),
            env=env,
            close_fds=True,
            start_new_session=True,  # a Ctrl-C or a group kill aimed at the parent is not ours
        )
        self.owner_pid = os.getpid()
        self._buffer = b""
        self._ready = False
        self._next_id = 0
        self._second_loaded = False
        self._killed = False

    @property
    def alive(self):
        return not self._killed and self.process.poll() is None

    def wait_ready(self, timeout=STARTUP_SECONDS):
        if self._ready:
            return
        line = self._read_line(time.monotonic() + timeout)
        if line != b"ready":
            self.kill()
            raise WorkerError("the equivalence worker did not start")
        self._ready = True

    def check(self, pred, gold, mode, timeout, second_opinion=False, domain=""):
        """Send one check; return the verdict dict, or None if the worker was killed or died.

        With ``second_opinion`` the worker then asks Math-Verify (under the same time limit) and
        sends its verdict on a second line; the verdict dict gets it as ``second_opinion``. If
        that second line does not come in time the worker is killed, and our verdict stands.
        """
        self.wait_ready()
        self._next_id += 1
        request = {"id": self._next_id, "pred": pred, "gold": gold, "mode": mode, "timeout": timeout,
                   "second": timeout if second_opinion else 0, "domain": domain or ""}
        try:
            self.process.stdin.write(json.dumps(request).encode("utf-8") + b"\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            self.kill()
            return None
        line = self._read_line(time.monotonic() + timeout + GRACE_SECONDS)
        if line is None:
            self.kill()
            return None
        try:
            reply = json.loads(line)
        except ValueError:
            self.kill()
            return None
        if reply.get("id") != self._next_id:
            self.kill()
            return None
        verdict = reply["verdict"]
        if second_opinion:
            verdict["second_opinion"] = self._second_opinion(timeout)
        return verdict

    def _second_opinion(self, timeout):
        allowance = timeout + GRACE_SECONDS + (0 if self._second_loaded else SECOND_OPINION_LOAD_SECONDS)
        line = self._read_line(time.monotonic() + allowance)
        try:
            reply = json.loads(line) if line is not None else None
        except ValueError:
            reply = None
        if not isinstance(reply, dict) or reply.get("id") != self._next_id or "second_opinion" not in reply:
            self.kill()  # its process is replaced; our verdict is already in hand
            return {"checker": "Math-Verify", "equivalent": None,
                    "explanation": f"Math-Verify did not answer within {timeout:g} s (its process was stopped)",
                    "explanation_data": {"t": "Math-Verify did not answer within {timeout} s (its process was stopped)",
                                         "p": {"timeout": format(timeout, "g")}}}
        self._second_loaded = True
        return reply["second_opinion"]

    def _read_line(self, deadline):
        fd = self.process.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            readable, _, _ = select.select([fd], [], [], left)
            if not readable:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:  # the worker died (memory cap, crash)
                return None
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def kill(self, wait=False):
        """SIGKILL the worker; it is reaped in the background unless ``wait``.

        Freeing a large address space can take a noticeable time; the caller need not wait.
        """
        self._killed = True
        if self.process.poll() is None:
            try:
                self.process.kill()
            except OSError:
                pass
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:
                pass
        if wait:
            _reap(self.process)
        else:
            threading.Thread(target=_reap, args=(self.process,), daemon=True).start()

    def abandon(self):
        """Forget an inherited worker in a forked child without touching the parent's process."""
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:
                pass
        self.process.returncode = 0  # so Popen.__del__ does not track it here


def _reap(process):
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        pass


class WorkerPool:
    """Up to ``size`` workers shared by the threads of this process."""

    def __init__(self, size=DEFAULT_POOL_SIZE, memory_mb=DEFAULT_MEMORY_MB, warmup=True, debug=False):
        self.size = max(1, size)
        self.memory_mb = memory_mb
        self.warmup = warmup
        self.debug = debug
        self._idle = []
        self._count = 0
        self._condition = threading.Condition()
        self._pid = os.getpid()

    def configure(self, *, workers=None, memory_mb=None, warmup=None, debug=None):
        """Change the settings (``None`` keeps one); see :func:`equivalence.configure`."""
        with self._condition:
            if workers is not None:
                self.size = max(1, int(workers))
                self._condition.notify_all()
            if memory_mb is not None:
                self.memory_mb = int(memory_mb)
            if warmup is not None:
                self.warmup = bool(warmup)
            if debug is not None:
                self.debug = bool(debug)

    def _after_fork(self):
        """In a forked child the parent's workers are not ours: drop them, start afresh."""
        for worker in self._idle:
            worker.abandon()
        self._idle = []
        self._count = 0
        self._condition = threading.Condition()
        self._pid = os.getpid()

    @contextmanager
    def worker(self):
        if os.getpid() != self._pid:
            self._after_fork()
        with self._condition:
            while not self._idle and self._count >= self.size:
                self._condition.wait()
            if self._idle:
                worker = self._idle.pop()
            else:
                self._count += 1
                worker = None
        if worker is None:
            try:
                worker = WorkerProcess(self.memory_mb, self.warmup, self.debug)
            except OSError as exc:
                with self._condition:
                    self._count -= 1
                    self._condition.notify()
                raise WorkerError(f"cannot start the equivalence worker: {exc}") from exc
        holder = [worker]
        try:
            yield holder
        finally:
            current = holder[0]
            with self._condition:
                if current is not None and current.alive:
                    self._idle.append(current)
                else:
                    if current is not None:
                        current.kill()
                    self._count -= 1
                self._condition.notify()

    def replace(self, holder):
        """Kill the held worker and start its replacement now (it warms up in the background)."""
        holder[0].kill()
        try:
            holder[0] = WorkerProcess(self.memory_mb, self.warmup, self.debug)
        except OSError:
            holder[0] = None

    def shutdown(self):
        with self._condition:
            if os.getpid() != self._pid:
                return
            for worker in self._idle:
                worker.kill(wait=True)
            self._count -= len(self._idle)
            self._idle = []


_pool = WorkerPool()
atexit.register(_pool.shutdown)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_pool._after_fork)


def pool():
    return _pool


# --- the worker process itself --------------------------------------------------------------------

def _limit_resources(memory_mb):
    try:
        import resource  # POSIX only, in the worker process

        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ImportError, ValueError, OSError):
        pass


def serve(memory_mb, warmup=True):
    """Main loop of a worker process: one JSON request per line in, one verdict per line out.

    ``warmup`` runs a few typical checks first, so SymPy's caches and lazy imports are ready
    before the first real check (which then takes milliseconds).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    protocol_out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)  # anything a library prints goes to stderr, never into the protocol
    _limit_resources(memory_mb)
    from .engine import (  # after the limits: what the engine loads counts against them
        SOFT_SHARE,
        configure_process,
        judge,
    )

    configure_process()
    for pred, gold in WARMUP if warmup else []:
        judge(pred, gold, "default", 5.0)
    protocol_out.write(b"ready\n")
    parent = os.getppid()
    fd = sys.stdin.fileno()
    buffer = b""
    while True:
        readable, _, _ = select.select([fd], [], [], 1.0)
        if os.getppid() != parent:
            return  # the parent is gone
        if not readable:
            continue
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return
        buffer += chunk
        while b"\n" in buffer:
            line, _, buffer = buffer.partition(b"\n")
            request = json.loads(line)
            try:
                verdict = judge(request["pred"], request["gold"], request.get("mode", "default"), float(request["timeout"]),
                                domain=request.get("domain") or "")
            except MemoryError:
                verdict = {"equivalent": None, "method": "memory", "explanation": "the check ran out of memory",
                           "explanation_data": {"t": "the check ran out of memory", "p": {}}}
            reply = json.dumps({"id": request["id"], "verdict": verdict}).encode("utf-8") + b"\n"
            _write_all(protocol_out, reply)
            if request.get("second"):
                # Only after our verdict is out: Math-Verify's failure cannot touch it.
                from .second_opinion import verdict as second_verdict

                try:
                    opinion = second_verdict(request["pred"], request["gold"], float(request["second"]) * SOFT_SHARE)
                except MemoryError:
                    opinion = {"checker": "Math-Verify", "equivalent": None, "explanation": "Math-Verify ran out of memory",
                               "explanation_data": {"t": "Math-Verify ran out of memory", "p": {}}}
                reply = json.dumps({"id": request["id"], "second_opinion": opinion}, default=str).encode("utf-8") + b"\n"
                _write_all(protocol_out, reply)


def _write_all(stream, data):
    view = memoryview(data)
    while view:
        written = stream.write(view)
        view = view[written or 0 :]


if __name__ == "__main__":
    serve(int(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_MEMORY_MB, warmup=sys.argv[2:3] != ["cold"])
