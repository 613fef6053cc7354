"""Comparison of two classified answers, by kind.

Every function returns an :class:`Outcome`: ``True`` only with a reason that holds (an exact
or symbolic identity, agreement to many digits, agreement at many random points), ``False``
only with a witness (two different exact values, a point where they differ), and ``None``
whenever neither could be established in the time available.
"""
import math
import random
import re
from dataclasses import dataclass
from itertools import permutations

import mpmath
import sympy as sp
from sympy.solvers.inequalities import solve_univariate_inequality

from . import domains, families, labels, piecewise
from . import parser as p
from .answers import Answer, ClassifyError, _free_symbols, make_interval
from .budget import attempt, remaining
from .display import set_text, text_of
from .messages import M
from .numeric import close, format_value, is_real, rounding_matches, to_mpc

HIGH_PRECISION = 60  # digits for constant comparisons
AGREEMENT = mpmath.mpf(10) ** -45  # relative difference below which two constants agree
POINT_TOLERANCE = mpmath.mpf(10) ** -10
SEED = 20250607
IDENTICAL = "identical"

# IneqMath's fixed relation options.
INEQMATH_OPTIONS = {"A": "<=", "B": ">=", "C": "=", "D": "<", "E": ">"}
SYMBOL_TEXT = {"<=": "\u2264", ">=": "\u2265", "=": "=", "<": "<", ">": ">", "!=": "\u2260"}
NUMERIC_KINDS = ("number", "expression")
SET_KINDS = ("set", "inequality", "compound", "membership")


@dataclass
class Outcome:
    equivalent: object  # True, False or None
    method: str
    explanation: str
    decisive: str = ""  # the branch, label or word that decided, for a person ("" if none)

    def __bool__(self):  # pragma: no cover - guard against `if outcome:` mistakes
        raise TypeError("use outcome.equivalent")


def yes(method, explanation):
    return Outcome(True, method, explanation)


def no(method, explanation):
    return Outcome(False, method, explanation)


def unknown(method, explanation):
    return Outcome(None, method, explanation)


class Comparator:
    """Compare a predicted answer with a gold answer under a mode and an absolute deadline."""

    def __init__(self, mode, deadline, domain=None):
        self.mode = mode
        self.domain = domain or {}  # {name: domains.Range}: where the unknowns live (stated by the question)
        self.deadline = deadline
        # Set when a decimal was accepted as an exact value rounded at its last written place:
        # the verdict is then "equal up to rounding", not "equivalent" (see Verdict.approximate).
        self.approximated = False

    def approximation(self, method, explanation):
        self.approximated = True
        return yes(method, explanation)

    def budget(self, share=0.5, cap=1.0):
        return max(min(remaining(self.deadline) * share, cap), 0.01)

    # --- dispatch -----------------------------------------------------------------------------
    def compare(self, a, b):
        if a.kind == "piecewise" or b.kind == "piecewise":
            return piecewise.compare(self, a, b)
        if a.kind == "labelled" or b.kind == "labelled":
            return labels.compare_labelled(self, a, b)
        if a.kind == "polar" or b.kind == "polar":
            return labels.compare_polar(self, a, b)
        if a.kind == "family" or b.kind == "family":
            return self.families(a, b)
        if a.kind == "text" or b.kind == "text":
            return self.texts(a, b)
        if a.kind in ("choice", "relation_symbol") or b.kind in ("choice", "relation_symbol"):
            return self.relation_choices(a, b)
        if a.kind == "equation" or b.kind == "equation":
            outcome = self.with_equation(a, b)
            if outcome is not None:
                return outcome
        if a.kind in NUMERIC_KINDS and b.kind in NUMERIC_KINDS:
            return self.values(a, b)
        if a.kind == "system" or b.kind == "system":
            return self.systems(a, b)
        if _set_like(a, b) or _set_like(b, a):
            return self.sets(a, b)
        if a.kind in ("list", "set_literal") or b.kind in ("list", "set_literal"):
            return self.collections(a, b)
        if a.kind in ("pair", "tuple") and b.kind in ("pair", "tuple"):
            return self.tuples(a, b)
        if a.kind == "matrix" or b.kind == "matrix":
            return self.matrices(a, b)
        return no("kind", M('different kinds of answer: {a_kind_name} vs {b_kind_name}', a_kind_name=a.kind_name, b_kind_name=b.kind_name))

    # --- solution families --------------------------------------------------------------------
    def families(self, a, b):
        """Sets with one piece per integer k (``[k\\pi - \\frac{3\\pi}{8}, k\\pi + \\frac{\\pi}{8}]``)."""
        first = _as_family(a, b.value.shape if b.kind == "family" else None)
        second = _as_family(b, a.value.shape if a.kind == "family" else None)
        if first is None or second is None:
            return no("kind", M('{a_kind_name} vs {b_kind_name}', a_kind_name=a.kind_name, b_kind_name=b.kind_name))
        if first.variable is not None and second.variable is not None and first.variable != second.variable:
            return unknown("family", M('the answers are about different unknowns ({first_variable} vs {second_variable})', first_variable=first.variable, second_variable=second.variable))
        equivalent, method, explanation = families.compare(first, second, self.budget(0.7, 1.5))
        return Outcome(equivalent, method, explanation)

    # --- text and relation answers ---------------------------------------------------------------
    def texts(self, a, b):
        if a.kind == "text" and b.kind == "text":
            if a.value == b.value:
                return yes("text", M('same words'))
            return no("text", M('different words: {a_value} vs {b_value}', a_value=repr(a.value), b_value=repr(b.value)))
        return unknown("text", M('one answer is words, the other is math'))

    def relation_choices(self, a, b):
        a, b = _as_option(a), _as_option(b)

        def symbol(answer):
            if answer.kind == "relation_symbol":
                return answer.value
            if answer.kind == "choice":
                return answer.symbol or INEQMATH_OPTIONS.get(answer.value, M("none of the above"))
            return None

        if a.kind == b.kind == "choice":
            if a.value == b.value and a.symbol and b.symbol and a.symbol != b.symbol:
                return unknown("choice", M('option ({a_value}) written with different relations', a_value=a.value))
            same = a.value == b.value
            return Outcome(same, "choice", M('option ({a_value}) vs option ({b_value})', a_value=a.value, b_value=b.value))
        for answer in (a, b):
            fixed = INEQMATH_OPTIONS.get(answer.value) if answer.kind == "choice" else None
            if fixed and answer.symbol and answer.symbol != fixed:
                return unknown("choice", M('option ({answer_value}) is {SYMBOL_TEXT_get_fixed_fi} among the fixed options, but {SYMBOL_TEXT_get_answer_s} is written after it', answer_value=answer.value, SYMBOL_TEXT_get_fixed_fi=SYMBOL_TEXT.get(fixed, fixed), SYMBOL_TEXT_get_answer_s=SYMBOL_TEXT.get(answer.symbol, answer.symbol)))
        sa, sb = symbol(a), symbol(b)
        if sa is None or sb is None:
            return no("kind", M('different kinds of answer: {a_kind_name} vs {b_kind_name}', a_kind_name=a.kind_name, b_kind_name=b.kind_name))
        same = sa == sb
        return Outcome(
            same, "relation", M('{SYMBOL_TEXT_get_sa_sa} vs {SYMBOL_TEXT_get_sb_sb} (IneqMath options A ≤, B ≥, C =, D <, E >)', SYMBOL_TEXT_get_sa_sa=SYMBOL_TEXT.get(sa, sa), SYMBOL_TEXT_get_sb_sb=SYMBOL_TEXT.get(sb, sb))
        )

    # --- equations ---------------------------------------------------------------------------------
    def with_equation(self, a, b):
        """Assignments compare by value (``x = 3`` vs ``3``); other equations as equations."""
        if a.kind == b.kind == "equation":
            if a.head is not None and b.head is not None and _same_head(a.head, b.head):
                outcome = self.compare(a.rhs, b.rhs)
                return _prefixed(outcome, f"{a.head} = ...: ")
            if a.value is not None and b.value is not None:
                return self.equations(a, b)
            return self.sets(a, b)
        if a.kind == "equation" and a.rhs is not None and b.kind not in SET_KINDS:
            return self.compare(a.rhs, b)
        if b.kind == "equation" and b.rhs is not None and a.kind not in SET_KINDS:
            return self.compare(a, b.rhs)
        if a.kind == "equation" and b.kind in NUMERIC_KINDS or b.kind == "equation" and a.kind in NUMERIC_KINDS:
            return no("kind", M('an equation vs a value'))
        other = b if a.kind == "equation" else a
        if other.kind in ("list", "set_literal") + SET_KINDS:
            return self.sets(a, b)
        return None

    def equations(self, a, b):
        e1 = sp.expand(a.value[0] - a.value[1]) if _small(a.value) else a.value[0] - a.value[1]
        e2 = sp.expand(b.value[0] - b.value[1]) if _small(b.value) else b.value[0] - b.value[1]
        if e1 == 0 or e2 == 0:
            if e1 == e2:
                return yes("equation", M('both equations always hold'))
            return unknown("equation", M('one equation is an identity'))
        if e1 == e2 or e1 == -e2:
            return yes("equation", M('same equation'))
        ratio = attempt(self.budget(0.3), lambda: sp.cancel(sp.together(e1 / e2)))
        if ratio is not None and ratio.is_number and ratio != 0 and not ratio.has(sp.zoo, sp.nan):
            return yes("equation-proportional", M('the equations differ by the constant factor {ratio}', ratio=ratio))
        symbols = sorted(_free_symbols(e1) | _free_symbols(e2), key=lambda s: s.name)
        if len(symbols) == 1:
            outcome = self.solution_sets(e1, e2, symbols[0], (_is_assignment(a), _is_assignment(b)))
            if outcome is not None:
                return outcome
            if self.domain_set(symbols[0]) is not None:  # a witness could lie outside the stated domain
                return self.in_domain(unknown("equation", M('could not compare the solutions in the stated domain ({domain})', domain=self.domain_text(symbols[0]))), symbols[0])
        if not a.exact or not b.exact:
            return unknown("equation", M('equations with decimals are only compared when proportional'))
        witness = self.equation_witness(e1, e2, symbols) or self.equation_witness(e2, e1, symbols)
        if witness:
            return no("equation-witness", witness)
        return unknown("equation", M('not proportional and no point found where they differ'))

    def solution_sets(self, e1, e2, symbol, written=(False, False)):
        """The real solutions of e1 = 0 and e2 = 0 compared; inside a stated domain of ``symbol``,
        except for an assignment's values (``written``: x = 2 stays {2} whatever the domain)."""
        within = self.domain_set(symbol)

        def solve(expr, as_written):
            solved = sp.solveset(expr, symbol, sp.S.Reals)
            if within is not None and not as_written and isinstance(solved, sp.Set):
                return sp.Intersection(solved, within)
            return solved

        s1 = attempt(self.budget(0.3), solve, e1, written[0])
        s2 = attempt(self.budget(0.3), solve, e2, written[1])
        if within is not None:
            if s1 is sp.S.EmptySet and s2 is sp.S.EmptySet:
                return self.in_domain(unknown("equation-solutions", M('neither answer has a point in the stated domain ({domain})', domain=self.domain_text(symbol))), symbol)

        def finite(found):  # inside a domain, no solution there is an empty list of solutions
            return isinstance(found, sp.FiniteSet) or (within is not None and found is sp.S.EmptySet)

        if not finite(s1) or not finite(s2):
            if isinstance(s1, sp.Set) and isinstance(s2, sp.Set) and s1 == s2 and not isinstance(s1, (sp.ConditionSet, sp.Intersection)):
                return self.in_domain(yes("equation-solutions", M('same solution set {s1}', s1=s1)), symbol)
            return None
        outcome = self.unordered([Answer("number", v) for v in s1.args], [Answer("number", v) for v in s2.args])
        if outcome.equivalent is True:
            if within is not None:
                return self.in_domain(yes("equation-solutions", M('same real solutions {set_text_s1} in the stated domain ({domain})', set_text_s1=_set_text(s1), domain=self.domain_text(symbol))), symbol)
            return yes("equation-solutions", M('same real solutions {set_text_s1}', set_text_s1=_set_text(s1)))
        if outcome.equivalent is False:
            if within is not None:
                return self.in_domain(no("equation-solutions", M('real solutions {set_text_s1} vs {set_text_s2} in the stated domain ({domain})', set_text_s1=_set_text(s1), set_text_s2=_set_text(s2), domain=self.domain_text(symbol))), symbol)
            return no("equation-solutions", M('real solutions {set_text_s1} vs {set_text_s2}', set_text_s1=_set_text(s1), set_text_s2=_set_text(s2)))
        return None

    # --- a stated domain (issue 41) -----------------------------------------------------------------
    def domain_set(self, symbol):
        """The stated domain of ``symbol`` as a SymPy set, or None when the question states none."""
        found = self.domain.get(getattr(symbol, "name", None))
        return found.as_set() if found is not None else None

    def domain_text(self, symbol):
        return self.domain[symbol.name].describe(symbol.name)

    def in_domain(self, outcome, symbol):
        """``outcome`` decided inside the stated domain of ``symbol``: the decisive part names it."""
        if self.domain_set(symbol) is not None:
            outcome.decisive = M('domain {domains_describe_domain}', domains_describe_domain=self.domain_text(symbol))
        return outcome

    def equation_witness(self, e1, e2, symbols):
        """A real point on e1 = 0 where e2 != 0 proves the equations differ."""
        rng = random.Random(SEED)
        for variable in symbols:
            others = [s for s in symbols if s != variable]
            for _ in range(4):
                if remaining(self.deadline) < 0.05:
                    return None
                values = {s: sp.Rational(rng.randint(-25, 25), rng.randint(3, 9)) for s in others}
                section = e1.xreplace(values)
                roots = attempt(self.budget(0.2, 0.3), _real_roots, section, variable)
                for root in roots or []:
                    point = dict(values)
                    point[variable] = root
                    value, scale = _value_and_scale(e2, point)
                    if value is not None and abs(value) > mpmath.mpf(10) ** -8 * max(scale, 1):
                        where = ", ".join(f"{s} = {format_value(to_mpc(v, 15), 8)}" for s, v in point.items())
                        return M("at {where} the first equation holds and the second does not", where=where)
        return None

    # --- numbers and expressions -------------------------------------------------------------------
    def values(self, a, b):
        if a.unit == b.unit or not (a.unit or b.unit):
            return self.plain_values(a, b)
        outcomes = []
        for left in _unit_readings(a):
            for right in _unit_readings(b):
                outcome = self.plain_values(left[0], right[0])
                if outcome.equivalent is True:
                    note = left[1] or right[1]
                    return yes(outcome.method + "-" + (a.unit or b.unit), M('{outcome_explanation} ({note})', outcome_explanation=outcome.explanation, note=note))
                outcomes.append(outcome)
        if all(o.equivalent is False for o in outcomes):
            return no(outcomes[0].method, M('{outcomes_0_explanation} (also with the {a_unit_or_b_unit} sign read either way)', outcomes_0_explanation=outcomes[0].explanation, a_unit_or_b_unit=M(a.unit or b.unit)))
        return unknown("unit", M('undecided with the {a_unit_or_b_unit} sign read either way', a_unit_or_b_unit=M(a.unit or b.unit)))

    def plain_values(self, a, b):
        if a.kind == b.kind == "number":
            return self.numbers(a, b)
        return self.expressions(a, b)

    def numbers(self, a, b):
        outcome = self.exact_numbers(a.value, b.value)
        if outcome.equivalent is not False or outcome.method == "huge":
            return outcome
        approx = a.decimal if a.decimal is not None and b.exact else None
        exact_side = b
        if approx is None and b.decimal is not None and a.exact:
            approx, exact_side = b.decimal, a
        if approx is None:
            return outcome
        if self.mode == "strict":
            return no("strict-decimal", M('{outcome_explanation}; a decimal approximation does not count in strict mode', outcome_explanation=outcome.explanation))
        if approx.digits < 3:
            return no("decimal", M('{outcome_explanation}; {approx_digits} significant digit(s) are too few to accept an approximation', outcome_explanation=outcome.explanation, approx_digits=approx.digits))
        if rounding_matches(approx, exact_side.value, self.budget(0.5)):
            value = format_value(to_mpc(exact_side.value, 20), 15)
            return self.approximation("decimal-rounding", M('{dec_text_approx} is {value}... rounded or truncated at its last written place', dec_text_approx=_dec_text(approx), value=value))
        return no("decimal", M('{outcome_explanation}; {dec_text_approx} is not the exact value rounded at its last place', outcome_explanation=outcome.explanation, dec_text_approx=_dec_text(approx)))

    def exact_numbers(self, x, y):
        if x == y:
            return yes(IDENTICAL, M("the same value once parsed (SymPy's normal form)"))
        if _is_huge(x) or _is_huge(y):
            return self.huge_numbers(x, y)
        if x.is_Rational and y.is_Rational:
            return no("exact", M('{number_text_x} ≠ {number_text_y}', number_text_x=_number_text(x), number_text_y=_number_text(y)))
        for value in (x, y):
            if value in (sp.oo, -sp.oo):
                return no("exact", M('{number_text_x} ≠ {number_text_y}', number_text_x=_number_text(x), number_text_y=_number_text(y)))
        fx = attempt(self.budget(0.3), to_mpc, x, HIGH_PRECISION)
        fy = attempt(self.budget(0.3), to_mpc, y, HIGH_PRECISION)
        if fx is None or fy is None:
            return unknown("numeric", M('could not evaluate the first value') if fx is None else M('could not evaluate the second value'))
        scale = max(abs(fx), abs(fy))
        difference = attempt(self.budget(0.3), to_mpc, x - y, HIGH_PRECISION)
        if difference is None:
            difference = fx - fy
        if abs(difference) > AGREEMENT * scale and abs(fx - fy) > AGREEMENT * scale:
            digits = _digits_to_show(fx, fy)
            return no("numeric", M('{format_value_fx_digits} ≠ {format_value_fy_digits}', format_value_fx_digits=format_value(fx, digits), format_value_fy_digits=format_value(fy, digits)))
        proof = attempt(self.budget(0.2, 0.15), _proves_zero, x - y)
        if proof:
            return yes("symbolic", M('the difference simplifies to 0'))
        return yes("numeric-high-precision", M('equal to {HIGH_PRECISION_15} significant digits ({format_value_fx})', HIGH_PRECISION_15=HIGH_PRECISION - 15, format_value_fx=format_value(fx)))

    def huge_numbers(self, x, y):
        """Numbers too large to compute: compare signs and the logarithms of their sizes."""
        lx = attempt(self.budget(0.3), _log_abs, x)
        ly = attempt(self.budget(0.3), _log_abs, y)
        if lx is not None and ly is not None:
            if abs(lx - ly) > mpmath.mpf(10) ** -30 * max(abs(lx), abs(ly), 1):
                return no("huge", M('different sizes: ln|a| = {format_value_mpmath_mpc_} vs ln|b| = {format_value_mpmath_mpc_2}', format_value_mpmath_mpc_=format_value(mpmath.mpc(lx), 10), format_value_mpmath_mpc_2=format_value(mpmath.mpc(ly), 10)))
            if x.is_positive is not None and y.is_positive is not None and x.is_positive != y.is_positive:
                return no("huge", M('different signs'))
            return unknown("huge", M('too large to compare exactly; their sizes agree to 30 digits'))
        return unknown("huge", M('too large to evaluate'))

    def expressions(self, a, b):
        x, y = a.value, b.value
        if x == y:
            return yes(IDENTICAL, M("the same expression once parsed (SymPy's normal form)"))
        exact = a.exact and b.exact
        difference = x - y
        small = _small((x, y))
        if small and _expands_small(difference):
            # Written decimals are exact rationals here: 0.5x and x/2 are the same expression.
            cheap = attempt(self.budget(0.15, 0.3), _cheap_zero, difference)
            if cheap:
                return yes("symbolic", M('the difference expands to 0'))
        digits = min(a.digits or 99, b.digits or 99)
        outcome = self.numeric_points(x, y, exact, digits)
        if outcome.equivalent is False:
            outcome = self.index_domain(x, y, exact, digits, outcome)
        if outcome.equivalent is None and exact and small:
            simplified = attempt(self.budget(0.6, 1.0), sp.simplify, difference)
            if simplified == 0:
                return yes("symbolic", M('the difference simplifies to 0'))
        return outcome

    def index_domain(self, x, y, exact, digits, outcome):
        """A difference found where an index letter (n, m, k) is not a positive integer, no domain stated.

        Such a letter usually counts something; the answers are tested again at positive integers.
        Agreement there is *undecided* (the verdict says the domain decides); a difference there
        is a witness as good as any.
        """
        letters = sorted(s for s in _free_symbols(x) | _free_symbols(y) if s.name in domains.INDEX_LETTERS and s.name not in self.domain)
        if not letters:
            return outcome
        where = str(outcome.explanation)
        if all(f"{s} = " in where and re.search(rf"(?<![\w]){s} = [1-9]\d*(?:,|:|$)", where) for s in letters):
            return outcome  # already a positive integer: the difference holds
        integers = {s.name: domains.POSITIVE_INTEGERS for s in letters}
        again = self.numeric_points(x, y, exact, digits, domain={**self.domain, **integers})
        if again.equivalent is False:
            return again
        if again.equivalent is True:
            names = ", ".join(map(str, letters))
            point = re.search(r"at (.+?):", where)
            point = point.group(1) if point else where[:80]
            return Outcome(None, "numeric-points-domain",
                           M('equal at every positive integer {names} tried, different at {point} (outside them): {names2} usually counts something, but no domain was stated, so this is not decided', names=names, point=point, names2=names),
                           M('domain {names} ∈ ℕ*', names=names))
        return outcome

    def numeric_points(self, x, y, exact, digits, domain=None):
        """Compare at seeded random points: exact rationals where the expressions allow it.

        At a rational point a polynomial or rational function has an exact value, so a
        difference as small as 10^-30 next to values of 10^40 is still seen. Elsewhere values
        are compared to 30 digits with a relative tolerance, and the difference itself is also
        evaluated at the point (SymPy cancels what the two have in common first).
        """
        symbols = sorted(_free_symbols(x) | _free_symbols(y), key=lambda s: s.name)
        difference = x - y
        if not _free_symbols(difference):
            return self.constant_difference(difference)
        if exact or self.mode == "strict":
            tolerance = POINT_TOLERANCE
        elif digits < 3:
            return unknown("numeric-points", M('too few significant digits to compare approximately'))
        else:
            tolerance = mpmath.mpf(5) * mpmath.mpf(10) ** -digits
        rational_points = _safe_for_exact_points(x) and _safe_for_exact_points(y)
        # Floating points carry rounding error that a power N multiplies by N: more digits.
        digits_needed = 30 if rational_points else 45 + len(str(max(_max_exponent(x), _max_exponent(y))))
        rng = random.Random(SEED)
        agree, disagree_elsewhere = 0, None
        domain = domain if domain is not None else self.domain
        for index in range(12):
            if remaining(self.deadline) < 0.05 or (agree >= 8 and not disagree_elsewhere):
                break
            point = _random_point(rng, symbols, positive=index % 2 == 0, exact=rational_points, digits=digits_needed)
            if domain:
                point = domains.inside(point, domain, rng, index)
                if point is None:
                    continue
            values = attempt(self.budget(0.15, 0.3), _values_at, x, y, difference, point, digits_needed)
            if values is None:
                continue
            (ex, fx), (ey, fy), fd, scale = values
            where = ", ".join(f"{s} = {_number_text(v)}" for s, v in point.items())
            if ex is not None and ey is not None and exact:
                if ex == ey:
                    agree += 1
                    continue
                shown_x, shown_y = _number_text(ex), _number_text(ey)
                if max(abs(ex.p), ex.q, abs(ey.p), ey.q).bit_length() > 100:  # huge fractions: their values
                    digits = _digits_to_show(fx, fy)
                    shown_x, shown_y = format_value(fx, digits), format_value(fy, digits)
                return no("numeric-points", M('at {where}: {shown_x} vs {shown_y}', where=where, shown_x=shown_x, shown_y=shown_y))
            if fx is None or fy is None:
                continue
            if _agree_at_point(fx, fy, fd, tolerance, exact, scale):
                agree += 1
                continue
            if is_real(fx) and is_real(fy):
                shown = _digits_to_show(fx, fy)
                text = f"at {where}: {format_value(fx, shown)} vs {format_value(fy, shown)}"
                if format_value(fx, shown) == format_value(fy, shown) and fd is not None:
                    text = f"at {where} they differ by {format_value(fd[0], 6)} (far above rounding noise)"
                return no("numeric-points", text)
            disagree_elsewhere = disagree_elsewhere or where
        if disagree_elsewhere and agree >= 3:
            return unknown(
                "numeric-points", M('equal where both are real, different at {disagree_elsewhere} (a question of domain)', disagree_elsewhere=disagree_elsewhere)
            )
        if agree >= 4 and not disagree_elsewhere:
            inside = M(" of the stated domain ({domain})", domain=domains.describe(domain)) if domain else ""
            if not exact and tolerance != POINT_TOLERANCE:
                outcome = self.approximation("numeric-points", M('equal at {agree} random points{inside} (seeded) up to the rounding of the written decimals', agree=agree, inside=inside))
            else:
                outcome = yes("numeric-points", M('equal at {agree} random points{inside} (seeded)', agree=agree, inside=inside))
            if domain:
                outcome.decisive = M('domain {domains_describe_domain}', domains_describe_domain=domains.describe(domain))
            return outcome
        return unknown("numeric-points", M('only {agree} usable points', agree=agree))

    def constant_difference(self, difference):
        """The two expressions differ by a constant (their variable parts cancel)."""
        if difference == 0:
            return yes("symbolic", M('the difference is 0'))
        if difference.is_Rational:
            return no("symbolic", M('they differ by the constant {number_text_difference}', number_text_difference=_number_text(difference)))
        value = attempt(self.budget(0.3), to_mpc, difference, HIGH_PRECISION)
        terms = [attempt(self.budget(0.1), to_mpc, term, HIGH_PRECISION) for term in sp.Add.make_args(difference)]
        if value is None or any(term is None for term in terms):
            return unknown("symbolic", M('they differ by a constant that could not be evaluated'))
        scale = max([abs(term) for term in terms] + [abs(value)])
        if abs(value) > AGREEMENT * scale:
            return no("symbolic", M('they differ by the constant {format_value_value}', format_value_value=format_value(value)))
        if attempt(self.budget(0.3, 0.3), _proves_zero, difference):
            return yes("symbolic", M('the difference simplifies to 0'))
        return yes("numeric-high-precision", M('the difference is a constant equal to 0 to {HIGH_PRECISION_15} digits', HIGH_PRECISION_15=HIGH_PRECISION - 15))

    # --- sets, intervals, inequalities --------------------------------------------------------------
    def sets(self, a, b):
        if a.kind == "inequality" and b.kind == "inequality":
            multi = self.multivariate_inequalities(a, b)
            if multi is not None:
                return multi
        s1, why1 = self.as_set(a)
        s2, why2 = self.as_set(b)
        if s1 is None or s2 is None:
            if (s1 is None and why1 == "kind") or (s2 is None and why2 == "kind"):
                return no("kind", M('{a_kind_name} vs {b_kind_name}', a_kind_name=a.kind_name, b_kind_name=b.kind_name))
            return unknown("set", why1 or why2)
        unknowns_a, unknowns_b = _unknowns(a) or _builder_variable(a), _unknowns(b) or _builder_variable(b)
        if unknowns_a and unknowns_b and unknowns_a != unknowns_b:
            return unknown("set", M('the answers are about different unknowns ({names_unknowns_a} vs {names_unknowns_b})', names_unknowns_a=_names(unknowns_a), names_unknowns_b=_names(unknowns_b)))
        named = unknowns_a | unknowns_b
        if len(named) == 1 and self.domain_set(next(iter(named))) is not None:
            # A stated domain (x > 0): the solutions of a condition (equation, inequality, interval,
            # set-builder) are those inside it; values written out (x = ±2, {2, -2}) stay as written,
            # so a value outside the domain that an answer did not reject still counts.
            symbol = next(iter(named))
            within = self.domain_set(symbol)
            given = (s1, s2)
            if not _values_written(a):
                s1 = attempt(self.budget(0.2), sp.Intersection, s1, within)
            if not _values_written(b):
                s2 = attempt(self.budget(0.2), sp.Intersection, s2, within)
            if s1 is None or s2 is None:
                return unknown("set", M('could not intersect the answers with the stated domain ({domain}) in time', domain=self.domain_text(symbol)))
            if s1 is sp.S.EmptySet and s2 is sp.S.EmptySet and given[0] != given[1]:
                return self.in_domain(unknown("set", M('neither answer has a point in the stated domain ({domain})', domain=self.domain_text(symbol))), symbol)
            outcome = self.set_equality(s1, s2)
            outcome = Outcome(outcome.equivalent, outcome.method, M('{outcome_explanation}, in the stated domain ({domain})', outcome_explanation=outcome.explanation, domain=self.domain_text(symbol)))
            return self.in_domain(outcome, symbol)
        return self.set_equality(s1, s2)

    def as_set(self, answer):
        """The answer as a set of real numbers, or (None, reason)."""
        kind = answer.kind
        try:
            if kind == "set":
                value = answer.value
                if isinstance(value, tuple) and value[0] == "builder":
                    return self.builder_set(value)
                return value, ""
            if kind == "pair":
                return _interval_from_pair(answer), ""
            if kind == "membership":
                return self.as_set(answer.value[1])
            if kind == "inequality":
                return self.inequality_set(answer)
            if kind == "compound":
                parts, joiner = answer.value
                if len(_unknowns(answer)) > 1:
                    return None, "conditions on different unknowns do not make one set of numbers"
                sets = []
                for part in parts:
                    value, why = self.as_set(part)
                    if value is None:
                        return None, why
                    sets.append(value)
                if joiner == "mixed":
                    return None, "mixed 'and'/'or'"
                return (sp.Union(*sets) if joiner == "or" else sp.Intersection(*sets)), ""
            if kind in ("list", "set_literal") and all(item.kind == "number" for item in answer.value):
                return sp.FiniteSet(*[item.value for item in answer.value]), ""
            if kind == "equation" and answer.rhs is not None and answer.rhs.kind in ("number", "list", "set_literal"):
                return self.as_set(answer.rhs if answer.rhs.kind != "number" else Answer("list", [answer.rhs]))
            if kind == "equation" and answer.value is not None:
                return self.equation_set(answer)
        except (ClassifyError, TypeError, ValueError) as exc:
            return None, str(exc)
        return None, "kind"

    def inequality_set(self, answer):
        sides, ops = answer.value
        symbols = set()
        for side in sides:
            symbols |= _free_symbols(side)
        if len(symbols) != 1:
            return None, "inequality in several variables"
        variable = symbols.pop()
        result = sp.S.Reals
        for left, op, right in zip(sides, ops, sides[1:]):
            link = _interval_link(left, op, right, variable)
            if link is None:
                relation = _relational(left, op, right)
                link = attempt(self.budget(0.5, 1.0), solve_univariate_inequality, relation, variable, relational=False)
            if link is None:
                return None, "could not solve the inequality in time"
            result = sp.Intersection(result, link)
        return result, ""

    def equation_set(self, answer):
        left, right = answer.value
        symbols = _free_symbols(left - right)
        if len(symbols) != 1:
            return None, "an equation in several unknowns is not a set of numbers"
        solved = attempt(self.budget(0.3), sp.solveset, left - right, symbols.pop(), sp.S.Reals)
        if not isinstance(solved, sp.Set) or isinstance(solved, sp.ConditionSet):
            return None, "could not solve the equation in time"
        return solved, ""

    def builder_set(self, value):
        _, variable, condition, domain = value
        if _unknowns(condition) - {variable}:
            return None, "the condition is not about the set-builder variable"
        if condition.kind in ("inequality", "compound", "membership"):
            inner, why = self.as_set(condition)
            if inner is None:
                return None, why
            return sp.Intersection(inner, domain), ""
        if condition.kind == "equation" and condition.value is not None:
            left, right = condition.value
            solved = attempt(self.budget(0.3), sp.solveset, left - right, variable, sp.S.Reals)
            if isinstance(solved, sp.Set):
                return sp.Intersection(solved, domain), ""
        return None, "unsupported set-builder condition"

    def set_equality(self, s1, s2):
        if s1 == s2:
            return yes("set", M('same set {set_text_s1}', set_text_s1=_set_text(s1)))
        if isinstance(s1, (sp.Range, sp.FiniteSet)) and isinstance(s2, (sp.Range, sp.FiniteSet)) and (
                isinstance(s1, sp.Range) or isinstance(s2, sp.Range)):
            witness = _integer_witness(s1, s2)
            if witness is not None:
                return no("set", M('{set_text_s1} vs {set_text_s2} ({where} {set_text_differ})', set_text_s1=_set_text(s1), set_text_s2=_set_text(s2), where=M("they differ at least on"), set_text_differ=_set_text(sp.FiniteSet(witness))))
        if isinstance(s1, sp.FiniteSet) and isinstance(s2, sp.FiniteSet):
            outcome = self.unordered([Answer("number", v) for v in s1.args], [Answer("number", v) for v in s2.args])
            return Outcome(outcome.equivalent, "set", M('{set_text_s1} vs {set_text_s2}: {outcome_explanation}', set_text_s1=_set_text(s1), set_text_s2=_set_text(s2), outcome_explanation=outcome.explanation))
        left = attempt(self.budget(0.3), lambda: sp.Complement(s1, s2))
        right = attempt(self.budget(0.3), lambda: sp.Complement(s2, s1))
        if left is sp.S.EmptySet and right is sp.S.EmptySet:
            return yes("set", M('same set {set_text_s1}', set_text_s1=_set_text(s1)))
        extras = [extra for extra in (left, right) if isinstance(extra, (sp.Interval, sp.FiniteSet, sp.Union))
                  and extra is not sp.S.EmptySet and _numeric_set(extra)]
        if extras:
            # Where they differ is the symmetric difference: (1, 2] vs [1, 2) differ on {1, 2}.
            known = [extra for extra in (left, right) if extra is sp.S.EmptySet or extra in extras]
            differ = sp.Union(*extras) if len(known) == 2 else extras[0]
            where = M("they differ on") if len(known) == 2 else M("they differ at least on")
            return no("set", M('{set_text_s1} vs {set_text_s2} ({where} {set_text_differ})', set_text_s1=_set_text(s1), set_text_s2=_set_text(s2), where=where, set_text_differ=_set_text(differ)))
        return unknown("set", M('could not decide whether {set_text_s1} equals {set_text_s2}', set_text_s1=_set_text(s1), set_text_s2=_set_text(s2)))

    def multivariate_inequalities(self, a, b):
        (sides_a, ops_a), (sides_b, ops_b) = a.value, b.value
        symbols = set()
        for side in sides_a + sides_b:
            symbols |= _free_symbols(side)
        if len(symbols) <= 1:
            return None
        if len(ops_a) != 1 or len(ops_b) != 1 or "!=" in ops_a + ops_b:
            return unknown("inequality", M('chains of inequalities in several variables are not compared'))
        f1, strict1 = _positive_form(sides_a[0], ops_a[0], sides_a[1])
        f2, strict2 = _positive_form(sides_b[0], ops_b[0], sides_b[1])
        ratio = attempt(self.budget(0.3), lambda: sp.cancel(sp.together(f1 / f2)))
        if ratio is not None and ratio.is_number and ratio != 0:
            if ratio.is_positive and strict1 == strict2:
                return yes("inequality", M('the same inequality up to a positive factor'))
            if ratio.is_positive:
                return no("inequality", M('one inequality is strict, the other is not'))
            if ratio.is_negative:
                return no("inequality", M('the inequalities point in opposite directions'))
        rng = random.Random(SEED)
        ordered = sorted(symbols, key=lambda s: s.name)
        for index in range(24):
            point = _random_point(rng, ordered, positive=index % 2 == 0)
            v1 = attempt(self.budget(0.1, 0.2), _evaluate_at, f1, point)
            v2 = attempt(self.budget(0.1, 0.2), _evaluate_at, f2, point)
            if v1 is None or v2 is None or not is_real(v1) or not is_real(v2):
                continue
            margin = mpmath.mpf(10) ** -8
            if abs(v1.real) > margin and abs(v2.real) > margin and (v1.real > 0) != (v2.real > 0):
                where = ", ".join(f"{s} = {format_value(to_mpc(v, 10), 6)}" for s, v in point.items())
                return no("inequality-witness", M('at {where} one inequality holds and the other does not', where=where))
        return unknown("inequality", M('not the same up to a positive factor, and no point found where they differ'))

    # --- collections ---------------------------------------------------------------------------------
    def collections(self, a, b):
        items_a = _items(a)
        items_b = _items(b)
        if items_a is None or items_b is None:
            single_a = items_a if items_a is not None else [a]
            single_b = items_b if items_b is not None else [b]
            if len(single_a) == 1 and len(single_b) == 1 and (single_a[0] is not a or single_b[0] is not b):
                return self.compare(single_a[0], single_b[0])
            return no("kind", M('{a_kind_name} vs {b_kind_name}', a_kind_name=a.kind_name, b_kind_name=b.kind_name))
        return self.unordered(items_a, items_b)

    def unordered(self, items_a, items_b):
        """Same answers in any order (each answer of one side matches one on the other)."""
        if len(items_a) > 12 or len(items_b) > 12:
            return unknown("list", M('too many answers to match'))
        table = [[self.compare(x, y) for y in items_b] for x in items_a]
        for i, row in enumerate(table):
            if all(cell.equivalent is False for cell in row):
                return no("list", M('answer {i_1} of the first has no match in the second', i_1=i + 1))
        for j in range(len(items_b)):
            if all(table[i][j].equivalent is False for i in range(len(items_a))):
                return no("list", M('answer {j_1} of the second has no match in the first', j_1=j + 1))
        if len(items_a) == len(items_b) and _perfect_matching(table):
            return yes("list", M('the same {len_items_a} answer(s) in some order', len_items_a=len(items_a)))
        covered_a = all(any(cell.equivalent is True for cell in row) for row in table)
        covered_b = all(any(table[i][j].equivalent is True for i in range(len(items_a))) for j in range(len(items_b)))
        if covered_a and covered_b:
            return yes("list", M('the same answers (repeats ignored)'))
        return unknown("list", M('some answers could not be matched either way'))

    def tuples(self, a, b):
        if a.kind == b.kind == "pair" and a.brackets != b.brackets:
            return no("tuple", M('{a_brackets_0}a, b{a_brackets_1} vs {b_brackets_0}a, b{b_brackets_1}', a_brackets_0=a.brackets[0], a_brackets_1=a.brackets[1], b_brackets_0=b.brackets[0], b_brackets_1=b.brackets[1]))
        return self.ordered(a.value, b.value)

    def ordered(self, items_a, items_b):
        if len(items_a) != len(items_b):
            return no("tuple", M('{len_items_a} entries vs {len_items_b}', len_items_a=len(items_a), len_items_b=len(items_b)))
        undecided = None
        for index, (x, y) in enumerate(zip(items_a, items_b), start=1):
            outcome = self.compare(x, y)
            if outcome.equivalent is False:
                return no("tuple", M('entry {index} differs: {outcome_explanation}', index=index, outcome_explanation=outcome.explanation))
            if outcome.equivalent is None:
                undecided = undecided or f"entry {index}: {outcome.explanation}"
        if undecided:
            return unknown("tuple", undecided)
        return yes("tuple", M('all {len_items_a} entries match in order', len_items_a=len(items_a)))

    def matrices(self, a, b):
        if a.kind == b.kind == "matrix":
            if a.shape != b.shape:
                return no("matrix", M('shape {a_shape_0}x{a_shape_1} vs {b_shape_0}x{b_shape_1}', a_shape_0=a.shape[0], a_shape_1=a.shape[1], b_shape_0=b.shape[0], b_shape_1=b.shape[1]))
            outcome = self.ordered(a.value, b.value)
            explanation = outcome.explanation
            if isinstance(explanation, M) and explanation.template.startswith("entry "):
                explanation = M("matrix " + explanation.template, **explanation.params)
            return Outcome(outcome.equivalent, "matrix", explanation)
        matrix, other = (a, b) if a.kind == "matrix" else (b, a)
        if other.kind in ("tuple", "pair") and 1 in matrix.shape:
            return self.ordered(a.value, b.value)
        return no("kind", M('{a_kind_name} vs {b_kind_name}', a_kind_name=a.kind_name, b_kind_name=b.kind_name))

    def systems(self, a, b):
        if a.kind == b.kind == "system":
            if set(a.value) != set(b.value):
                return no("system", M('different unknowns'))
            keys = sorted(a.value, key=str)
            outcome = self.ordered([a.value[k] for k in keys], [b.value[k] for k in keys])
            return Outcome(outcome.equivalent, "system", outcome.explanation)
        system, other = (a, b) if a.kind == "system" else (b, a)
        if other.kind in ("pair", "tuple") and len(system.value) == len(other.value):
            keys = sorted(system.value, key=str)
            if not _conventional_order(keys):
                return unknown("system", M('cannot tell which unknown is which entry'))
            items = [system.value[k] for k in keys]
            pair = (items, other.value) if system is a else (other.value, items)
            outcome = self.ordered(*pair)
            return Outcome(outcome.equivalent, "system", M('{outcome_explanation} (unknowns in the order {join_map_str_keys})', outcome_explanation=outcome.explanation, join_map_str_keys=', '.join(map(str, keys))))
        return no("kind", M('{a_kind_name} vs {b_kind_name}', a_kind_name=a.kind_name, b_kind_name=b.kind_name))


# --- helpers ----------------------------------------------------------------------------------------

def _number_text(value):
    """``0.0015`` rather than ``3/2000`` when the decimal is short; long integers abbreviated."""

    if isinstance(value, sp.Rational) and not value.is_Integer:
        q = value.q
        twos = fives = 0
        while q % 2 == 0:
            q //= 2
            twos += 1
        while q % 5 == 0:
            q //= 5
            fives += 1
        places = max(twos, fives)
        if q == 1 and places <= 12:
            return format(sp.Float(value, places + len(str(abs(value.p))) + 2), f".{places}f")
    return text_of(value)


def _digits_to_show(fx, fy):
    """Enough significant digits for two close numbers to print differently."""
    scale = max(abs(fx), abs(fy))
    gap = abs(fx - fy)
    if gap == 0 or scale == 0:
        return 12
    return int(min(max(12, -mpmath.log10(gap / scale) + 3), 60))


def _names(symbols):
    return ", ".join(sorted(map(str, symbols)))


def _unknowns(answer):
    """The variables a set-like answer constrains (x for ``x > 2``, none for ``(2, oo)``)."""
    kind = answer.kind
    if kind == "inequality":
        found = set()
        for side in answer.value[0]:
            found |= _free_symbols(side)
        return found
    if kind == "membership":
        return {answer.value[0]}
    if kind == "compound":
        found = set()
        for part in answer.value[0]:
            found |= _unknowns(part)
        return found
    if kind == "equation":
        if answer.head is not None:
            return {answer.head} if isinstance(answer.head, sp.Symbol) else set()
        if answer.value is not None:
            return _free_symbols(answer.value[0] - answer.value[1])
    return set()


def _integer_witness(s1, s2):
    """An integer in one of two sets of integers (a ``Range`` of a stated domain, or finite) and
    not the other: one of the end points where they differ, or None."""
    candidates = []
    for value in (s1, s2):
        for end in (value.inf, value.sup):
            if end.is_finite:
                candidates += [end, end - 1, end + 1]
    for candidate in candidates:
        if candidate.is_integer and (candidate in s1) != (candidate in s2):
            return candidate
    return None


def _is_assignment(answer):
    return answer.kind == "equation" and answer.head is not None and answer.rhs is not None


def _values_written(answer):
    """An answer that lists its values (2, x = ±2, {2, -2}) rather than stating a condition."""
    return answer.kind in ("number", "list", "set_literal") or _is_assignment(answer)


def _builder_variable(answer):
    """{x} for a set-builder ``\\{x \\mid ...\\}``, else the empty set."""
    value = answer.value if answer.kind == "set" else None
    if isinstance(value, tuple) and value and value[0] == "builder" and isinstance(value[1], sp.Symbol):
        return {value[1]}
    return set()


def _as_family(answer, other_shape=None):
    """A family answer's value, or any other answer as a family of constant pieces (or None)."""
    if answer.kind == "family":
        return answer.value
    try:
        return families.constant_family(answer, pairs_as="tuple" if other_shape == "tuple" else "interval")
    except families.NotFamily:
        return None


def _as_option(answer):
    """A bare capital A-F next to an option answer is that option letter."""
    value = answer.value
    if answer.kind == "expression" and isinstance(value, sp.Symbol) and value.name in ("A", "B", "C", "D", "E", "F"):
        return Answer("choice", value.name)
    return answer


def _set_like(a, b):
    if a.kind in SET_KINDS:
        return True
    return a.kind == "pair" and b.kind in SET_KINDS


def _same_head(h1, h2):
    return h1 == h2 or str(h1) == str(h2)


def _prefixed(outcome, prefix):
    return Outcome(outcome.equivalent, outcome.method, prefix + outcome.explanation, outcome.decisive)


def _small(values):
    return sum(sp.count_ops(v, visual=False) for v in values) < 400


def _unit_readings(answer):
    value = answer.value
    if answer.unit == "percent":
        scaled = rescaled(answer, sp.Rational(1, 100))
        return [(_plain(answer), M("ignoring the percent sign")), (scaled, f"{_number_text(value)}% = {_number_text(scaled.value)}")]
    if answer.unit == "degree":
        scaled = rescaled(answer, sp.pi / 180)
        return [(_plain(answer), M("ignoring the degree sign")), (scaled, f"{_number_text(value)}\u00b0 = {_number_text(scaled.value)} rad")]
    return [(answer, "")]


def _plain(answer):
    return Answer(answer.kind, answer.value, decimal=answer.decimal, exact=answer.exact, digits=answer.digits,
                  conditions=answer.conditions)


def rescaled(answer, factor):
    """``answer`` (a number) times ``factor``, its written decimal scaled along when the factor is rational."""
    decimal = answer.decimal
    if decimal is not None:
        if factor.is_Rational:
            decimal = p.DecimalLiteral(value=decimal.value * factor, ulp=decimal.ulp * factor, digits=decimal.digits)
        else:
            decimal = None
    return Answer(answer.kind, answer.value * factor, decimal=decimal, exact=answer.exact,
                  digits=answer.digits, conditions=answer.conditions)


def _dec_text(literal):
    value = literal.value
    if value.is_Integer:
        return str(value)
    return format_value(to_mpc(value, 30), max(literal.digits, 1))


def _is_huge(expr):
    return p._has_huge(expr) or any(
        isinstance(node, sp.binomial) and node.args[0].is_Integer and node.args[0] > 10 * p.MAX_FACTORIAL
        for node in sp.preorder_traversal(expr)
    )


def _log_abs(expr):
    """ln |expr| for numbers too large to write out (towers included), or None."""
    with mpmath.workdps(45):
        if isinstance(expr, p.HugePower):
            base, exponent = expr.args
            log_base = _log_abs(base)
            if p._has_huge(exponent):
                log_exponent = _log_abs(exponent)
                if log_exponent is None or not exponent.is_positive or log_exponent > 10**15:
                    return None  # a tower whose height cannot even be written down
                exponent_value = mpmath.exp(log_exponent)
            else:
                value = to_mpc(exponent, 45)
                exponent_value = value.real if value is not None and is_real(value) else None
            if log_base is None or exponent_value is None:
                return None
            return exponent_value * log_base
        if isinstance(expr, sp.factorial) and expr.args[0].is_Integer:
            return mpmath.loggamma(mpmath.mpf(int(expr.args[0])) + 1)
        if isinstance(expr, sp.Mul):
            parts = [_log_abs(arg) for arg in expr.args]
            return None if any(part is None for part in parts) else mpmath.fsum(parts)
        if isinstance(expr, sp.Pow) and expr.exp.is_number and not p._has_huge(expr.exp):
            log_base = _log_abs(expr.base)
            exponent = to_mpc(expr.exp, 45)
            if log_base is None or exponent is None or not is_real(exponent):
                return None
            return exponent.real * log_base
        if isinstance(expr, sp.Add):
            parts = sorted((_log_abs(arg) for arg in expr.args), key=lambda v: -1e400 if v is None else v)
            if any(part is None for part in parts):
                return None
            if len(parts) == 1 or parts[-1] - parts[-2] > 200:
                return parts[-1]  # one term dwarfs the rest beyond 45 digits
            return None
        if p._has_huge(expr):
            return None
        value = to_mpc(expr, 45)
        if value is None or value == 0:
            return None
        return mpmath.log(abs(value))


def _expands_small(expr, limit=400):
    """Would ``expand`` stay small? ``(x-1)^{500}(x+1)^{500}`` would make 250,000 products."""
    try:
        return _expanded_terms(expr, limit) <= limit
    except OverflowError:
        return False


def _expanded_terms(expr, limit):
    """An upper estimate of the number of terms of ``expand(expr)`` (OverflowError past ``limit``)."""
    if isinstance(expr, sp.Add):
        count = sum(_expanded_terms(arg, limit) for arg in expr.args)
    elif isinstance(expr, sp.Mul):
        count = 1
        for arg in expr.args:
            count *= _expanded_terms(arg, limit)
            if count > limit:
                raise OverflowError
    elif isinstance(expr, sp.Pow) and expr.exp.is_Integer and expr.exp > 1:
        k = _expanded_terms(expr.base, limit)
        n = int(expr.exp)
        if k > 1 and n > limit:
            raise OverflowError
        count = math.comb(n + k - 1, k - 1) if k > 1 else 1
    else:
        count = 1
    if count > limit:
        raise OverflowError
    return count


def _cheap_zero(expr):
    return sp.expand(expr) == 0 or sp.cancel(sp.together(expr)) == 0


def _proves_zero(expr):
    if sp.simplify(expr) == 0:
        return True
    if expr.is_algebraic and expr.is_number:
        x = sp.Dummy("x")
        return sp.minimal_polynomial(expr, x) == x
    return False


def _random_point(rng, symbols, positive, exact=False, digits=30):
    point = {}
    for symbol in symbols:
        sign = 1 if positive or rng.random() < 0.5 else -1
        if exact:
            denominator = rng.randint(3, 11)
            numerator = rng.randint(int(0.35 * denominator) + 1, int(2.65 * denominator))
            point[symbol] = sp.Rational(sign * numerator, denominator)
        else:
            point[symbol] = sp.Float(sign * rng.uniform(0.35, 2.65), digits)
    return point


EXACT_POINT_BITS = 400_000  # estimated size of the exact values at a rational point


def _safe_for_exact_points(expr):
    """Exact substitution is cheap unless the values get huge (x^{10^{10}}).

    ``(x-1)^{500}(x+1)^{500}`` at x = 7/3 is an exact rational of a few thousand bits: cheap,
    and exactly comparable with ``(x^2-1)^{500}`` there, whatever the size of the values.
    """
    try:
        return _exact_bits(expr) <= EXACT_POINT_BITS
    except OverflowError:
        return False


def _exact_bits(expr):
    """A rough upper estimate of the bits of ``expr`` evaluated exactly at a point like 17/7."""
    if isinstance(expr, p.HugePower):
        raise OverflowError
    if isinstance(expr, sp.Pow):
        exponent = expr.exp
        if exponent.is_Integer:
            factor = abs(int(exponent))
        elif exponent.is_Rational:
            factor = abs(int(exponent.p))
        else:
            factor = 64  # x^y, 2^x: the points are small, so the values stay modest
            if _exact_bits(exponent) > 64:
                raise OverflowError
        return max(factor, 1) * _exact_bits(expr.base) + 8
    if expr.is_Rational:
        return max(abs(expr.p).bit_length(), abs(expr.q).bit_length(), 1)
    if not expr.args:
        return 8  # a symbol at a point with small numerator and denominator
    return sum(_exact_bits(arg) for arg in expr.args) + 8


def _max_exponent(expr):
    """The largest numeric exponent in ``expr`` (1 if none): rounding error grows with it."""
    largest = 1
    for node in sp.preorder_traversal(expr):
        if isinstance(node, sp.Pow) and node.exp.is_number and node.exp.is_real:
            try:
                largest = max(largest, abs(int(node.exp)))
            except (TypeError, ValueError, OverflowError):
                continue
    return largest


def _values_at(x, y, difference, point, digits=30):
    """((exact or None, mpc), (exact or None, mpc), difference, scale) at ``point``.

    The difference comes as (value to ``digits + 20`` digits, size bound of its terms), or
    None; ``scale`` is the size of the terms of both answers there (for the tolerance near 0).
    """
    results = []
    scale = mpmath.mpf(0)
    for expr in (x, y):
        value = expr.xreplace(point)
        if value.is_Rational:
            results.append((value, to_mpc(value, digits)))
        else:
            results.append((None, to_mpc(value, digits)))
        size = attempt(0.05, _size_bound, value) if sp.count_ops(value) < 300 else None
        if size is None and results[-1][1] is not None:
            size = abs(results[-1][1])
        scale = max(scale, size or 0)
    if results[0][0] is not None and results[1][0] is not None:
        return results[0], results[1], None, scale
    at_point = difference.xreplace(point)
    value = to_mpc(at_point, digits + 20)
    bound = _size_bound(at_point) if sp.count_ops(at_point) < 300 else None
    if bound is not None and at_point.is_Float:
        # Floating-point values already collapsed into one rounded number: its size is no
        # measure of the rounding noise, the size of the two answers is.
        bound = max(bound, scale)
    return results[0], results[1], (value, bound) if value is not None and bound is not None else None, scale


DIFFERENCE_NOISE = mpmath.mpf(10) ** -35


def _agree_at_point(fx, fy, fd, tolerance, exact, scale=None):
    """Equal at a point: close values and, for exact answers, a difference that is only noise.

    The difference is compared with the size of the terms it is made of (not of the answers),
    so ``e^x (x+1)^{30}`` and the same plus ``10^{-40} e^x`` are told apart. Near zero the
    tolerance is relative to the size of the terms too, never a fixed absolute one, so
    ``1.50 \\cdot 10^{-25} x`` and ``1.60 \\cdot 10^{-25} x`` differ.
    """
    floor = tolerance * scale if scale else mpmath.mpf(10) ** -300
    if not close(fx, fy, tolerance, abs_tol=floor):
        return False
    if not exact or fd is None:
        return True
    value, bound = fd
    return abs(value) <= DIFFERENCE_NOISE * max(bound, mpmath.mpf(10) ** -300)


def _size_bound(expr):
    """An upper estimate of the magnitudes that meet in evaluating a numeric ``expr``."""
    if isinstance(expr, sp.Add):
        return mpmath.fsum(_size_bound(arg) for arg in expr.args)
    if isinstance(expr, sp.Mul):
        return mpmath.fprod(_size_bound(arg) for arg in expr.args)
    if isinstance(expr, sp.Pow) and expr.exp.is_Integer and expr.exp > 0:
        return _size_bound(expr.base) ** int(expr.exp)
    value = to_mpc(expr, 20)
    if value is None:
        raise ValueError("no value")
    return abs(value)


def _evaluate_at(expr, point):
    return to_mpc(expr.xreplace(point), 30)


def _value_and_scale(expr, point):
    value = to_mpc(expr.xreplace(point), 30)
    terms = sp.Add.make_args(sp.expand(expr)) if sp.count_ops(expr) < 200 else (expr,)
    scale = mpmath.mpf(0)
    for term in terms:
        term_value = to_mpc(term.xreplace(point), 30)
        if term_value is not None:
            scale = max(scale, abs(term_value))
    return value, scale


def _real_roots(expr, variable):
    poly = sp.Poly(expr, variable)
    if poly.degree() < 1 or poly.degree() > 8:
        return []
    roots = []
    for root in poly.nroots(n=30):
        if abs(sp.im(root)) < 1e-20:
            roots.append(sp.Float(sp.re(root), 30))
    return roots


def _interval_from_pair(answer):
    left, right = answer.value
    if left.kind != "number" or right.kind != "number":
        raise ClassifyError(M('interval ends must be numbers'))

    openness = answer.brackets == "()"
    return make_interval(left.value, right.value, openness, openness)


def _interval_link(left, op, right, variable):
    """``x op c`` or ``c op x`` with a constant c, straight to an interval."""
    if op == "!=":
        if left == variable and not _free_symbols(right):
            return sp.Complement(sp.S.Reals, sp.FiniteSet(right))
        if right == variable and not _free_symbols(left):
            return sp.Complement(sp.S.Reals, sp.FiniteSet(left))
        return None
    if left == variable and not _free_symbols(right):
        value, flipped = right, op
    elif right == variable and not _free_symbols(left):
        value, flipped = left, {"<": ">", ">": "<", "<=": ">=", ">=": "<="}[op]
    else:
        return None
    if value in (sp.oo, -sp.oo) or not value.is_real:
        return None
    return {
        "<": sp.Interval.open(-sp.oo, value), "<=": sp.Interval(-sp.oo, value),
        ">": sp.Interval.open(value, sp.oo), ">=": sp.Interval(value, sp.oo),
    }[flipped]


def _relational(left, op, right):
    builder = {"<": sp.Lt, "<=": sp.Le, ">": sp.Gt, ">=": sp.Ge, "!=": sp.Ne}[op]
    return builder(left, right)


def _positive_form(left, op, right):
    """``left op right`` as ``f > 0`` / ``f >= 0``: returns (f, strict)."""
    if op in (">", ">="):
        return left - right, op == ">"
    return right - left, op == "<"


def _numeric_set(value):
    return not value.free_symbols


def _set_text(value):

    text = set_text(value)
    return text if len(text) < 120 else text[:117] + "..."


def _items(answer):
    if answer.kind in ("list", "set_literal"):
        return answer.value
    if answer.kind == "set" and isinstance(answer.value, sp.FiniteSet):
        return [Answer("number", v) if not _free_symbols(v) else Answer("expression", v) for v in answer.value.args]
    return None


def _perfect_matching(table):
    n = len(table)
    if n <= 7:
        return any(all(table[i][perm[i]].equivalent is True for i in range(n)) for perm in permutations(range(n)))
    used = set()
    for row in table:
        match = next((j for j, cell in enumerate(row) if cell.equivalent is True and j not in used), None)
        if match is None:
            return False
        used.add(match)
    return True


def _conventional_order(keys):
    names = [str(k) for k in keys]
    runs = ("xyz", "abc", "mnp", "pq", "uv", "st")
    joined = "".join(names)
    return all(len(n) == 1 for n in names) and any(joined in run or run.startswith(joined) for run in runs) or all(
        n.split("_")[0] == names[0].split("_")[0] for n in names
    )
