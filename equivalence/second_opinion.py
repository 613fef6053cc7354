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
from .messages import M, as_data

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
        return _said(result, M("Math-Verify is not installed"))
    started = time.monotonic()
    try:
        with budget.time_budget(timeout):
            gold_parsed = _parse(parse, gold)
            pred_parsed = _parse(parse, pred)
            result["gold_parsed"] = _shown(gold_parsed)
            result["pred_parsed"] = _shown(pred_parsed)
            if not gold_parsed or not pred_parsed:
                _said(result, M("Math-Verify could not read the gold answer") if not gold_parsed
                      else M("Math-Verify could not read the predicted answer"))
            else:
                same = bool(verify(gold_parsed, pred_parsed, timeout_seconds=None))
                result["equivalent"] = same
                _said(result, M("Math-Verify: equivalent") if same else M("Math-Verify: not equivalent"))
    except budget.BudgetExceeded:
        _said(result, M("Math-Verify did not finish within {timeout} s", timeout=format(timeout, "g")), undecided=True)
    except (MemoryError, RecursionError):
        _said(result, M("Math-Verify ran out of memory or recursion depth"), undecided=True)
    except Exception as exc:  # noqa: BLE001 - the peer's failure is its undecided, never ours
        _said(result, M("Math-Verify failed: {error}", error=type(exc).__name__), undecided=True)
    result["elapsed_ms"] = round((time.monotonic() - started) * 1000, 3)
    return result


def _said(result, message, undecided=False):
    """The explanation as English text and as a message the app translates."""
    result.update(explanation=str(message), explanation_data=as_data(message))
    if undecided:
        result["equivalent"] = None
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
