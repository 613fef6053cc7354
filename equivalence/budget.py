"""Soft time budgets inside the checking process.

The hard limit is the parent killing the worker process (see ``worker.py``); these budgets let
the worker give up on one slow step (say ``simplify``) and try a cheaper one, or answer
"undecided: out of time" before it gets killed. They use ``SIGALRM`` and therefore only act in
the main thread of the process; elsewhere they are no-ops and the hard limit remains.
"""
import signal
import threading
import time
from contextlib import contextmanager


class BudgetExceeded(BaseException):
    """Raised inside a step whose budget ran out.

    A ``BaseException`` on purpose: SymPy has ``except Exception`` blocks that would otherwise
    swallow it and carry on computing.
    """

    def __init__(self, token):
        super().__init__("time budget exceeded")
        self.token = token


_deadlines = []  # stack of (deadline, token)


def _can_use_signals():
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


def _on_alarm(signum, frame):
    now = time.monotonic()
    expired = [token for deadline, token in _deadlines if deadline <= now + 1e-4]
    if expired:
        raise BudgetExceeded(expired[0])  # the outermost expired step unwinds first
    _arm()


def _arm():
    if not _deadlines:
        signal.setitimer(signal.ITIMER_REAL, 0)
        return
    nearest = min(deadline for deadline, _ in _deadlines)
    signal.setitimer(signal.ITIMER_REAL, max(nearest - time.monotonic(), 1e-4))


@contextmanager
def time_budget(seconds):
    """Run the block for at most ``seconds``; raises :class:`BudgetExceeded` when it runs over.

    Nested budgets never extend an outer one.
    """
    if seconds is None or not _can_use_signals():
        yield
        return
    token = object()
    deadline = time.monotonic() + max(seconds, 0.0)
    if signal.getsignal(signal.SIGALRM) is not _on_alarm:
        signal.signal(signal.SIGALRM, _on_alarm)
    _deadlines.append((deadline, token))
    _arm()
    try:
        yield
    finally:
        _deadlines.remove((deadline, token))
        _arm()


def attempt(seconds, function, *args, default=None, **kwargs):
    """Return ``function(*args, **kwargs)``, or ``default`` if it fails or runs out of time.

    Only this step's own budget is absorbed; an outer budget that expired propagates.
    """
    token_holder = {}
    try:
        with time_budget(seconds):
            token_holder["token"] = _deadlines[-1][1] if _deadlines else None
            return function(*args, **kwargs)
    except BudgetExceeded as exc:
        if exc.token is not token_holder.get("token"):
            raise
        return default
    except (RecursionError, MemoryError):
        return default
    except Exception:  # noqa: BLE001 - a CAS step that fails simply did not decide
        return default


def remaining(deadline):
    """Seconds left until the absolute monotonic ``deadline`` (never negative)."""
    return max(deadline - time.monotonic(), 0.0)
