"""Piecewise answers: equal when every branch and every breakpoint agrees.

A piecewise answer is a list of (condition, value) branches over one unknown: ``f(x)`` given by
``\\begin{cases} x^2, & x \\le 1 \\\\ 2x - 1, & x > 1 \\end{cases}``, a sequence
``a_n = 3 (n = 1), 2^n (n \\ge 2)``, or a case analysis "当 a ≤ 1 时 ...; 当 a > 1 时 ..." whose
values are themselves answers (sets, equations, "无解"). Any other answer is one branch that
holds everywhere (``|x|`` against its two branches).

How two are compared: the conditions of both answers are turned into sets of numbers (the
unknown n, k or m of a sequence runs over the positive integers); their end points cut the line
into cells, each a single breakpoint or an open interval between two. On every cell the branch
that applies on each side must agree: at a breakpoint both values are computed there exactly;
on an interval the two branches are compared as answers and, if that does not settle it, at
exact points inside the cell (a difference there is a witness; agreement at six points of the
cell is accepted for values, as for expressions). A cell where only one answer has a value is a
difference. The explanation names the branch or breakpoint that decided.
"""
import copy
from dataclasses import dataclass

import sympy as sp

from .answers import Answer, _free_symbols
from .messages import M

MAX_CELLS = 60
INTEGER_NAMES = ("n", "k", "m")


@dataclass
class PiecewiseValue:
    head: str  # "f(x)", "a_n", "y", or ""
    branches: list  # [(condition Answer or None for "otherwise", value Answer)]


def compare(comparator, a, b):
    from .compare import no, unknown, yes  # cycle: compare imports this module

    first, second = _pieces(a), _pieces(b)
    if first[0] and second[0] and first[0].replace(" ", "") != second[0].replace(" ", ""):
        return unknown("piecewise", M('the answers give different things ({first_0} vs {second_0})', first_0=first[0], second_0=second[0]))
    variables = set()
    for _, branches in (first, second):
        for condition, _ in branches:
            if condition is not None:
                variables |= _condition_unknowns(condition)
    if len(variables) != 1:
        return unknown("piecewise", M('the conditions are not about one unknown'))
    variable = variables.pop()
    integer = variable.name in INTEGER_NAMES
    sides = []
    for _, branches in (first, second):
        sets, why = _branch_sets(comparator, branches, integer)
        if sets is None:
            return unknown("piecewise", why)
        sides.append(sets)
    points = _breakpoints(sides)
    if points is None:
        return unknown("piecewise", M('a condition has an end point that is not a number'))
    cells = _cells(points, integer, sides)
    if cells is None:
        return unknown("piecewise", M('too many breakpoints'))
    undecided = None
    cache = {}
    for cell in cells:
        where = _cell_text(cell, variable)
        applying = [_branches_at(sets, cell) for sets in sides]
        for found in applying:
            if len(found) > 1 and not all(_same_branch(comparator, found[0][1], other[1], cache) for other in found[1:]):
                return unknown("piecewise", M("two conditions of one answer hold at {where} with different values" if cell[0] == "point" else "two conditions of one answer hold on {where} with different values", where=where))
        picked = [found[0] if found else None for found in applying]
        if picked[0] is None and picked[1] is None:
            continue
        if picked[0] is None or picked[1] is None:
            which = "second" if picked[0] is None else "first"
            return _decided(no("piecewise", M(_ONLY_ONE[(cell[0] == "point", which)], where=where)), where, cell)
        (i, left), (j, right) = picked
        outcome = _compare_on_cell(comparator, cell, variable, left, right, cache, (i, j), integer)
        if outcome.equivalent is False:
            text = outcome.explanation if cell[0] == "point" else M("on {where}, {explanation}", where=where, explanation=outcome.explanation)
            return _decided(no("piecewise", text), where, cell)
        if outcome.equivalent is None:
            undecided = undecided or M("{where}: {explanation}", where=where, explanation=outcome.explanation)
    if undecided:
        return unknown("piecewise", M('undecided on {undecided}', undecided=undecided))
    shown = ", ".join(_cell_text(cell, variable) for cell in cells if cell[0] == "interval" or not integer)[:200]
    outcome = yes("piecewise", M('every branch and breakpoint agrees ({shown})', shown=shown))
    outcome.decisive = M('branches {shown}', shown=shown)
    return outcome


_ONLY_ONE = {
    (True, "first"): "at {where} only the first answer has a value", (True, "second"): "at {where} only the second answer has a value",
    (False, "first"): "on {where} only the first answer has a value", (False, "second"): "on {where} only the second answer has a value",
}


def _decided(outcome, where, cell):
    outcome.decisive = M("breakpoint {where}", where=where) if cell[0] == "point" else M("branch {where}", where=where)
    return outcome


def _pieces(answer):
    if answer.kind == "piecewise":
        return answer.value.head, answer.value.branches
    head = ""
    if answer.kind == "equation" and answer.head is not None and answer.rhs is not None:
        head, answer = str(answer.head), answer.rhs
    return head, [(None, answer)]


def _condition_unknowns(condition):
    from .compare import _unknowns  # cycle: compare imports this module

    return _unknowns(condition)


def _branch_sets(comparator, branches, integer):
    """[(set of the unknown where the branch holds, value)] with "otherwise" resolved."""
    domain = sp.Interval(1, sp.oo) if integer else sp.S.Reals
    sets, covered = [], sp.S.EmptySet
    for condition, value in branches:
        if condition is None:
            sets.append([None, value])
            continue
        found, why = comparator.as_set(condition)
        if found is None or not isinstance(found, sp.Set) or found.free_symbols:
            return None, M("could not read the condition ({why})", why=why or condition.kind)
        found = sp.Intersection(found, domain)
        sets.append([found, value])
        covered = sp.Union(covered, found)
    rest = sp.Complement(domain, covered)
    for entry in sets:
        if entry[0] is None:
            entry[0] = rest
    return [tuple(entry) for entry in sets], ""


def _breakpoints(sides):
    points = set()
    for sets in sides:
        for found, _ in sets:
            boundary = found.boundary
            if not isinstance(boundary, sp.FiniteSet) and boundary is not sp.S.EmptySet:
                return None
            for point in getattr(boundary, "args", ()):
                if point in (sp.oo, -sp.oo):
                    continue
                if not point.is_number or not point.is_real:
                    return None
                points.add(point)
    return sorted(points, key=lambda value: float(value))


def _cells(points, integer, sides):
    """("point", p) and ("interval", lo, hi) cells in order (integers: each n up to past the last breakpoint)."""
    if len(points) > MAX_CELLS // 2:
        return None
    if integer:
        top = int(sp.ceiling(max(points))) + 2 if points else 3
        if top > MAX_CELLS:
            return None
        return [("point", sp.Integer(n)) for n in range(1, top + 1)] + [("interval", sp.Integer(top), sp.oo)]
    cells = []
    previous = -sp.oo
    for point in points:
        cells.append(("interval", previous, point))
        cells.append(("point", point))
        previous = point
    cells.append(("interval", previous, sp.oo))
    return cells


def _inside(cell):
    """A point inside the cell (exact)."""
    if cell[0] == "point":
        return cell[1]
    _, lo, hi = cell
    if lo == -sp.oo and hi == sp.oo:
        return sp.Integer(0)
    if lo == -sp.oo:
        return hi - 1
    if hi == sp.oo:
        return lo + 1
    return (lo + hi) / 2


def _samples(cell, count, integer):
    _, lo, hi = cell
    if integer:
        return [lo + k for k in (1, 2, 3, 5, 8, 13)][:count]
    fractions = [sp.Rational(1, 2), sp.Rational(1, 3), sp.Rational(3, 4), sp.Rational(1, 7), sp.Rational(5, 6), sp.Rational(2, 5)]
    offsets = [sp.Rational(1, 2), sp.Integer(1), sp.Rational(7, 3), sp.Integer(4), sp.Rational(13, 2), sp.Integer(11)]
    points = []
    for fraction, offset in zip(fractions, offsets):
        if lo == -sp.oo and hi == sp.oo:
            points.append(offset * (1 if len(points) % 2 == 0 else -1))
        elif lo == -sp.oo:
            points.append(hi - offset)
        elif hi == sp.oo:
            points.append(lo + offset)
        else:
            points.append(lo + (hi - lo) * fraction)
    return points[:count]


def _branches_at(sets, cell):
    """[(index, value)] of the branches that hold on the cell (normally one)."""
    point = _inside(cell)
    return [(index, value) for index, (found, value) in enumerate(sets) if found.contains(point) is sp.true]


def _same_branch(comparator, left, right, cache):
    key = ("same", id(left), id(right))
    if key not in cache:
        cache[key] = comparator.compare(left, right)
    return cache[key].equivalent is True


def _compare_on_cell(comparator, cell, variable, left, right, cache, key, integer):
    from .compare import Outcome, unknown, yes  # cycle: compare imports this module

    if cell[0] == "point":
        return _at(comparator, variable, cell[1], left, right)
    if key not in cache:
        cache[key] = comparator.compare(left, right)
    whole = cache[key]
    if whole.equivalent is True:
        return whole
    if whole.equivalent is False and {left.kind, right.kind} & {"labelled", "polar", "text"}:
        return whole  # labels or words that differ do not depend on the unknown
    values = left.kind in ("number", "expression") and right.kind in ("number", "expression")
    checked = 0
    for point in _samples(cell, 6 if values else 3, integer):
        outcome = _at(comparator, variable, point, left, right)
        if outcome.equivalent is False:
            return outcome
        if outcome.equivalent is None:
            return Outcome(None, outcome.method, outcome.explanation)
        checked += 1
    if values and checked >= 6:
        return yes("piecewise", M('equal at {checked} points of the piece', checked=checked))
    return unknown("piecewise", M('the branches agree at the points tried but could not be compared as a whole'))


def _at(comparator, variable, point, left, right):
    from .compare import Outcome, _number_text  # cycle: compare imports this module

    try:
        first, second = substitute(left, {variable: point}), substitute(right, {variable: point})
    except (TypeError, ValueError):
        return Outcome(None, "piecewise", M('a branch could not be evaluated at a point'))
    outcome = comparator.compare(first, second)
    return Outcome(outcome.equivalent, outcome.method, M('at {variable} = {number_text_point}: {outcome_explanation}', variable=variable, number_text_point=_number_text(point), outcome_explanation=outcome.explanation))


def substitute(answer, mapping):
    """``answer`` with the unknowns in ``mapping`` replaced by numbers (ValueError if a kind is not handled)."""
    kind = answer.kind
    new = copy.copy(answer)
    if kind in ("number", "expression"):
        value = answer.value.xreplace(mapping)
        if value.has(sp.zoo, sp.nan):
            raise ValueError("undefined at the point")
        new.value = value
        new.kind = "number" if not _free_symbols(value) else "expression"
        return new
    if kind == "equation":
        if answer.value is not None:
            new.value = tuple(side.xreplace(mapping) for side in answer.value)
        if answer.rhs is not None:
            new.rhs = substitute(answer.rhs, mapping)
        return new
    if kind == "inequality":
        sides, ops = answer.value
        new.value = ([side.xreplace(mapping) for side in sides], list(ops))
        return new
    if kind == "set":
        value = answer.value
        if isinstance(value, tuple) and value[0] == "builder":
            new.value = (value[0], value[1], substitute(value[2], mapping), value[3])
        else:
            new.value = value.xreplace(mapping)
        return new
    if kind in ("list", "set_literal", "tuple", "pair"):
        new.value = [substitute(item, mapping) for item in answer.value]
        return new
    if kind == "compound":
        parts, joiner = answer.value
        new.value = ([substitute(part, mapping) for part in parts], joiner)
        return new
    if kind == "membership":
        member, target = answer.value
        new.value = (member, substitute(target, mapping))
        return new
    if kind in ("text", "polar", "choice", "relation_symbol"):
        return new
    raise ValueError(f"cannot evaluate {kind} at a point")


def _cell_text(cell, variable):
    from .compare import _number_text  # cycle: compare imports this module

    name = str(variable)
    if cell[0] == "point":
        return f"{name} = {_number_text(cell[1])}"
    _, lo, hi = cell
    if lo == -sp.oo and hi == sp.oo:
        return f"all {name}"
    if lo == -sp.oo:
        return f"{name} < {_number_text(hi)}"
    if hi == sp.oo:
        return f"{name} > {_number_text(lo)}"
    return f"{_number_text(lo)} < {name} < {_number_text(hi)}"


def make(head, branches):
    return Answer("piecewise", PiecewiseValue(head, branches))
