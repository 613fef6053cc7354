"""Send checks to the worker pool: validation, batching across workers, kill on overrun."""
import threading
import time
from dataclasses import replace

from .constants import MAX_SOLUTION_CHARS, MAX_TIMEOUT, MODES
from .messages import M
from .verdict import Verdict
from .worker import WorkerError, pool


def run_checks(pairs, *, mode="default", timeout=2.0, workers=None, second_opinion=False, domain=""):
    """Verdicts for ``pairs`` in order (see :func:`equivalence.check_many`)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    try:
        timeout = float(timeout)
    except (TypeError, ValueError):
        raise ValueError("timeout must be a number of seconds") from None
    if not 0 < timeout <= MAX_TIMEOUT:
        raise ValueError(f"timeout must be between 0 and {MAX_TIMEOUT:g} seconds")
    if domain is not None and not isinstance(domain, str):
        raise TypeError("domain must be a string such as 'n \\ge 2, n \\in \\mathbb{N}^*'")
    pairs = list(pairs)
    for index, pair in enumerate(pairs):
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
            raise TypeError(f"pair {index} is not a (pred, gold) pair")
        if not isinstance(pair[0], str) or not isinstance(pair[1], str):
            raise TypeError(f"pair {index}: pred and gold must be strings")
    if domain:
        pairs = [(pred, gold, domain) for pred, gold in pairs]
    results = [None] * len(pairs)
    todo = []
    for index, pair in enumerate(pairs):
        verdict = _precheck(pair[0], pair[1], mode, second_opinion)
        if verdict is None:
            todo.append(index)
        else:
            results[index] = verdict
    if todo:
        workers = workers or pool().size
        workers = max(1, min(workers, pool().size, len(todo)))
        chunks = [todo[k::workers] for k in range(workers)]
        if workers == 1:
            _run_chunk(chunks[0], pairs, results, mode, timeout, second_opinion)
        else:
            threads = [threading.Thread(target=_run_chunk, args=(chunk, pairs, results, mode, timeout, second_opinion))
                       for chunk in chunks]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
    return results


def _precheck(pred, gold, mode, second_opinion):
    """Verdicts that need no worker: over-long input."""
    for name, text in (("pred", pred), ("gold", gold)):
        if len(text) > MAX_SOLUTION_CHARS:
            verdict = Verdict.undecided("too-long", M('{name} is longer than {MAX_SOLUTION_CHARS} characters', name=name, MAX_SOLUTION_CHARS=MAX_SOLUTION_CHARS), mode)
            if second_opinion:
                verdict = replace(verdict, second_opinion={"checker": "Math-Verify", "equivalent": None,
                                                           "explanation": "not asked: the answer is too long",
                                                           "explanation_data": {"t": "not asked: the answer is too long", "p": {}}})
            return verdict
    return None


def _run_chunk(indexes, pairs, results, mode, timeout, second_opinion=False):
    try:
        with pool().worker() as holder:
            for index in indexes:
                results[index] = _check_one(holder, pairs[index], mode, timeout, second_opinion)
    except WorkerError as exc:
        for index in indexes:
            if results[index] is None:
                results[index] = Verdict.undecided("worker-error", str(exc), mode)


def _check_one(holder, pair, mode, timeout, second_opinion=False):
    pred, gold = pair[0], pair[1]
    domain = pair[2] if len(pair) > 2 else ""
    if holder[0] is None:
        pool().replace(holder)
        if holder[0] is None:
            return Verdict.undecided("worker-error", M('the equivalence worker could not be started'), mode)
    worker = holder[0]
    worker.wait_ready()
    started = time.monotonic()
    reply = worker.check(pred, gold, mode, timeout, second_opinion, domain)
    elapsed_ms = round((time.monotonic() - started) * 1000, 3)
    if reply is not None and not worker.alive:
        pool().replace(holder)  # stopped while Math-Verify overran; our verdict is in reply
    if reply is None:
        died = elapsed_ms < timeout * 1000
        pool().replace(holder)
        if died:
            return Verdict.undecided("crashed", M('the check stopped the worker (memory limit or crash)'), mode, elapsed_ms)
        return Verdict.undecided("timeout", M('stopped after {timeout} s (the worker was killed)', timeout=format(timeout, 'g')), mode, elapsed_ms)
    reply = dict(reply)
    if not second_opinion:
        reply["elapsed_ms"] = elapsed_ms  # with a second opinion the round trip includes Math-Verify's time
    return Verdict.from_dict(reply, mode)
