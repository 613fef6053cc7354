"""Final-answer equivalence: are two math answers the same, by algebra rather than by string?

Public API::

    from equivalence import check_equivalence, check_many, extract_answer, Verdict

    v = check_equivalence(r"\\frac{1}{\\sqrt2}", r"\\frac{\\sqrt2}{2}")   # v.equivalent is True
    results = check_many([("0.5", "1/2"), ("x>2", "[2, oo)")])            # same order
    extract_answer(solution_text)                                         # "\\frac{27}{2}"
    parse_answer("x = 2").value                                           # Relation([x, 2], ["="])
    configure(workers=4, memory_mb=2048)   # the worker pool's settings (defaults below)

Answers are parsed by this package's own parser (no ``eval``, ``sympify`` or ``parse_expr`` on
answer text) and compared with SymPy in a separate worker process that is killed when a check
overruns its time limit. See docs/equivalence.md.
"""
from .constants import MAX_ANSWER_CHARS, MAX_SOLUTION_CHARS, MODES
from .extraction import extract_answer
from .verdict import Verdict

__all__ = [
    "check_equivalence", "check_many", "extract_answer", "Verdict", "MODES", "MAX_ANSWER_CHARS", "MAX_SOLUTION_CHARS",
    "configure", "parse_answer", "ParseError", "Relation", "meaning_words",
]

# The parser imports SymPy (about a second): loaded on first use, not when a web process starts.
_PARSER_NAMES = {"parse_answer", "ParseError", "Relation"}


def __getattr__(name):
    if name in _PARSER_NAMES:
        from . import parser  # lazy: the parser (SymPy) loads only when one of its names is asked for

        return getattr(parser, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def meaning_words():
    """The words that change an answer's meaning, by group (Chinese and English).

    An answer that differs from the other in one of them, where the comparison did not compare
    it, is never called equivalent (see docs/equivalence.md, "Words that change the meaning").
    """
    from .meaning import known_words  # lazy: the package loads its parts when they are used

    return known_words()


def configure(*, workers=None, memory_mb=None, warmup=None, debug=None):
    """Set the worker pool's settings; ``None`` keeps a setting as it is.

    ``workers``: worker processes per calling process (default 2); ``memory_mb``: each worker's
    address-space cap (default 1024); ``warmup``: run typical checks when a worker starts
    (default True); ``debug``: let workers write to this process's stderr (default False). This
    library reads no environment variable and no Django setting: the Django side passes its
    ``settings.EQUIVALENCE_*`` here once at start (grading's app config). Workers already running
    keep their memory cap until they are replaced.
    """
    from .worker import pool  # lazy: the worker pool loads only when configured

    pool().configure(workers=workers, memory_mb=memory_mb, warmup=warmup, debug=debug)


def check_equivalence(pred, gold, *, mode="default", timeout=2.0, second_opinion=False, domain=""):
    """Compare a predicted answer with a gold answer; return a :class:`Verdict`.

    ``mode="strict"`` refuses decimal approximations of values that are not exactly that
    decimal (IneqMath's rule: 1/2 = 0.5 but 2\\pi != 6.28318). ``timeout`` is a hard
    wall-clock limit in seconds for the check; a check that overruns is stopped and comes back
    undecided. ``second_opinion=True`` also asks Math-Verify (in the worker process, after our
    verdict, with the same time limit): its verdict comes as ``Verdict.second_opinion`` and never
    changes ours. ``domain`` states where the unknowns live, as the question does ("n \\ge 2,
    n \\in \\mathbb{N}^*", "x > 0"): point tests stay inside it. Never raises for any pair of strings.
    """
    return check_many([(pred, gold)], mode=mode, timeout=timeout, second_opinion=second_opinion, domain=domain)[0]


def check_many(pairs, *, mode="default", timeout=2.0, workers=None, second_opinion=False, domain=""):
    """Check many ``(pred, gold)`` pairs; return their verdicts in the same order.

    Reuses worker processes (and runs up to ``workers`` of them side by side, default the
    pool size), so thousands of pairs take seconds, not minutes.
    """
    from .runner import run_checks  # lazy: the runner starts worker processes

    return run_checks(pairs, mode=mode, timeout=timeout, workers=workers, second_opinion=second_opinion, domain=domain)
