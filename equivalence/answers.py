"""What kind of answer a parse is: a number, an expression, an equation, a set, a tuple...

:func:`classify` turns the parser's output into an :class:`Answer` whose ``kind`` drives the
comparison. Markers from the parser are resolved here: ``\\pm`` becomes two answers, a trailing
percent or degree sign becomes a number with a unit flag, a single decimal literal remembers
how precisely it was written.
"""
from dataclasses import dataclass, field

import sympy as sp

from . import families
from . import parser as p
from .messages import M

EMPTY_WORDS = {
    "no solution", "no solutions", "no real solution", "no real solutions", "no real roots",
    "no real root", "none", "empty set", "empty", "无解", "无实数解", "无实根", "空集", "不存在实数解",
}
UNDEFINED_WORDS = {"dne", "does not exist", "undefined", "不存在", "无意义"}

KIND_NAMES = {
    "number": M("a number"), "expression": M("an expression"), "equation": M("an equation"),
    "inequality": M("an inequality"), "set": M("a set"), "tuple": M("a tuple"), "pair": M("a pair or interval"),
    "matrix": M("a matrix"), "list": M("several answers"), "relation_symbol": M("a relation symbol"),
    "choice": M("an option letter"), "text": M("text"), "system": M("a system of assignments"),
    "family": M("a solution family (one piece per integer k)"),
    "piecewise": M("a piecewise answer"), "labelled": M("a labelled answer"), "polar": M("a yes/no answer in words"),
    "set_literal": M("a set"), "compound": M("an inequality"), "membership": M("a membership"),
}


@dataclass
class Answer:
    """One classified answer.

    ``value`` depends on ``kind``: a SymPy expression (number, expression), a list of Answers
    (tuple, list, pair, matrix rows flattened with ``shape``), a SymPy Set (set), a
    :class:`Relation`-like triple (equation, inequality), a string (text, choice, relation_symbol).
    """

    kind: str
    value: object
    decimal: object = None  # DecimalLiteral scaled to the answer's value
    unit: str = ""  # "percent" or "degree" when written with that sign
    shape: tuple = ()
    brackets: str = ""
    exact: bool = True  # False when any decimal literal is involved
    digits: int = 0  # fewest significant digits among decimal literals
    conditions: list = field(default_factory=list)  # e.g. k in Z
    head: object = None  # equations like x = 3 or f(x) = 2x: what is being given (x, f(x))
    rhs: object = None  # ... and the given value as an Answer
    symbol: str = ""  # for an option letter: the relation written after it

    @property
    def kind_name(self):
        return KIND_NAMES.get(self.kind, self.kind)


class ClassifyError(ValueError):
    """The parse is well formed but not an answer this engine compares."""


def classify(parsed, params=None):
    """Turn a :class:`parser.Parsed` into an :class:`Answer`.

    ``params`` are the letters that stand for any integer (default: those the answer declares,
    "k \\in \\mathbb{Z}"); an answer that uses one is a solution family (kind ``family``).
    """
    params = frozenset(parsed.integer_params if params is None else params)
    context = _Context(parsed.decimals, params)
    answer = context.answer(parsed.value)
    if not params:
        return answer
    try:
        family = families.family_of(answer, params)
    except families.NotFamily as exc:
        raise ClassifyError(M('a solution family in a form not read here: {exc}', exc=exc)) from exc
    if family is None:
        return answer
    return context.make("family", family)


class _Context:
    def __init__(self, decimals, params=frozenset()):
        self.decimals = decimals
        self.digits = min((d.digits for d in decimals), default=0)
        self.exact = not decimals
        self.params = params

    def make(self, kind, value, **extra):
        extra.setdefault("exact", self.exact)
        extra.setdefault("digits", self.digits)
        return Answer(kind, value, **extra)

    def answer(self, value):
        if isinstance(value, sp.Basic) and not isinstance(value, sp.Set):
            return self.expression(value)
        if isinstance(value, p.Relation):
            return self.relation(value)
        if isinstance(value, p.Bracket):
            return self.bracket(value)
        if isinstance(value, p.SetLiteral):
            return self.make("set_literal", [self.answer(item) for item in value.items])
        if isinstance(value, (p.NamedSet, p.SetOperation, p.SetBuilder)):
            return self.make("set", self.to_set(value))
        if isinstance(value, p.MatrixLiteral):
            return self.matrix(value.rows)
        if isinstance(value, p.RelationSymbol):
            return self.make("relation_symbol", value.op)
        if isinstance(value, p.Choice):
            return self.make("choice", value.letter, symbol=value.symbol)
        if isinstance(value, p.Text):
            return self.text(value.text)
        if isinstance(value, p.ItemList):
            return self.item_list(value)
        raise ClassifyError(M('cannot compare {type_value___name}', type_value___name=type(value).__name__))

    # --- expressions -------------------------------------------------------------------------
    def expression(self, expr):
        if expr.has(p.PM):
            plus = expr.xreplace({p.PM: sp.Integer(1)})
            minus = expr.xreplace({p.PM: sp.Integer(-1)})
            if plus == minus:
                return self.expression(plus)
            return self.make("list", [self.expression(plus), self.expression(minus)], brackets="pm")
        unit = ""
        for marker, name in ((p.PERCENT, "percent"), (p.DEGREE, "degree")):
            if expr.has(marker):
                coefficient = sp.cancel(expr / marker)
                if not coefficient.has(marker) and coefficient.is_number:
                    expr, unit = coefficient, name
                else:
                    expr = expr.xreplace({marker: sp.Rational(1, 100) if name == "percent" else sp.pi / 180})
        if expr.has(sp.zoo, sp.nan):
            raise ClassifyError(M('the answer is undefined (division by zero)'))
        vector = self._unit_vectors(expr)
        if vector is not None:
            return vector
        kind = "number" if not _free_symbols(expr) else "expression"
        return self.make(kind, expr, unit=unit, decimal=self._single_decimal(expr))

    def _unit_vectors(self, expr):
        """``\\vec i + 2\\vec j`` is the vector (1, 2); with ``\\vec k`` it has three entries."""
        symbols = _free_symbols(expr)
        basis = [sp.Symbol("vec_" + name, real=True) for name in "ijk"]
        if not symbols or not symbols <= set(basis):
            return None
        size = 3 if basis[2] in symbols else 2
        try:
            poly = sp.Poly(expr, *basis[:size])
        except sp.PolynomialError:
            return None
        if poly.total_degree() != 1 or poly.coeff_monomial(1) != 0:
            return None
        entries = [poly.coeff_monomial(unit) for unit in basis[:size]]
        return self.make("tuple", [self.make("number", entry, decimal=self._single_decimal(entry)) for entry in entries], brackets="()")

    def _single_decimal(self, expr):
        """The decimal literal that alone makes up this number (``-0.333``, ``1.5 \\times 10^3``)."""
        if not self.decimals or not expr.is_number:
            return None
        if len(self.decimals) > 1:
            # Entries of a tuple or matrix: the decimal written as this very entry, if any.
            matching = {(d.value, d.ulp, d.digits) for d in self.decimals if d.value == expr or d.value == -expr}
            if len(matching) != 1:
                return None
            value, ulp, digits = matching.pop()
            return p.DecimalLiteral(value=expr, ulp=ulp, digits=digits)
        literal = self.decimals[0]
        if literal.value == 0:
            return literal if expr == 0 else None
        scale = expr / literal.value
        if not scale.is_Rational or scale == 0:
            return None
        return p.DecimalLiteral(value=expr, ulp=abs(literal.ulp * scale), digits=literal.digits)

    # --- relations ----------------------------------------------------------------------------
    def relation(self, relation):
        ops, operands = relation.ops, relation.operands
        if all(op in ("=", "approx") for op in ops):
            if len(operands) > 2:
                # "S = \frac12 ab = 6": the last member is the value.
                operands = [operands[0], operands[-1]]
            return self.equation(*operands)
        if len(ops) == 1 and ops[0] in ("in", "notin", "subset"):
            member, collection = operands
            target = self.answer(collection)
            if ops[0] == "in" and isinstance(member, sp.Symbol):
                target.conditions = []
                return self.make("membership", (member, target))
            raise ClassifyError(M('unsupported set relation'))
        if all(op in ("<", "<=", ">", ">=", "!=") for op in ops):
            sides = [self.side(op) for op in operands]
            return self.make("inequality", (sides, list(ops)))
        raise ClassifyError(M('mixed relation chain'))

    def equation(self, left, right):
        head = _assignment_head(left, right)
        rhs = self.answer(right) if head is not None else None
        try:
            sides = (self.side(left), self.side(right))
        except ClassifyError:
            if head is None:
                raise
            sides = None
        return self.make("equation", sides, head=head, rhs=rhs)

    def side(self, value):
        if isinstance(value, sp.Basic) and not isinstance(value, sp.Set):
            expr = value
            for marker, replacement in ((p.PERCENT, sp.Rational(1, 100)), (p.DEGREE, sp.pi / 180)):
                expr = expr.xreplace({marker: replacement})
            if expr.has(p.PM):
                raise ClassifyError(M('\\pm inside a relation'))
            return expr
        raise ClassifyError(M('a relation side must be an expression'))

    # --- brackets, sets, matrices --------------------------------------------------------------
    def bracket(self, bracket):
        items = bracket.items
        if bracket.left + bracket.right == "[]" and all(isinstance(i, p.Bracket) and i.left + i.right == "[]" for i in items):
            rows = [row.items for row in items]
            if len(rows) > 1 and all(len(r) == len(rows[0]) for r in rows):
                return self.matrix(rows)
        answers = [self.answer(item) for item in items]
        shape = bracket.left + bracket.right
        if len(items) == 2 and (shape in ("()", "[]") or self._uses_params(answers)):
            return self.make("pair", answers, brackets=shape)  # (k\pi, k\pi + 1]: a family, read later
        if len(items) == 2:
            return self.make("set", self.interval(answers, shape), brackets=shape)
        if shape not in ("()", "[]"):
            raise ClassifyError(M('a tuple written {shape_0}...{shape_1}', shape_0=shape[0], shape_1=shape[1]))
        return self.make("tuple", answers, brackets=shape)

    def _uses_params(self, answers):
        return bool(self.params) and any(
            a.kind in ("number", "expression") and any(s.name in self.params for s in a.value.free_symbols) for a in answers
        )

    def interval(self, answers, shape):
        left, right = answers
        if left.kind != "number" or right.kind != "number":
            raise ClassifyError(M('interval ends must be numbers'))
        left_open = shape[0] in "(]"
        right_open = shape[1] in ")["
        return make_interval(left.value, right.value, left_open, right_open)

    def to_set(self, value):
        if isinstance(value, p.NamedSet):
            return value.value
        if isinstance(value, p.SetOperation):
            left, right = self.to_set(value.left), self.to_set(value.right)
            if value.op == "union":
                return sp.Union(left, right)
            if value.op == "intersection":
                return sp.Intersection(left, right)
            return sp.Complement(left, right)
        if isinstance(value, p.Bracket):
            if len(value.items) != 2:
                raise ClassifyError(M('only intervals can be combined with set operations'))
            answers = [self.answer(item) for item in value.items]
            return self.interval(answers, value.left + value.right)
        if isinstance(value, p.SetLiteral):
            answers = [self.answer(item) for item in value.items]
            if not all(a.kind == "number" for a in answers):
                raise ClassifyError(M('set elements must be numbers here'))
            return sp.FiniteSet(*[a.value for a in answers])
        if isinstance(value, p.SetBuilder):
            return self.set_builder(value)
        raise ClassifyError(M('not a set'))

    def set_builder(self, builder):
        variable = builder.variable
        if isinstance(variable, p.Relation) and variable.ops == ["in"] and isinstance(variable.operands[0], sp.Symbol):
            domain = self.to_set(variable.operands[1])
            variable = variable.operands[0]
        else:
            domain = sp.S.Reals
        if not isinstance(variable, sp.Symbol):
            raise ClassifyError(M('set-builder variable must be a symbol'))
        condition = self.answer(builder.condition)
        return ("builder", variable, condition, domain)

    def matrix(self, rows):
        cells = [[self.answer(cell) for cell in row] for row in rows]
        if any(c.kind not in ("number", "expression") for row in cells for c in row):
            raise ClassifyError(M('matrix entries must be numbers or expressions'))
        return self.make("matrix", [c for row in cells for c in row], shape=(len(rows), len(rows[0])))

    # --- text and lists ----------------------------------------------------------------------------
    def text(self, text):
        canonical = " ".join(text.lower().split())
        if canonical in EMPTY_WORDS:
            return self.make("set", sp.S.EmptySet)
        if canonical in UNDEFINED_WORDS:
            return self.make("text", "undefined")
        return self.make("text", canonical)

    def item_list(self, item_list):
        items, conditions = [], []
        for item in item_list.items:
            if _is_domain_condition(item):
                conditions.append(item)
                continue
            items.append(item)
        if not items:
            raise ClassifyError(M('only conditions, no answer'))
        answers = [self.answer(item) for item in items]
        joiners = set(item_list.joiners)
        if len(answers) == 1:
            result = answers[0]
        else:
            result = self._combine(answers, joiners)
        result.conditions = conditions
        if result.rhs is not None:
            result.rhs.conditions = conditions
        return result

    def _combine(self, answers, joiners):
        heads = [a.head for a in answers]
        if all(h is not None for h in heads):
            if len({_base_name(h) for h in heads}) == 1:
                # x = 1 or x = 2; x_1 = 1, x_2 = 2: the answers are the values.
                return self.make("list", [a.rhs for a in answers], brackets="values")
            if len(set(heads)) == len(heads):
                return self.make("system", {h: a.rhs for h, a in zip(heads, answers)})
        if heads[0] is not None and all(a.kind in ("number", "expression") for a in answers[1:]):
            # x = 1, 2, 3
            return self.make("list", [answers[0].rhs] + answers[1:], brackets="values")
        set_like = ("inequality", "set", "membership")
        if all(a.kind in set_like for a in answers) and joiners and joiners <= {"or", "and"}:
            return self.make("compound", (answers, "or" if joiners == {"or"} else "and" if joiners == {"and"} else "mixed"))
        return self.make("list", answers, brackets="comma")


def make_interval(left, right, left_open, right_open):
    """A SymPy interval; an infinite end must be written open."""
    if left == sp.oo or right == -sp.oo:
        raise ClassifyError(M('interval with ends in the wrong order'))
    if (left == -sp.oo and not left_open) or (right == sp.oo and not right_open):
        raise ClassifyError(M('an infinite end of an interval must be open'))
    comparison = sp.Gt(left, right) if left.is_number and right.is_number else None
    if comparison is sp.true:
        raise ClassifyError(M('interval with ends in the wrong order'))
    return sp.Interval(left, right, left_open or left == -sp.oo, right_open or right == sp.oo)


def _free_symbols(expr):
    return {s for s in expr.free_symbols if not s.name.startswith("%")}


def _is_domain_condition(item):
    """``k \\in \\mathbb{Z}`` after a periodic answer describes the parameter, not the answer."""
    return (
        isinstance(item, p.Relation) and item.ops == ["in"] and isinstance(item.operands[0], sp.Symbol)
        and isinstance(item.operands[1], p.NamedSet)
        and item.operands[1].value in (sp.S.Integers, sp.S.Naturals, sp.S.Naturals0)
    )


def _assignment_head(left, right):
    """``x`` for ``x = 3``, ``f(x)`` for ``f(x) = 2x``: the left side names what is given."""
    if not isinstance(left, sp.Basic):
        return None
    right_symbols = right.free_symbols if isinstance(right, sp.Basic) else set()
    if isinstance(left, sp.Symbol) and not left.name.startswith("%") and left not in right_symbols:
        return left
    if isinstance(left, sp.Function) and isinstance(left.func, sp.core.function.UndefinedFunction):
        return left
    return None


def _base_name(head):
    if isinstance(head, sp.Symbol):
        return head.name.split("_")[0]
    return str(head.func)
