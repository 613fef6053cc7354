"""The processes a benchmark starts, stopped whatever way the benchmark ends.

A bench starts servers, Celery workers and child interpreters. Each is started by `spawn` (or
`run`) in a process group of its own, so that stopping it stops what it started in turn (a
Celery worker's pool, a server's threads' helpers); each is also told by the kernel to end when
the bench dies (PR_SET_PDEATHSIG: even a bench killed with SIGKILL leaves none running). `stop`
ends one group (SIGTERM, then SIGKILL after a grace period); `stop_all` ends every group still
running, and runs at exit, on SIGTERM, SIGHUP and on Ctrl-C (SIGINT), which `install` turns into
KeyboardInterrupt/SystemExit so that the benches' own ``finally`` blocks run too.

`bench/smoke.py` (``make bench-smoke``) checks it: after each bench it looks for any process
still carrying the bench's REALMATH_BENCH_TAG in its environment, and fails the bench if one is.
"""
import atexit
import ctypes
import os
import signal
import subprocess
import sys

PR_SET_PDEATHSIG = 1
_children = []
_installed = False


def _die_with_parent():
    """In the child, before exec: its own group, and SIGTERM when the bench (its parent) dies."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):  # not Linux: the exit handlers still stop it
        pass


def spawn(args, **kwargs):
    """subprocess.Popen in a process group of its own, stopped with the bench."""
    install()
    kwargs.setdefault("start_new_session", True)
    kwargs.setdefault("preexec_fn", _die_with_parent)
    process = subprocess.Popen(args, **kwargs)
    _children.append(process)
    return process


def stop(process, grace=10.0):
    """End a spawned process and its group: SIGTERM, then SIGKILL after `grace` seconds."""
    if process.poll() is None:
        _signal_group(process, signal.SIGTERM)
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            pass
    _signal_group(process, signal.SIGKILL)  # what its group still holds (a worker's pool children)
    try:
        process.wait(5)
    except subprocess.TimeoutExpired:
        pass
    if process in _children:
        _children.remove(process)


def _signal_group(process, sig):
    try:
        os.killpg(process.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def run(args, *, timeout=None, check=True, capture_output=False, text=False, **kwargs):
    """subprocess.run through `spawn`: on timeout or interruption its whole group is stopped."""
    if capture_output:
        kwargs["stdout"], kwargs["stderr"] = subprocess.PIPE, subprocess.PIPE
    process = spawn(args, text=text, **kwargs)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop(process, grace=5)
        raise
    finally:
        if process.poll() is None:
            stop(process, grace=5)
        elif process in _children:
            _children.remove(process)
    if check and process.returncode:
        raise subprocess.CalledProcessError(process.returncode, args, stdout, stderr)
    return subprocess.CompletedProcess(args, process.returncode, stdout, stderr)


def stop_all():
    for process in list(_children):
        stop(process, grace=5)


def _on_signal(signum, frame):
    stop_all()
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise SystemExit(128 + signum)


def install():
    """Stop every spawned process at exit and on SIGINT, SIGTERM, SIGHUP (main thread only)."""
    global _installed
    if _installed:
        return
    _installed = True
    atexit.register(stop_all)
    try:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, _on_signal)
    except ValueError:  # not the main thread: atexit still stops them
        pass


def smoke_requested():
    """Whether the bench was asked for its smoke size (``--smoke`` on its command line)."""
    return "--smoke" in sys.argv[1:]
