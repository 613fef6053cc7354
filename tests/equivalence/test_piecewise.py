"""Piecewise answers: properties over random breakpoints, and the forms of issue 26.

Equal when the branches agree on every piece and at every breakpoint; a change on one piece,
or at one breakpoint only, is a difference (and the explanation names it).
"""
import random
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from equivalence.engine import configure_process, judge

configure_process()


def check(pred, gold, mode="default"):
    return judge(pred, gold, mode, 5.0)


def _number(value):
    value = Fraction(value)
    if value.denominator == 1:
        return f"({value.numerator})"
    sign = "-" if value < 0 else ""
    return f"({sign}\\frac{{{abs(value.numerator)}}}{{{value.denominator}}})"


def _poly(coefficients, rewritten=False):
    c0, c1, c2 = coefficients
    if rewritten:  # the same polynomial written another way
        return f"x \\cdot (x \\cdot {_number(c2)} + {_number(c1)}) + {_number(c0)}"
    return f"{_number(c0)} + {_number(c1)} x + {_number(c2)} x^2"


def _value(coefficients, x):
    c0, c1, c2 = coefficients
    return c0 + c1 * x + c2 * x * x


def _conditions(points, left_owns):
    """The condition of each piece; breakpoint i belongs to the piece on its left when left_owns[i]."""
    conditions = []
    for index in range(len(points) + 1):
        lower = upper = None
        if index > 0:
            lower = (_number(points[index - 1]), "<" if left_owns[index - 1] else "\\le")  # b op x
        if index < len(points):
            upper = (_number(points[index]), "\\le" if left_owns[index] else "<")  # x op b
        if lower and upper:
            conditions.append(f"{lower[0]} {lower[1]} x {upper[1]} {upper[0]}")
        elif upper:
            conditions.append(f"x {upper[1]} {upper[0]}")
        else:
            flipped = ">" if lower[1] == "<" else "\\ge"
            conditions.append(f"x {flipped} {lower[0]}")
    return conditions


def _cases(points, pieces, left_owns, order=None, rewritten=False, extra=()):
    rows = [(_poly(piece, rewritten), condition) for piece, condition in zip(pieces, _conditions(points, left_owns))]
    rows += list(extra)
    if order is not None:
        rows = [rows[i] for i in order]
    return "f(x) = \\begin{cases} " + " \\\\ ".join(f"{value}, & {condition}" for value, condition in rows) + " \\end{cases}"


breakpoints = st.lists(st.builds(Fraction, st.integers(-12, 12), st.integers(1, 3)), min_size=1, max_size=3, unique=True).map(sorted)
coefficients = st.tuples(st.integers(-4, 4), st.integers(-4, 4), st.integers(-2, 2))


@st.composite
def piecewise_functions(draw):
    points = draw(breakpoints)
    pieces = [draw(coefficients) for _ in range(len(points) + 1)]
    left_owns = [draw(st.booleans()) for _ in points]
    return points, pieces, left_owns


@settings(max_examples=25, deadline=None)
@given(function=piecewise_functions(), seed=st.integers(0, 10**6))
def test_the_same_branches_in_any_order_and_form_are_equivalent(function, seed):
    points, pieces, left_owns = function
    order = list(range(len(pieces)))
    random.Random(seed).shuffle(order)
    first = _cases(points, pieces, left_owns)
    second = _cases(points, pieces, left_owns, order=order, rewritten=True)
    verdict = check(first, second)
    assert verdict["equivalent"] is True, (first, second, verdict["explanation"])
    assert verdict["decisive"].startswith("branches")


@settings(max_examples=25, deadline=None)
@given(function=piecewise_functions(), which=st.integers(0, 3), change=st.integers(1, 3))
def test_a_change_on_one_piece_is_a_difference(function, which, change):
    points, pieces, left_owns = function
    which %= len(pieces)
    changed = list(pieces)
    c0, c1, c2 = changed[which]
    changed[which] = (c0 + change, c1, c2)  # differs everywhere on that piece
    first, second = _cases(points, pieces, left_owns), _cases(points, changed, left_owns)
    verdict = check(first, second)
    assert verdict["equivalent"] is False, (first, second, verdict["explanation"])
    assert verdict["decisive"].startswith(("branch", "breakpoint")), verdict


@settings(max_examples=25, deadline=None)
@given(function=piecewise_functions(), which=st.integers(0, 2))
def test_moving_a_breakpoint_to_the_other_piece(function, which):
    """Equal exactly when the two pieces meet at that breakpoint."""
    points, pieces, left_owns = function
    which %= len(points)
    moved = list(left_owns)
    moved[which] = not moved[which]
    first, second = _cases(points, pieces, left_owns), _cases(points, pieces, moved)
    point = points[which]
    meet = _value(pieces[which], point) == _value(pieces[which + 1], point)
    verdict = check(first, second)
    assert verdict["equivalent"] is meet, (first, second, verdict["explanation"])
    if not meet:
        assert verdict["decisive"] == f"breakpoint x = {_shown(point)}", verdict


@settings(max_examples=25, deadline=None)
@given(function=piecewise_functions(), which=st.integers(0, 2), change=st.integers(-3, 3))
def test_a_different_value_at_one_breakpoint_only(function, which, change):
    """A row "v, & x = b" for one breakpoint (the pieces around it open there)."""
    points, pieces, _ = function
    which %= len(points)
    point = points[which]
    # The breakpoint belongs to neither piece; the extra row gives its value.
    left_owns = [True] * len(points)
    base = _cases(points, pieces, left_owns)
    opened = _conditions(points, left_owns)
    opened[which] = opened[which].replace("\\le", "<")
    rows = [(_poly(piece), condition) for piece, condition in zip(pieces, opened)]
    value = _value(pieces[which], point) + change
    rows.append((_number(value), f"x = {_number(point)}"))
    other = "f(x) = \\begin{cases} " + " \\\\ ".join(f"{v}, & {c}" for v, c in rows) + " \\end{cases}"
    verdict = check(base, other)
    assert verdict["equivalent"] is (change == 0), (base, other, verdict["explanation"])
    if change:
        assert verdict["decisive"] == f"breakpoint x = {_shown(point)}", verdict


def _shown(value):
    import sympy as sp

    from equivalence.compare import _number_text

    return _number_text(sp.Rational(value.numerator, value.denominator))


@pytest.mark.parametrize("pred, gold, equivalent, decisive", [
    (r"\begin{cases} x, & x \ge 0 \\ -x, & x < 0 \end{cases}", "|x|", True, "branches x < 0, x = 0, x > 0"),
    (r"\begin{cases} x, & x > 0 \\ -x, & x < 0 \end{cases}", "|x|", False, "breakpoint x = 0"),
    ("a_n = 3 (n = 1), 2^n (n ≥ 2)", "a_n = 2^n", False, "breakpoint n = 1"),
    (r"a_n = \begin{cases}3, & n=1\\ 2^{n}, & n\geq 2\end{cases}", r"a_n = \begin{cases}3, & n=1\\ 2^{n-1}, & n\geq 2\end{cases}", False, "breakpoint n = 2"),
    ("当 a ≤ 1 时，x > 1；当 a > 1 时，x > a", "当 a ≤ 1 时，x > a；当 a > 1 时，x > 1", False, "branch a < 1"),
    (r"当 a < 0 时，无解；当 a ≥ 0 时，x = \sqrt{a}", r"当 a ≤ 0 时，无解；当 a > 0 时，x = \sqrt{a}", False, "breakpoint a = 0"),
    (r"\begin{cases} 1, & x \ge 0 \\ 0, & x < 0 \end{cases}", r"\begin{cases} 0, & x < 0 \\ 1, & \text{otherwise} \end{cases}", True, "branches x < 0, x = 0, x > 0"),
])
def test_issue_forms_name_the_branch_or_breakpoint(pred, gold, equivalent, decisive):
    verdict = check(pred, gold)
    assert verdict["equivalent"] is equivalent, verdict["explanation"]
    assert verdict["decisive"] == decisive
    assert verdict["method"] == "piecewise"


def test_a_condition_in_another_unknown_is_undecided():
    verdict = check(r"\begin{cases} x, & x \ge 0 \\ -x, & y < 0 \end{cases}", "|x|")
    assert verdict["equivalent"] is None


# The piecewise answers of the case sets, written again by hand as Python functions (None where
# an answer gives no value): the labels of those pairs are checked numerically against them,
# independently of the engine. Case analyses in a parameter ("当 a ≤ 1 时 ...") give sets and are
# checked by hand only.
def _cases_of(*rows):
    def value(t):
        for condition, result in rows:
            if condition(t):
                return result(t)
        return None
    return value


BY_HAND = {
    r"\begin{cases} x, & x \ge 0 \\ -x, & x < 0 \end{cases}": _cases_of((lambda x: x >= 0, lambda x: x), (lambda x: x < 0, lambda x: -x)),
    "|x|": abs,
    r"\begin{cases} x, & x > 0 \\ -x, & x < 0 \end{cases}": _cases_of((lambda x: x > 0, lambda x: x), (lambda x: x < 0, lambda x: -x)),
    "a_n = 3 (n = 1), 2^n (n ≥ 2)": _cases_of((lambda n: n == 1, lambda n: 3), (lambda n: n >= 2, lambda n: 2**n)),
    r"a_n=\begin{cases}3, & n=1\\ 2^{n}, & n\geq 2\end{cases}": _cases_of((lambda n: n == 1, lambda n: 3), (lambda n: n >= 2, lambda n: 2**n)),
    "a_n = 2^n": lambda n: 2**n,
    "a_n = 2^n (n ≥ 2), 3 (n = 1)": _cases_of((lambda n: n >= 2, lambda n: 2**n), (lambda n: n == 1, lambda n: 3)),
    r"a_n = \begin{cases}3, & n=1\\ 2^{n}, & n\geq 2\end{cases}": _cases_of((lambda n: n == 1, lambda n: 3), (lambda n: n >= 2, lambda n: 2**n)),
    r"a_n = \begin{cases}3, & n=1\\ 2^{n-1}, & n\geq 2\end{cases}": _cases_of((lambda n: n == 1, lambda n: 3), (lambda n: n >= 2, lambda n: 2 ** (n - 1))),
    r"f(x)=\begin{cases} x^2, & x \le 1 \\ 2x-1, & x > 1 \end{cases}": _cases_of((lambda x: x <= 1, lambda x: x * x), (lambda x: x > 1, lambda x: 2 * x - 1)),
    r"f(x)=\begin{cases} 2x-1, & x > 1 \\ x^2, & x \le 1 \end{cases}": _cases_of((lambda x: x > 1, lambda x: 2 * x - 1), (lambda x: x <= 1, lambda x: x * x)),
    r"f(x)=\begin{cases} x^2, & x < 1 \\ 2x, & x \ge 1 \end{cases}": _cases_of((lambda x: x < 1, lambda x: x * x), (lambda x: x >= 1, lambda x: 2 * x)),
    r"f(x)=\begin{cases} x^2, & x < 1 \\ 2x-1, & x \ge 1 \end{cases}": _cases_of((lambda x: x < 1, lambda x: x * x), (lambda x: x >= 1, lambda x: 2 * x - 1)),
    r"\begin{cases} x+1, & x<0 \\ 1, & x = 0 \\ x^2+1, & x>0\end{cases}": _cases_of((lambda x: x < 0, lambda x: x + 1), (lambda x: x == 0, lambda x: 1), (lambda x: x > 0, lambda x: x * x + 1)),
    r"\begin{cases} x+1, & x\le 0 \\ x^2, & x>0\end{cases}": _cases_of((lambda x: x <= 0, lambda x: x + 1), (lambda x: x > 0, lambda x: x * x)),
    r"\begin{cases} 1, & x \ge 0 \\ 0, & x < 0 \end{cases}": _cases_of((lambda x: x >= 0, lambda x: 1), (lambda x: x < 0, lambda x: 0)),
    r"\begin{cases} 0, & x < 0 \\ 1, & \text{otherwise} \end{cases}": _cases_of((lambda x: x < 0, lambda x: 0), (lambda x: True, lambda x: 1)),
    r"y=\begin{cases} -2x, & x<-1\\ 2, & -1\le x\le 1\\ 2x, & x>1\end{cases}": _cases_of((lambda x: x < -1, lambda x: -2 * x), (lambda x: -1 <= x <= 1, lambda x: 2), (lambda x: x > 1, lambda x: 2 * x)),
    "y = |x-1| + |x+1|": lambda x: abs(x - 1) + abs(x + 1),
    r"y=\begin{cases} -2x, & x<-1\\ 2, & -1\le x< 1\\ 2x+1, & x\ge1\end{cases}": _cases_of((lambda x: x < -1, lambda x: -2 * x), (lambda x: -1 <= x < 1, lambda x: 2), (lambda x: x >= 1, lambda x: 2 * x + 1)),
    r"\begin{cases} x^2 - 1, & x \ne 0 \\ -1, & x = 0 \end{cases}": _cases_of((lambda x: x != 0, lambda x: x * x - 1), (lambda x: x == 0, lambda x: -1)),
    "x^2-1": lambda x: x * x - 1,
    r"\begin{cases} x^2 - 1, & x \ne 0 \\ 0, & x = 0 \end{cases}": _cases_of((lambda x: x != 0, lambda x: x * x - 1), (lambda x: x == 0, lambda x: 0)),
    r"\begin{cases} 1, & x > 0 \\ 0, & x \le 0 \end{cases}": _cases_of((lambda x: x > 0, lambda x: 1), (lambda x: x <= 0, lambda x: 0)),
    "f(x) = x^2": lambda x: x * x,
    r"\begin{cases} 2x, & x \ge 1 \\ x+1, & x < 1 \end{cases}": _cases_of((lambda x: x >= 1, lambda x: 2 * x), (lambda x: x < 1, lambda x: x + 1)),
    r"\begin{cases} x+1, & x<1\\ 2x, & x\geq 1\end{cases}": _cases_of((lambda x: x < 1, lambda x: x + 1), (lambda x: x >= 1, lambda x: 2 * x)),
    r"\begin{cases} 2x, & x > 1 \\ x+2, & x \le 1 \end{cases}": _cases_of((lambda x: x > 1, lambda x: 2 * x), (lambda x: x <= 1, lambda x: x + 2)),
    "a_n = 5 (n = 1), 3n+1 (n ≥ 2)": _cases_of((lambda n: n == 1, lambda n: 5), (lambda n: n >= 2, lambda n: 3 * n + 1)),
    r"a_n = \begin{cases} 5, & n = 1 \\ 3n+1, & n \ge 2\end{cases}": _cases_of((lambda n: n == 1, lambda n: 5), (lambda n: n >= 2, lambda n: 3 * n + 1)),
    "a_n = 3n+1": lambda n: 3 * n + 1,
    r"\begin{cases} -x, & x < 0 \\ x, & x \ge 0\end{cases}": _cases_of((lambda x: x < 0, lambda x: -x), (lambda x: x >= 0, lambda x: x)),
    r"\sqrt{x^2}": abs,
}


def test_piecewise_case_labels_agree_with_a_numeric_check():
    from .cases import CASES_PATH, load_cases

    cases = [case for path in (CASES_PATH, CASES_PATH.with_name("heldout.jsonl")) for case in load_cases(path)
             if case["category"] == "piecewise" and not case["pred"].startswith("当")]
    assert len(cases) >= 40
    grid = [Fraction(k, 4) for k in range(-24, 25)]
    for case in cases:
        first, second = BY_HAND[case["pred"]], BY_HAND[case["gold"]]
        points = range(1, 40) if "a_n" in case["pred"] + case["gold"] else grid
        same = all(first(t) == second(t) for t in points)
        assert same is case["label"], case
