"""A second opinion from Math-Verify (HuggingFace's checker), for comparison only.

Runs inside the worker process, after our own verdict has been sent, under its own time budget.
Math-Verify parses with its ANTLR LaTeX grammar and, for plain expressions, with SymPy's
``parse_expr``, which evaluates Python: that is why it only ever runs in the capped, killable
worker process and never in the web or Celery process. Its verdict never changes ours; a
failure, an exception or a timeout is simply its "undecided".
"""
import logging
import time

from . import budget

NAME = "Math-Verify"
_loaded = {}


def load():
    """Import Math-Verify and warm its parser up (about a second, once per worker)."""
    if "verify" not in _loaded:
        logging.getLogger("math_verify").setLevel(logging.ERROR)  # it warns about our own timeouts
        from math_verify import parse, verify  # lazy: an optional second opinion, loaded when asked for

        parse("$1$", parsing_timeout=None)
        _loaded.update(parse=parse, verify=verify)
    return _loaded["parse"], _loaded["verify"]


def verdict(pred, gold, timeout):
    """Math-Verify's verdict on ``pred`` against ``gold`` as a plain dict.

    ``equivalent`` is True/False as Math-Verify says, or None when it could not read an answer,
    raised, or ran out of ``timeout`` seconds.
    """
    started = time.monotonic()
    result = {"checker": NAME, "equivalent": None, "explanation": "", "pred_parsed": "", "gold_parsed": "", "elapsed_ms": 0.0}
    try:
        parse, verify = load()
    except ImportError:
        result["explanation"] = f"{NAME} is not installed"
        return result
    started = time.monotonic()
    try:
        with budget.time_budget(timeout):
            gold_parsed = _parse(parse, gold)
            pred_parsed = _parse(parse, pred)
            result["gold_parsed"] = _shown(gold_parsed)
            result["pred_parsed"] = _shown(pred_parsed)
            if not gold_parsed or not pred_parsed:
                which = "the gold answer" if not gold_parsed else "the predicted answer"
                result["explanation"] = f"{NAME} could not read {which}"
            else:
                same = bool(verify(gold_parsed, pred_parsed, timeout_seconds=None))
                result["equivalent"] = same
                result["explanation"] = f"{NAME}: {'equivalent' if same else 'not equivalent'}"
    except budget.BudgetExceeded:
        result.update(equivalent=None, explanation=f"{NAME} did not finish within {timeout:g} s")
    except (MemoryError, RecursionError):
        result.update(equivalent=None, explanation=f"{NAME} ran out of memory or recursion depth")
    except Exception as exc:  # noqa: BLE001 - the peer's failure is its undecided, never ours
        result.update(equivalent=None, explanation=f"{NAME} failed: {type(exc).__name__}")
    result["elapsed_ms"] = round((time.monotonic() - started) * 1000, 3)
    return result


def _parse(parse, text):
    """As its documentation shows: answers without math delimiters are wrapped in ``$...$``."""
    wrapped = text if "$" in text or "\\boxed" in text else f"${text}$"
    found = parse(wrapped, parsing_timeout=None)
    return found if found else parse(text, parsing_timeout=None)


def _shown(parsed):
    if not parsed:
        return ""
    try:
        return str(parsed[0])[:200]
    except Exception:  # noqa: BLE001 - printing a SymPy object can fail; it is only for display
        return ""


def agreement(ours, theirs):
    """"agree", "disagree" (both decided, different), "ours-only" / "theirs-only" (one undecided) or "neither"."""
    if theirs is None:
        return ""
    a, b = ours, theirs.get("equivalent")
    if a is None and b is None:
        return "neither"
    if a is None:
        return "theirs-only"
    if b is None:
        return "ours-only"
    return "agree" if a == b else "disagree"
