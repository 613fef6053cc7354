"""Solution families: answers that stand for one set of numbers, one piece per integer k.

``[k\\pi - \\frac{3\\pi}{8}, k\\pi + \\frac{\\pi}{8}], k \\in \\mathbb{Z}``, ``x = \\frac{\\pi}{4} + k\\pi``,
``x = (-1)^k \\frac{\\pi}{6} + k\\pi``, ``2k\\pi - \\frac{\\pi}{2} \\le 2x + \\frac{\\pi}{4} \\le 2k\\pi + \\frac{\\pi}{2}``.
Two families are equal when they describe the same set, however k is shifted or split.

How it is decided (:func:`compare`):

1. Every member (one interval or point per k) is made affine in k: ``a + Tk`` (``(-1)^k`` and
   other parity-dependent terms are split into even and odd k, twice at most).
2. All periods must be rational multiples of each other; the common period P is the least
   whole multiple of all of them. Each member becomes P/T copies, each reduced exactly to arcs
   of a circle of length 1 (positions measured in periods from o, where the second answer's
   first member starts): ``[-3π/8, π/8] + kπ`` is the arc [0, 1/2].
3. Two finite unions of arcs and points are equal iff they agree at every end point and inside
   every gap between consecutive end points; that is checked exactly. A point in one and not
   the other is the witness of a "not equivalent".
4. Otherwise (periods not commensurable, constant members beside periodic ones, families of
   points in the plane) the members are *sampled*: for k = -6..6 each instance of one side is
   looked up exactly in the other (solving a + Tk' = x for an integer k'). A missing instance
   is a definite "no"; all found both ways is "equivalent at the sampled k" for point families,
   and undecided for intervals.
"""
import math
import re
from dataclasses import dataclass, field

import mpmath
import sympy as sp

from .budget import attempt
from .messages import M
from .numeric import to_mpc

MAX_COPIES = 240  # pieces per side in one common period
MAX_SPLITS = 2  # parity splits: k even/odd, then k mod 4
SAMPLE_K = range(-6, 7)
AGREEMENT = mpmath.mpf(10) ** -40


class NotFamily(ValueError):
    """The answer uses the parameter in a way that is not a solution family."""


@dataclass(frozen=True)
class Member:
    """One interval ``[lo, hi]`` (or one point, lo = hi) for each integer value of ``param``."""

    lo: sp.Expr
    hi: sp.Expr
    lo_open: bool = False
    hi_open: bool = False
    param: object = None  # the Symbol k, or None for a constant member

    @property
    def is_point(self):
        return self.lo == self.hi and not self.lo_open and not self.hi_open


@dataclass(frozen=True)
class TupleMember:
    """A point of the plane (or space) for each k: ``(\\frac{k\\pi}{2} + \\frac{\\pi}{8}, 0)``."""

    coords: tuple
    param: object = None


@dataclass
class Family:
    members: list
    variable: object = None  # x in "x = k\pi"
    params: frozenset = field(default_factory=frozenset)  # names of the integer parameters

    @property
    def shape(self):
        if all(isinstance(m, TupleMember) for m in self.members):
            return "tuple"
        if all(isinstance(m, Member) and m.is_point for m in self.members):
            return "points"
        if all(isinstance(m, Member) for m in self.members):
            return "intervals"
        return "mixed"


# --- from a classified answer -------------------------------------------------------------------

def family_of(answer, names):
    """The :class:`Family` an answer describes with integer parameters ``names``, or None.

    None when no parameter occurs in the answer. :class:`NotFamily` when one does but not in
    a form read here.
    """
    members, variable = _members(answer, names)
    if not any(m.param is not None for m in members):
        return None
    return Family(members, variable, frozenset(names))


def _params_in(expr, names):
    return {s for s in expr.free_symbols if s.name in names}


def _others_in(expr, names):
    return {s for s in expr.free_symbols if s.name not in names and not s.name.startswith("%")}


def _single_param(*exprs, names):
    found = set()
    for expr in exprs:
        found |= _params_in(expr, names)
    if len(found) > 1:
        raise NotFamily("two parameters in one piece")
    return found.pop() if found else None


def constant_family(answer, pairs_as="interval"):
    """Any other answer (``x = \\frac{\\pi}{4}``, ``[0, 1]``, ``\\mathbb{R}``) as a family of constant pieces."""
    if answer.kind == "set" and answer.value == sp.S.Reals:
        return Family([Member(-sp.oo, sp.oo, True, True)])
    members, variable = _members(answer, frozenset(), pairs_as)
    return Family(members, variable)


def _members(answer, names, pairs_as="interval"):
    """(list of members, variable or None)."""
    kind = answer.kind
    if kind in ("number", "expression"):
        value = answer.value
        if _others_in(value, names):
            raise NotFamily("a family of values must not contain other letters")
        return [Member(value, value, param=_single_param(value, names=names))], None
    if kind in ("list", "set_literal", "compound"):
        items = answer.value[0] if kind == "compound" else answer.value
        if kind == "compound" and answer.value[1] != "or":
            raise NotFamily("conditions joined by 'and'")
        members, variables = [], set()
        for item in items:
            found, variable = _members(item, names, pairs_as)
            members += found
            if variable is not None:
                variables.add(variable)
        if len(variables) > 1:
            raise NotFamily("pieces about different unknowns")
        return members, variables.pop() if variables else None
    if kind == "equation" and answer.head is not None and answer.rhs is not None:
        if not isinstance(answer.head, sp.Symbol) or answer.head.name in names:
            raise NotFamily("not an assignment of the unknown")
        members, _ = _members(answer.rhs, names, pairs_as)
        return members, answer.head
    if kind == "pair":
        return [_bracket_member(answer, names, pairs_as)], None
    if kind == "tuple":
        return [_tuple_member(answer.value, names)], None
    if kind == "inequality":
        return _inequality_members(answer, names)
    if kind == "membership":
        variable, target = answer.value
        members, _ = _members(target, names, pairs_as)
        return members, variable
    if kind == "set" and isinstance(answer.value, tuple) and answer.value[0] == "builder":
        _, variable, condition, domain = answer.value
        if domain != sp.S.Reals:
            raise NotFamily("set-builder over another domain")
        members, inner = _members(condition, names, pairs_as)
        if inner is not None and inner != variable:
            raise NotFamily("set-builder condition about another letter")
        return members, variable
    raise NotFamily(f"{answer.kind_name} with an integer parameter")


def _bracket_member(answer, names, pairs_as="interval"):
    """``[a + kT, b + kT]`` is an interval per k; ``(\\frac{k\\pi}{2}, 0)`` a point of the plane.

    Without a parameter (the other answer of a comparison) a pair is read as ``pairs_as`` says.
    """
    left, right = answer.value
    if left.kind not in ("number", "expression") or right.kind not in ("number", "expression"):
        raise NotFamily("interval ends must be values")
    lo, hi = left.value, right.value
    if _others_in(lo, names) or _others_in(hi, names):
        raise NotFamily("interval ends must not contain other letters")
    shape = answer.brackets or "()"
    param = _single_param(lo, hi, names=names)
    if param is None and pairs_as == "interval" or shape not in ("()", "[]"):
        if param is None and (hi - lo).is_negative:
            raise NotFamily("an interval with its ends in the wrong order")
        if param is None:
            return Member(lo, hi, shape[0] in "(]" or lo == -sp.oo, shape[1] in ")[" or hi == sp.oo)
    width = sp.expand(hi - lo)
    if param is not None and param not in width.free_symbols and _params_in(lo, names):
        return Member(lo, hi, shape[0] in "(]", shape[1] in ")[", param)
    if shape in ("()", "[]"):
        return _tuple_member(answer.value, names)
    raise NotFamily("an interval whose length changes with k")


def _tuple_member(items, names):
    if any(item.kind not in ("number", "expression") for item in items):
        raise NotFamily("tuple entries must be values")
    coords = tuple(item.value for item in items)
    if any(_others_in(c, names) for c in coords):
        raise NotFamily("tuple entries must not contain other letters")
    return TupleMember(coords, _single_param(*coords, names=names))


def _inequality_members(answer, names):
    """``a(k) <= c x + d <= b(k)``: an interval for x per k."""
    sides, ops = answer.value
    if len(ops) != 2 or not (set(ops) <= {"<", "<="} or set(ops) <= {">", ">="}):
        raise NotFamily("only a(k) <= x <= b(k) chains describe families")
    low, middle, high = sides
    if ops[0] in (">", ">="):
        low, high = high, low
        ops = list(reversed(ops))
    unknowns = _others_in(middle, names)
    if len(unknowns) != 1 or _params_in(middle, names) or _others_in(low, names) or _others_in(high, names):
        raise NotFamily("the middle of the chain must be the unknown alone")
    variable = unknowns.pop()
    slope = sp.diff(middle, variable)
    offset = sp.expand(middle - slope * variable)
    if not slope.is_number or slope == 0 or variable in offset.free_symbols:
        raise NotFamily("the unknown must appear linearly")
    lo, hi = (low - offset) / slope, (high - offset) / slope
    lo_open, hi_open = ops[0] == "<", ops[1] == "<"
    if slope.is_negative:
        lo, hi, lo_open, hi_open = hi, lo, hi_open, lo_open
    lo, hi = sp.expand(lo), sp.expand(hi)
    return [Member(lo, hi, lo_open, hi_open, _single_param(lo, hi, names=names))], variable


# --- comparison ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Affine:
    """``[a + T j, b + T j]`` for every integer j (T > 0), or a constant piece (T = 0)."""

    a: sp.Expr
    b: sp.Expr
    period: sp.Expr
    lo_open: bool
    hi_open: bool

    @property
    def is_point(self):
        return self.a == self.b and not self.lo_open and not self.hi_open


def compare(first, second, budget):
    """(True/False/None, method, explanation) for two :class:`Family` values."""
    if first.shape == "tuple" or second.shape == "tuple":
        if first.shape != second.shape:
            return False, "family", M('a family of points of the plane vs a family of numbers')
        return _sampled_tuples(first, second, budget)
    if first.shape == "mixed" or second.shape == "mixed":
        return None, "family", M('a family mixing points and tuples')
    try:
        pieces_a = [piece for m in first.members for piece in _affine(m)]
        pieces_b = [piece for m in second.members for piece in _affine(m)]
    except NotFamily as exc:
        return None, "family", M('cannot bring the family to the form a + kT ({exc})', exc=exc)
    canonical = attempt(budget, _canonical_compare, pieces_a, pieces_b)
    if canonical is not None:
        return canonical
    return _sampled(pieces_a, pieces_b, budget, first.shape == second.shape == "points")


def _affine(member):
    """``member`` as affine pieces in a fresh integer j, splitting k by parity where needed."""
    if member.param is None:
        return [Affine(member.lo, member.hi, sp.Integer(0), member.lo_open, member.hi_open)]
    j = sp.Dummy("j", integer=True)
    return _split(member.lo.xreplace({member.param: j}), member.hi.xreplace({member.param: j}), j, member, 0)


def _split(lo, hi, j, member, depth):
    lo_part, hi_part = _linear(lo, j), _linear(hi, j)
    if lo_part is not None and hi_part is not None and lo_part[1] == hi_part[1]:
        (a, period), (b, _) = lo_part, hi_part
        if not period.is_number or not period.is_real:
            raise NotFamily("the period is not a real number")
        if period.is_negative:
            period = -period  # {a - |T| j} is {a + |T| j}
        if period == 0:
            return [Affine(a, b, sp.Integer(0), member.lo_open, member.hi_open)]
        if (b - a).is_negative:
            raise NotFamily("an interval with its ends in the wrong order")
        return [Affine(a, b, period, member.lo_open, member.hi_open)]
    if depth >= MAX_SPLITS:
        raise NotFamily("not of the form a + kT, even split by parity")
    pieces = []
    for rest in (0, 1):
        step = {j: 2 * j + rest}
        pieces += _split(sp.expand(lo.xreplace(step)), sp.expand(hi.xreplace(step)), j, member, depth + 1)
    return pieces


def _linear(expr, j):
    """(a, T) with expr = a + T j, or None."""
    expr = sp.expand(expr)
    if j not in expr.free_symbols:
        return expr, sp.Integer(0)
    slope = expr.coeff(j, 1)
    rest = sp.expand(expr - slope * j)
    if j in slope.free_symbols or j in rest.free_symbols:
        return None
    return rest, slope


def _whole_line(piece):
    return piece.period == 0 and piece.a == -sp.oo and piece.b == sp.oo


def _common_period(pieces):
    """The least common whole multiple P of all periods, or None (incommensurable, constants)."""
    periods = [p.period for p in pieces if not _whole_line(p)]
    if not periods:
        return None
    if any(period == 0 for period in periods):
        return None
    base = periods[0]
    ratios = [sp.simplify(period / base) for period in periods]
    if not all(ratio.is_Rational for ratio in ratios):
        return None
    numerators = [ratio.p for ratio in ratios]
    denominators = [ratio.q for ratio in ratios]
    multiple = sp.Rational(math.lcm(*numerators), math.gcd(*denominators))
    period = base * multiple
    if any((period / p).is_Integer is not True for p in periods) or sum(int(period / p) for p in periods) > MAX_COPIES:
        return None
    return period


def _canonical_compare(pieces_a, pieces_b):
    """Compare the two sets modulo the common period P, exactly (None: cannot be done here).

    Positions are measured in periods from an origin, so ``[-3π/8, π/8] + kπ`` becomes the arc
    [0, 1/2] of a circle of length 1 (rational numbers, compared exactly). Two finite unions of
    arcs and points are equal iff they agree at every end point and inside every gap between
    consecutive end points: that is what is checked.
    """
    period = _common_period(pieces_a + pieces_b)
    if period is None:
        return None
    origin = next(piece.a for piece in pieces_b + pieces_a if not _whole_line(piece))
    arcs_a = _arcs(pieces_a, period, origin)
    arcs_b = _arcs(pieces_b, period, origin)
    if arcs_a is None or arcs_b is None:
        return None
    cuts = _sorted_unique([sp.Integer(0), sp.Integer(1)] + [t for arc in arcs_a + arcs_b for t in (arc[0], arc[1])])
    if cuts is None:
        return None
    probes = []
    for index, cut in enumerate(cuts[:-1]):
        probes.append(cut)
        probes.append((cut + cuts[index + 1]) / 2)
    period_text = _text(period)
    view_a, view_b = _view(arcs_a, cuts, period, origin), _view(arcs_b, cuts, period, origin)
    for probe in probes:
        inside_a, inside_b = _on_arcs(arcs_a, probe), _on_arcs(arcs_b, probe)
        if inside_a is None or inside_b is None:
            return None
        if inside_a != inside_b:
            where = M("the first") if inside_a else M("the second")
            return False, "family", (
                M('{text_origin_probe_period} (+ {period_text}·k) is in {where} answer only; modulo {period_text2}: {view_a} vs {view_b}', text_origin_probe_period=_text(origin + probe * period), period_text=period_text, where=where, period_text2=period_text, view_a=view_a, view_b=view_b)
            )
    return True, "family", M('the same set: {view_a} + {period_text}·k, k ∈ ℤ (compared modulo {period_text2})', view_a=view_a, period_text=period_text, period_text2=period_text)


def _arcs(pieces, period, origin):
    """Pieces as arcs (start, end, start_open, end_open) of the circle [0, 1), in periods."""
    arcs = []
    for piece in pieces:
        if _whole_line(piece):
            return [(sp.Integer(0), sp.Integer(1), False, True)]
        copies = int(period / piece.period)
        width = sp.simplify((piece.b - piece.a) / period)
        for m in range(copies):
            start = sp.simplify((piece.a + m * piece.period - origin) / period)
            turns = sp.floor(start)
            if not turns.is_Integer:
                return None
            start -= turns
            if piece.is_point:
                arcs.append((start, start, False, False))
                continue
            if (width - 1).is_positive:
                return [(sp.Integer(0), sp.Integer(1), False, True)]  # one piece covers a whole period
            end = start + width
            if _less(1, end):
                # Wraps past the end of the circle: split it at 1 (= 0).
                arcs.append((start, sp.Integer(1), piece.lo_open, True))
                arcs.append((sp.Integer(0), end - 1, False, piece.hi_open))
            elif end == 1:
                arcs.append((start, sp.Integer(1), piece.lo_open, True))
                if not piece.hi_open:
                    arcs.append((sp.Integer(0), sp.Integer(0), False, False))
            else:
                arcs.append((start, end, piece.lo_open, piece.hi_open))
    return arcs


def _on_arcs(arcs, t):
    """Is t (in [0, 1)) on one of the arcs? None if a comparison could not be made."""
    unclear = False
    for start, end, start_open, end_open in arcs:
        after_start = _less(start, t) or (not start_open and _equal(start, t))
        before_end = _less(t, end) or (not end_open and _equal(t, end))
        if after_start is None or before_end is None:
            unclear = True
        elif after_start and before_end:
            return True
    return None if unclear else False


def _less(a, b):
    a, b = sp.Integer(a) if isinstance(a, int) else a, sp.Integer(b) if isinstance(b, int) else b
    if a.is_Rational and b.is_Rational:
        return a < b
    if _equal(a, b):
        return False
    value = to_mpc(b - a, 30)
    if value is None:
        return None
    return value.real > 0


def _equal(a, b):
    difference = a - b
    if difference == 0:
        return True
    if difference.is_Rational:
        return False
    value = to_mpc(difference, 40)
    if value is None:
        return None
    if abs(value) > mpmath.mpf(10) ** -30:
        return False
    return True if sp.simplify(difference) == 0 else None


def _sorted_unique(values):
    """The distinct values in increasing order (None if one cannot be placed)."""
    distinct = []
    for value in values:
        same = [_equal(value, seen) for seen in distinct]
        if None in same:
            return None
        if not any(same):
            distinct.append(value)
    keys = []
    for value in distinct:
        if value.is_Rational:
            keys.append((mpmath.mpf(value.p) / value.q, value))
            continue
        number = to_mpc(value, 30)
        if number is None:
            return None
        keys.append((number.real, value))
    keys.sort(key=lambda item: item[0])
    return [value for _, value in keys]


def _view(arcs, cuts, period, origin):
    """The set modulo P in school notation, back in the answer's units: ``[-3π/8, π/8]``."""
    atoms = []  # (is_point, low cut, high cut, inside)
    for index, cut in enumerate(cuts[:-1]):
        following = cuts[index + 1]
        atoms.append((True, cut, cut, _on_arcs(arcs, cut)))
        atoms.append((False, cut, following, _on_arcs(arcs, (cut + following) / 2)))
    parts, run = [], []
    for atom in atoms + [(True, None, None, False)]:
        if atom[3]:
            run.append(atom)
            continue
        if run:
            first, last = run[0], run[-1]
            if len(run) == 1 and first[0]:
                parts.append("{" + _text(origin + first[1] * period) + "}")
            else:
                left = "[" if first[0] else "("
                right = "]" if last[0] else ")"
                parts.append(f"{left}{_text(origin + first[1] * period)}, {_text(origin + last[2] * period)}{right}")
            run = []
    if parts and all(part.startswith("{") for part in parts):
        parts = ["{" + ", ".join(part[1:-1] for part in parts) + "}"]  # {π/6, 5π/6}
    text = " \u222a ".join(parts) if parts else "\u2205"
    return text if len(text) < 160 else text[:157] + "..."


# --- sampling -----------------------------------------------------------------------------------

def _sampled(pieces_a, pieces_b, budget, points):
    """Look each sampled instance up exactly in the other side; see the module docstring."""
    for left, right, where in ((pieces_a, pieces_b, M("the first")), (pieces_b, pieces_a, M("the second"))):
        for piece in left:
            for k in (SAMPLE_K if piece.period != 0 else [0]):
                for value in _sample_points(piece, k):
                    found = attempt(budget, _contains, right, value)
                    if found is None:
                        return None, "family-sampled", M('could not decide membership for a sampled k')
                    if found is False:
                        return False, "family-sampled", M('{text_value} is in {where} answer only (k = {k})', text_value=_text(value), where=where, k=k)
    if points:
        return True, "family-sampled", M('every instance for k = {SAMPLE_K_start}..{SAMPLE_K_stop_1} of each answer is in the other', SAMPLE_K_start=SAMPLE_K.start, SAMPLE_K_stop_1=SAMPLE_K.stop - 1)
    return None, "family-sampled", M('the sampled instances agree, but intervals with unrelated periods are not compared exactly')


def _sample_points(piece, k):
    lo = piece.a + piece.period * k
    if piece.is_point:
        return [lo]
    hi = piece.b + piece.period * k
    if lo == -sp.oo or hi == sp.oo:
        finite = hi if lo == -sp.oo else lo
        if finite in (sp.oo, -sp.oo):
            return [sp.Integer(value) for value in (-100, -1, 0, 1, 100)]
        return [finite - 1 if lo == -sp.oo else finite + 1] + ([] if piece.hi_open and hi != sp.oo or piece.lo_open and lo != -sp.oo else [finite])
    points = [(lo + hi) / 2]
    if not piece.lo_open:
        points.append(lo)
    if not piece.hi_open:
        points.append(hi)
    return points


def _contains(pieces, value):
    """Is ``value`` in one of ``pieces`` for some integer j? True/False, None if unclear."""
    return _any_of(_in_piece(piece, value) for piece in pieces)


def _any_of(verdicts):
    """Three-valued "any" of lazily computed verdicts: True at the first True, else None if one
    was unclear (None), else False."""
    unclear = False
    for verdict in verdicts:
        if verdict is True:
            return True
        unclear = unclear or verdict is None
    return None if unclear else False


def _in_piece(piece, value):
    if piece.period == 0:
        return _between(value, piece.a, piece.b, piece.lo_open, piece.hi_open)
    if piece.is_point:
        steps = (value - piece.a) / piece.period
        nearest = _nearest_integer(steps)
        if nearest is None:
            return None
        return _same(value, piece.a + nearest * piece.period)
    # lo + Tj <= value <= hi + Tj  <=>  (value - hi)/T <= j <= (value - lo)/T
    low = _number((value - piece.b) / piece.period)
    high = _number((value - piece.a) / piece.period)
    if low is None or high is None:
        return None
    for j in range(int(mpmath.floor(low)) - 1, int(mpmath.ceil(high)) + 2):
        verdict = _between(value, piece.a + j * piece.period, piece.b + j * piece.period, piece.lo_open, piece.hi_open)
        if verdict is not False:
            return verdict
    return False


def _between(value, lo, hi, lo_open, hi_open):
    low, high = _same(value, lo), _same(value, hi)
    if low is True:
        return not lo_open
    if high is True:
        return not hi_open
    if low is None or high is None:
        return None
    x, a, b = _number(value), _number(lo), _number(hi)
    if x is None or a is None or b is None:
        return None
    return bool(a < x < b)


def _same(x, y):
    difference = sp.expand(x - y)
    if difference == 0:
        return True
    if difference.is_Rational:
        return False
    value = to_mpc(difference, 50)
    scale = max(abs(to_mpc(x, 20) or 0), abs(to_mpc(y, 20) or 0), 1)
    if value is None:
        return None
    if abs(value) > AGREEMENT * scale:
        return False
    return True if sp.simplify(difference) == 0 else None


def _nearest_integer(value):
    number = _number(value)
    if number is None:
        return None
    return int(mpmath.nint(number))


def _number(value):
    found = to_mpc(sp.Integer(0) + value, 40)
    if found is None or abs(found.imag) > mpmath.mpf(10) ** -30:
        return None
    return found.real


# --- families of points in the plane --------------------------------------------------------------

def _sampled_tuples(first, second, budget):
    for left, right, where in ((first, second, M("the first")), (second, first, M("the second"))):
        for member in left.members:
            for k in (SAMPLE_K if member.param is not None else [0]):
                point = tuple(c.xreplace({member.param: k}) if member.param is not None else c for c in member.coords)
                found = attempt(budget, _tuple_found, right.members, point)
                if found is None:
                    return None, "family-sampled", M('could not match a sampled point')
                if found is False:
                    shown = "(" + ", ".join(_text(c) for c in point) + ")"
                    return False, "family-sampled", M('{shown} is in {where} answer only (k = {k})', shown=shown, where=where, k=k)
    return True, "family-sampled", M('every point for k = {SAMPLE_K_start}..{SAMPLE_K_stop_1} of each answer is in the other', SAMPLE_K_start=SAMPLE_K.start, SAMPLE_K_stop_1=SAMPLE_K.stop - 1)


def _tuple_found(members, point):
    return _any_of(_tuple_in(member, point) for member in members if len(member.coords) == len(point))


def _tuple_in(member, point):
    if member.param is None:
        results = [_same(c, p) for c, p in zip(member.coords, point)]
        return False if False in results else (None if None in results else True)
    j = sp.Dummy("j", integer=True)
    for index, coord in enumerate(member.coords):
        linear = _linear(coord.xreplace({member.param: j}), j)
        if linear is None or linear[1] == 0 or not linear[1].is_number:
            continue
        a, period = linear
        k = _nearest_integer((point[index] - a) / period)
        if k is None:
            return None
        results = [_same(c.xreplace({member.param: k}), p) for c, p in zip(member.coords, point)]
        return False if False in results else (None if None in results else True)
    return None


# --- text ---------------------------------------------------------------------------------------------

def _pretty(text):
    """``3*pi/8`` as ``3π/8`` in explanations."""
    return re.sub(r"\bpi\b", "\u03c0", re.sub(r"(\d)\*pi\b", "\\1\u03c0", text))


def _text(value):
    from .display import text_of  # cycle: display imports answers, which imports this module

    return _pretty(text_of(value))
