"""Final-answer equivalence: are two math answers the same, by algebra rather than by string?

Public API::

    from grading.equivalence import check_equivalence, check_many, extract_answer, Verdict

    v = check_equivalence(r"\\frac{1}{\\sqrt2}", r"\\frac{\\sqrt2}{2}")   # v.equivalent is True
    results = check_many([("0.5", "1/2"), ("x>2", "[2, oo)")])            # same order
    extract_answer(solution_text)                                         # "\\frac{27}{2}"

Answers are parsed by this package's own parser (no ``eval``, ``sympify`` or ``parse_expr`` on
answer text) and compared with SymPy in a separate worker process that is killed when a check
overruns its time limit. See docs/equivalence.md.
"""
from .constants import MAX_ANSWER_CHARS, MODES
from .extraction import extract_answer
from .verdict import Verdict

__all__ = ["check_equivalence", "check_many", "extract_answer", "Verdict", "MODES", "MAX_ANSWER_CHARS"]



def check_equivalence(pred, gold, *, mode="default", timeout=2.0, second_opinion=False):
    """Compare a predicted answer with a gold answer; return a :class:`Verdict`.

    ``mode="strict"`` refuses decimal approximations of values that are not exactly that
    decimal (IneqMath's rule: 1/2 = 0.5 but 2\\pi != 6.28318). ``timeout`` is a hard
    wall-clock limit in seconds for the check; a check that overruns is stopped and comes back
    undecided. ``second_opinion=True`` also asks Math-Verify (in the worker process, after our
    verdict, with the same time limit): its verdict comes as ``Verdict.second_opinion`` and never
    changes ours. Never raises for any pair of strings.
    """
    return check_many([(pred, gold)], mode=mode, timeout=timeout, second_opinion=second_opinion)[0]


def check_many(pairs, *, mode="default", timeout=2.0, workers=None, second_opinion=False):
    """Check many ``(pred, gold)`` pairs; return their verdicts in the same order.

    Reuses worker processes (and runs up to ``workers`` of them side by side, default the
    pool size), so thousands of pairs take seconds, not minutes.
    """
    from .runner import run_checks

    return run_checks(pairs, mode=mode, timeout=timeout, workers=workers, second_opinion=second_opinion)
