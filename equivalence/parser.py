"""Recursive-descent parser: answer tokens to SymPy objects and answer structures.

SymPy objects are built by calling constructors (``sympy.Add``, ``sympy.sin``...) on tokens the
parser has already understood; the answer text itself never reaches ``eval``, ``sympify`` or
``parse_expr``. Arithmetic that could explode (``10^{10^{10}}``, ``100000!``) is left
unevaluated so that building the expression is always cheap.
"""
import math
import re
from dataclasses import dataclass, field

import mpmath
import sympy as sp

from .declarations import strip_declarations
from .lexer import LexError, Token, tokenize
from .messages import M
from .normalize import join_thousands, normalize

# Markers the lexer can never produce as names (they contain "%").
PM = sp.Symbol("%pm", real=True)  # the sign in a \pm b; expanded into two answers later
PERCENT = sp.Symbol("%percent", positive=True)  # 50\% = 50 * PERCENT
DEGREE = sp.Symbol("%degree", positive=True)  # 30^\circ = 30 * DEGREE

MAX_POWER_BITS = 200_000  # larger exact powers stay unevaluated
MAX_FACTORIAL = 3000
MAX_DECIMAL_EXPONENT = 400
MAX_NESTING = 60
MAX_EVALF_EXPONENT_BITS = 4096
MAX_DROPPED_WORDS = 4
NEGATIONS = {
    "no", "not", "none", "never", "wrong", "incorrect", "false", "impossible", "undefined", "dne",
    "except", "unless", "but", "or", "neither", "nor", "isn't", "cannot", "invalid", "rejected",
}
CJK_NEGATIONS = ("不", "非", "无", "没", "舍", "否", "错")


class ParseError(ValueError):
    """The answer is not something this parser understands."""


class HugePower(sp.Function):
    """``base^exponent`` too large to compute exactly (``10^{10^{10}}``).

    An opaque function rather than an unevaluated ``Pow``: SymPy's ``Add`` and ``Mul``
    re-evaluate numeric powers they meet, which would compute the number after all. It has a
    numeric value (mpmath copes with huge exponents) and compares structurally.
    """

    nargs = 2

    @classmethod
    def eval(cls, base, exponent):
        return None

    def _eval_is_positive(self):
        return self.args[0].is_positive

    def _eval_is_real(self):
        base, exponent = self.args
        return True if base.is_positive and exponent.is_real else None

    def _eval_is_finite(self):
        return True

    def _eval_evalf(self, prec):
        base, exponent = self.args
        if _has_huge(base) or _has_huge(exponent):
            return None  # a tower: not even its number of digits fits in memory
        base_value = base.evalf(prec + 30)
        exponent_value = exponent.evalf(40)
        if not (base_value.is_Number and exponent_value.is_Number):
            return None
        extra = int(abs(exponent_value) + 1).bit_length()
        if extra > MAX_EVALF_EXPONENT_BITS:
            return None
        work = prec + extra + 30
        with mpmath.workprec(work):
            result = mpmath.power(
                mpmath.mpf(sp.Float(base_value, 0)._mpf_) if not base.is_Integer else mpmath.mpf(int(base)),
                mpmath.mpf(int(exponent)) if exponent.is_Integer else mpmath.mpf(sp.Float(exponent.evalf(work // 3), 0)._mpf_),
            )
        return sp.Float._new(result._mpf_, prec)

    def _sympystr(self, printer):
        return f"({printer._print(self.args[0])})**({printer._print(self.args[1])})"

    def _latex(self, printer):
        return f"{{{printer._print(self.args[0])}}}^{{{printer._print(self.args[1])}}}"


@dataclass(frozen=True)
class DecimalLiteral:
    """A written decimal number: its exact value, its last written place and significant digits."""

    value: sp.Rational
    ulp: sp.Rational
    digits: int


# --- answer structures (anything that is not a plain SymPy expression) ------------------------

@dataclass
class Bracket:
    """``(a, b)``, ``[a, b)``, ``(a, b, c)``: an interval or a tuple, decided by comparison."""

    left: str
    items: list
    right: str


@dataclass
class SetLiteral:
    items: list


@dataclass
class SetBuilder:
    variable: object
    condition: object


@dataclass
class MatrixLiteral:
    rows: list


@dataclass
class Relation:
    """A chain ``a op b op c``; ops are among = < > <= >= != in notin subset approx."""

    operands: list
    ops: list


@dataclass
class SetOperation:
    op: str  # union, intersection, difference
    left: object
    right: object


@dataclass
class NamedSet:
    value: sp.Set


@dataclass
class RelationSymbol:
    op: str


@dataclass
class Choice:
    letter: str
    symbol: str = ""  # the relation written after the letter, if any: (B) $\geq$


@dataclass
class Text:
    text: str


@dataclass
class ItemList:
    items: list
    joiners: list  # "comma", "or", "and" between consecutive items


@dataclass
class Parsed:
    value: object
    decimals: list = field(default_factory=list)
    dropped: list = field(default_factory=list)  # words ignored
    units: list = field(default_factory=list)  # units written after values ("cm", "元")
    source: str = ""
    integer_params: frozenset = frozenset()  # letters declared integers ("k" of "k \in \mathbb{Z}")


RELATION_OPS = {
    "=": "=", "<": "<", ">": ">", "<=": "<=", ">=": ">=", "!=": "!=",
    r"\le": "<=", r"\ge": ">=", r"\ne": "!=", r"\approx": "approx", r"\in": "in",
    r"\notin": "notin", r"\subset": "subset", r"\subseteq": "subset", r"\equiv": "=",
    r"\sim": "approx", r"\doteq": "approx",
}
RELATION_SYMBOL_CANON = {
    "<=": "<=", ">=": ">=", "=": "=", "<": "<", ">": ">", "!=": "!=",
}

GREEK = {
    "alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "zeta", "eta", "theta",
    "vartheta", "iota", "kappa", "lambda", "mu", "nu", "xi", "rho", "varrho", "sigma",
    "tau", "upsilon", "phi", "varphi", "chi", "psi", "omega", "Gamma", "Delta", "Theta",
    "Lambda", "Xi", "Sigma", "Upsilon", "Phi", "Psi", "Omega",
}
NAMED_SETS = {
    r"\mathbb{R}": sp.S.Reals, r"\mathbb{Z}": sp.S.Integers, r"\mathbb{N}": sp.S.Naturals0,
    r"\mathbb{Q}": sp.S.Rationals, r"\mathbb{C}": sp.S.Complexes, r"\mathbb{N}^*": sp.S.Naturals,
    r"\mathbb{N}_+": sp.S.Naturals, r"\mathbb{Z}^+": sp.S.Naturals, r"\mathbb{R}^+": sp.Interval.open(0, sp.oo),
}

_UNARY_FUNCTIONS = {
    "sin": sp.sin, "cos": sp.cos, "tan": sp.tan, "cot": sp.cot, "sec": sp.sec, "csc": sp.csc,
    "arcsin": sp.asin, "arccos": sp.acos, "arctan": sp.atan, "arccot": sp.acot,
    "asin": sp.asin, "acos": sp.acos, "atan": sp.atan, "sinh": sp.sinh, "cosh": sp.cosh,
    "tanh": sp.tanh, "ln": sp.log, "exp": sp.exp, "sqrt": sp.sqrt, "abs": sp.Abs,
    "floor": sp.floor, "ceil": sp.ceiling, "cbrt": sp.cbrt,
    "lg": lambda x: sp.log(x, 10), "sgn": sp.sign,
}
_INVERSE = {"sin": sp.asin, "cos": sp.acos, "tan": sp.atan, "cot": sp.acot}
_VARIADIC_FUNCTIONS = {"max": sp.Max, "min": sp.Min, "gcd": sp.gcd, "lcm": sp.lcm}
FUNCTION_NAMES = set(_UNARY_FUNCTIONS) | set(_VARIADIC_FUNCTIONS) | {"log", "det"}
_TRIG_LIKE = {"sin", "cos", "tan", "cot", "sec", "csc", "sinh", "cosh", "tanh", "ln", "log", "lg", "exp"}

_SEPARATOR_WORDS = {"or": "or", "and": "and"}
_SUBSCRIPT_I = re.compile(r"_\s*\{?\s*[^}]*\bi\b|\\(?:sum|prod)_\{?\s*i\b|\bfor\s+i\b")


def parse_answer(text):
    """Parse one answer string into a :class:`Parsed` (raises :class:`ParseError`)."""
    normal = normalize(text)
    if not normal:
        raise ParseError(M('empty answer'))
    stripped = normal.lstrip()
    if stripped[:1] not in "([{\\]" or stripped.startswith("\\frac"):
        normal = join_thousands(normal)
    try:
        tokens = tokenize(normal)
    except LexError as exc:
        raise ParseError(str(exc)) from exc
    imaginary_i = not _SUBSCRIPT_I.search(normal)
    stripped, params = strip_declarations(tokens)
    if params:
        # "..., k \in \mathbb{Z}" names an integer parameter; if the answer does not read
        # without it, the declaration was part of the answer after all.
        try:
            return _parse_tokens(stripped, imaginary_i, normal, params)
        except ParseError:
            pass
    return _parse_tokens(tokens, imaginary_i, normal, set())


def _parse_tokens(tokens, imaginary_i, normal, params):
    parser = _Parser(tokens, imaginary_i=imaginary_i)
    try:
        value = parser.answer()
    except RecursionError as exc:
        raise ParseError(M('answer is nested too deeply')) from exc
    except (TypeError, AttributeError, ValueError, ZeroDivisionError, NotImplementedError) as exc:
        if isinstance(exc, ParseError):
            raise
        raise ParseError(M('cannot build this expression ({type_exc___name})', type_exc___name=type(exc).__name__)) from exc
    return Parsed(value=value, decimals=parser.decimals, dropped=parser.dropped, units=parser.units, source=normal,
                  integer_params=frozenset(params))


class _Parser:
    def __init__(self, tokens, imaginary_i=True):
        self.tokens = tokens
        self.i = 0
        self.imaginary_i = imaginary_i
        self.decimals = []
        self.dropped = []
        self.units = []
        self.bar_depth = 0  # inside |...| or a set-builder head a bar closes instead of opening
        self.depth = 0
        self.french_interval = 0  # inside ]a, b[ a "[" closes instead of opening

    # --- token helpers ---------------------------------------------------------------------
    @property
    def tok(self):
        return self.tokens[self.i]

    def peek(self, k=1):
        return self.tokens[min(self.i + k, len(self.tokens) - 1)]

    def advance(self):
        token = self.tokens[self.i]
        if token.kind != "eof":
            self.i += 1
        return token

    def expect_op(self, *values):
        if not self.tok.is_op(*values):
            raise ParseError(M('expected {or_join_values} near {self_tok_value_or_the_en}', or_join_values=' or '.join(values), self_tok_value_or_the_en=repr(self.tok.value or 'the end')))
        return self.advance()

    def expect_cmd(self, value):
        if not self.tok.is_cmd(value):
            raise ParseError(M('expected {value}', value=value))
        return self.advance()

    # --- top level ----------------------------------------------------------------------------
    def answer(self):
        whole = self._whole_answer_shortcut()
        if whole is not None:
            return whole
        items, joiners = [], []
        items.append(self.item())
        while True:
            joiner = self._joiner()
            if joiner is None:
                break
            if self.tok.kind == "eof":
                break
            joiners.append(joiner)
            items.append(self.item())
        if self.tok.kind != "eof":
            raise ParseError(M('unexpected {self_tok_value}', self_tok_value=repr(self.tok.value)))
        items = [item for item in items if item is not None]
        if not items:
            raise ParseError(M('no mathematical content'))
        if len(items) == 1:
            return items[0]
        return ItemList(items, joiners[: len(items) - 1])

    def _whole_answer_shortcut(self):
        """Bare relation symbols (IneqMath relation answers) and option letters."""
        kinds = [t for t in self.tokens if t.kind != "eof"]
        values = [t.value for t in kinds]
        if len(kinds) == 1 and _relation_symbol(kinds[0]):
            return RelationSymbol(_relation_symbol(kinds[0]))
        letters = [t for t in kinds if t.kind == "ident" and t.value in "ABCDEF"]
        if len(letters) == 1 and len(kinds) >= 3 and values[:3] == ["(", letters[0].value, ")"]:
            rest = kinds[3:]
            if not rest or all(t.kind == "text" for t in rest):
                return Choice(letters[0].value)
            if len(rest) == 1 and _relation_symbol(rest[0]):
                return Choice(letters[0].value, _relation_symbol(rest[0]))
        return None

    def _joiner(self):
        token = self.tok
        if token.is_op(",", ";") or token.is_cmd("\\\\"):
            self.advance()
            if self.tok.kind == "word" and self.tok.value in _SEPARATOR_WORDS:
                return _SEPARATOR_WORDS[self.advance().value]
            return "comma"
        if token.kind == "word" and token.value in _SEPARATOR_WORDS:
            self.advance()
            return _SEPARATOR_WORDS[token.value]
        if token.is_cmd(r"\lor"):
            self.advance()
            return "or"
        if token.is_cmd(r"\land"):
            self.advance()
            return "and"
        return None

    def item(self):
        if self.tok.kind in ("text", "unit"):
            words = []
            while self.tok.kind in ("text", "unit"):
                words.append(self.advance().value)
            if self.tok.kind == "eof" or self._at_joiner():
                return Text(" ".join(words))
            self._drop_words(words)
        value = self.relation()
        self._skip_noise()
        return value

    def _drop_words(self, words):
        """Prose around an answer ("答案是", "apples") is ignored, but not a negation or a paragraph."""
        texts = list(words)
        if any(w.lower() in NEGATIONS or any(n in w for n in CJK_NEGATIONS) for w in texts):
            raise ParseError(M('the answer is qualified in words ({join_texts_40})', join_texts_40=" ".join(texts)[:40]))
        self.dropped.extend(texts)
        if len(self.dropped) > MAX_DROPPED_WORDS:
            raise ParseError(M('too much prose around the answer'))

    def _at_joiner(self):
        token = self.tok
        return token.is_op(",", ";") or token.is_cmd("\\\\", r"\lor", r"\land") or (
            token.kind == "word" and token.value in _SEPARATOR_WORDS
        )

    def _skip_noise(self):
        """Units and prose after a value ("5 cm", "3 元", "x = 2 (rejected)") are dropped."""
        while self.tok.kind in ("unit", "text"):
            if self.tok.kind == "text" and self.peek().kind not in ("eof",) and not self._text_is_trailing():
                break
            if self.tok.kind == "unit":
                self._skip_units()
                continue
            token = self.advance()
            self._drop_words([token.value])
            if self.tok.is_op("^") and self.peek().kind == "num":
                self.advance()
                self.advance()

    def _text_is_trailing(self):
        k = self.i
        while self.tokens[k].kind in ("text", "unit"):
            k += 1
        nxt = self.tokens[k]
        return nxt.kind == "eof" or nxt.is_op(",", ";") or (nxt.kind == "word" and nxt.value in _SEPARATOR_WORDS)

    # --- relations and sets ------------------------------------------------------------------
    def relation(self):
        operands = [self.set_expression()]
        ops = []
        while True:
            op = self._relation_op()
            if op is None:
                break
            ops.append(op)
            self._skip_units()
            operands.append(self.set_expression())
        if not ops:
            return operands[0]
        return Relation(operands, ops)

    def _relation_op(self):
        token = self.tok
        if token.kind == "op" and token.value in RELATION_OPS:
            self.advance()
            return RELATION_OPS[token.value]
        if token.kind == "cmd" and token.value in RELATION_OPS:
            self.advance()
            return RELATION_OPS[token.value]
        return None

    def set_expression(self):
        left = self.additive()
        while True:
            token = self.tok
            if token.is_cmd(r"\cup"):
                op = "union"
            elif token.is_cmd(r"\cap"):
                op = "intersection"
            elif token.is_cmd(r"\setminus", r"\backslash"):
                op = "difference"
            elif token.kind == "ident" and token.value == "U" and _is_set_like(left) and self.peek().is_op("(", "["):
                op = "union"
            else:
                return left
            self.advance()
            right = self.additive()
            left = SetOperation(op, left, right)

    # --- arithmetic ------------------------------------------------------------------------------
    def additive(self):
        left = self.term()
        while True:
            token = self.tok
            if token.is_op("+"):
                self.advance()
                left = _add(left, self.term())
            elif token.is_op("-"):
                self.advance()
                left = _add(left, _neg(self.term()))
            elif token.is_cmd(r"\pm"):
                self.advance()
                left = _add(left, _mul(PM, self.term()))
            elif token.is_cmd(r"\mp"):
                self.advance()
                left = _add(left, _mul(-PM, self.term()))
            else:
                return left

    def term(self):
        left = self.unary()
        while True:
            token = self.tok
            if token.is_op("*") or token.is_cmd(r"\times", r"\cdot", r"\ast"):
                self.advance()
                left = _mul(left, self.unary())
            elif token.is_op("/") or token.is_cmd(r"\div", r"\over"):
                self.advance()
                left = _div(left, self.unary())
            elif token.kind == "ident" and token.value == "U" and _is_set_like(left) and self.peek().is_op("(", "["):
                return left  # (1, 2) U (3, 4): a capital U typed for \cup
            elif self._starts_atom(token):
                mixed = self._mixed_fraction(left)
                if mixed is not None:
                    left = mixed
                    continue
                if token.kind == "num" and self.tokens[self.i - 1].kind == "num":
                    raise ParseError(M('two numbers side by side (a mixed number like 2 1/2 or a missing operator?)'))
                left = _mul(left, self.power())
            else:
                return left

    def unary(self):
        token = self.tok
        if token.is_op("-"):
            self.advance()
            return _neg(self.unary())
        if token.is_op("+"):
            self.advance()
            return self.unary()
        if token.is_cmd(r"\pm"):
            self.advance()
            return _mul(PM, self.unary())
        if token.is_cmd(r"\mp"):
            self.advance()
            return _mul(-PM, self.unary())
        return self.power()

    def power(self):
        base = self.postfix()
        if self.tok.is_op("^"):
            self.advance()
            if isinstance(base, (MatrixLiteral, Bracket)) and self._transpose_mark():
                return self._postfix_ops(_transpose(base))
            exponent = self.exponent()
            base = _pow(base, exponent)
            base = self._postfix_ops(base)
        return base

    def _transpose_mark(self):
        """``^T``, ``^{T}``, ``^\\top``, ``^{\\mathsf{T}}``, ``^\\intercal`` after a matrix or vector."""
        k = self.i
        braced = self.tokens[k].is_op("{")
        if braced:
            k += 1
        token = self.tokens[k]
        if not (token.kind == "ident" and token.value == "T" or token.is_cmd(r"\top", r"\intercal")):
            return False
        k += 1
        if braced:
            if not self.tokens[k].is_op("}"):
                return False
            k += 1
        self.i = k
        return True

    def exponent(self):
        if self.tok.is_op("{"):
            return self.group()
        token = self.tok
        if token.is_op("-"):
            self.advance()
            return _neg(self.exponent())
        if token.is_op("+"):
            self.advance()
            return self.exponent()
        return self.power()

    def postfix(self):
        return self._postfix_ops(self.atom())

    def _postfix_ops(self, value):
        while True:
            token = self.tok
            if token.is_op("!") and not self.peek().is_op("="):
                self.advance()
                value = _factorial(value)
            elif token.is_cmd(r"\degree"):
                self.advance()
                value = _mul(value, DEGREE)
            elif token.is_cmd(r"\%"):
                self.advance()
                value = _mul(value, PERCENT)
            elif token.kind == "unit" and self._unit_follows_value():
                self._skip_units()
            elif token.is_op("_") and isinstance(value, sp.Symbol):
                self.advance()
                value = sp.Symbol(f"{value.name}_{self._subscript_text()}", real=True)
            elif token.is_op("'") and isinstance(value, sp.Symbol):
                self.advance()
                value = sp.Symbol(value.name + "'", real=True)
            else:
                return value

    def _subscript_text(self):
        """The subscript of ``a_{n+1}`` as canonical text (``n+1``)."""
        if self.tok.is_op("{"):
            self.advance()
            depth, parts = 1, []
            while True:
                token = self.advance()
                if token.kind == "eof":
                    raise ParseError(M('unclosed subscript'))
                if token.is_op("{"):
                    depth += 1
                elif token.is_op("}"):
                    depth -= 1
                    if depth == 0:
                        break
                parts.append(token.value)
            return "".join(parts)
        token = self.advance()
        if token.kind in ("num", "ident", "word") or token.kind == "cmd":
            text = token.value
            if token.kind == "num" and len(text) > 1 and text.isdigit():
                self.i -= 1
                self.tokens[self.i] = Token("num", text[1:], token.pos + 1)
                return text[0]
            return text
        raise ParseError(M('bad subscript'))

    def _unit_follows_value(self):
        nxt = self.peek()
        return not (nxt.kind in ("num", "ident") or nxt.is_op("("))

    def _skip_units(self):
        """Units after a value are recorded, not computed with: ``\\mathrm{m}/\\mathrm{s}^{2}`` is m/s^2."""
        while self.tok.kind == "unit":
            unit = self.advance().value + self._unit_power()
            while self.tok.is_op("/") and self.peek().kind == "unit":
                self.advance()
                unit += "/" + self.advance().value + self._unit_power()
            self.units.append(unit)

    def _unit_power(self):
        if not self.tok.is_op("^"):
            return ""
        nxt, after = self.peek(), self.peek(2)
        if nxt.kind == "num":
            self.advance()
            return "^" + self.advance().value
        if nxt.is_op("{") and after.kind == "num" and self.peek(3).is_op("}"):
            self.advance()
            self.advance()
            power = self.advance().value
            self.advance()
            return "^" + power
        return ""

    # --- atoms -----------------------------------------------------------------------------------
    def _starts_atom(self, token):
        if token.kind in ("num", "ident", "begin"):
            return True
        if token.kind == "word":
            return token.value not in _SEPARATOR_WORDS
        if token.kind == "op":
            if token.value == "|":
                return self.bar_depth == 0
            if token.value == "[":
                return self.french_interval == 0
            return token.value in ("(", "{")
        if token.kind == "cmd":
            return token.value in _ATOM_COMMANDS or token.value[1:] in GREEK or token.value in NAMED_SETS
        return False

    def atom(self):
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise ParseError(M('answer is nested too deeply'))
        try:
            return self._atom()
        finally:
            self.depth -= 1

    def _atom(self):
        token = self.tok
        if token.kind == "num":
            return self.number()
        if token.kind == "ident":
            return self.identifier()
        if token.kind == "word":
            return self.word()
        if token.kind == "cmd":
            return self.command()
        if token.kind == "begin":
            return self.environment()
        if token.is_op("("):
            self.advance()
            return self.bracket("(")
        if token.is_op("["):
            self.advance()
            return self.bracket("[")
        if token.is_op("]"):
            self.advance()
            return self.bracket("]")
        if token.is_op("{"):
            return self.brace_group()
        if token.is_op("|"):
            self.advance()
            self.bar_depth += 1
            inner = self.additive()
            self.bar_depth -= 1
            self.expect_op("|")
            if isinstance(inner, MatrixLiteral):
                return _determinant(inner)  # \\left|\\begin{array}...\\end{array}\\right|
            return sp.Abs(_expr(inner))
        if token.kind == "eof":
            raise ParseError(M('answer ends too early'))
        raise ParseError(M('unexpected {token_value}', token_value=repr(token.value)))

    def number(self):
        text = self.advance().value
        value, literal = _number_literal(text)
        if literal is not None:
            value = self._repeating_decimal(text, value, literal)
            if isinstance(value, DecimalLiteral):
                self.decimals.append(value)
                return value.value
        return value

    def _repeating_decimal(self, text, value, literal):
        """``0.\\overline{3}`` and ``0.\\dot{3}`` are exact repeating decimals."""
        if not self.tok.is_cmd(r"\overline", r"\dot", r"\bar") or "e" in text:
            return literal
        self.advance()
        digits = self._raw_group_digits()
        if self.tok.is_cmd(r"\dot"):
            self.advance()
            digits += self._raw_group_digits()
        if not digits:
            raise ParseError(M('empty repeating part'))
        places = len(text.split(".")[1]) if "." in text else 0
        repeat = sp.Rational(int(digits), (10 ** len(digits) - 1) * 10**places)
        return value + repeat

    def _raw_group_digits(self):
        if self.tok.is_op("{"):
            self.advance()
            digits = ""
            while self.tok.kind == "num":
                digits += self.advance().value
            self.expect_op("}")
        elif self.tok.kind == "num":
            digits = self.advance().value
        else:
            raise ParseError(M('expected digits'))
        if not digits.isdigit():
            raise ParseError(M('repeating part must be digits'))
        return digits

    def _mixed_fraction(self, left):
        """``2\\frac{1}{2}`` and ``2\\frac12`` are two and a half when both are integer literals."""
        if not self.tok.is_cmd(r"\frac"):
            return None
        previous = self.tokens[self.i - 1] if self.i else None
        before = self.tokens[self.i - 2] if self.i >= 2 else None
        if previous is None or previous.kind != "num" or not previous.value.isdigit():
            return None
        if before is not None and (before.kind in ("num", "ident") or before.is_op("^", "_", ")", "/")):
            return None
        parts = self._fraction_digits(self.i + 1)
        if parts is None:
            return None
        numerator, denominator, end = parts
        if denominator == 0:
            raise ParseError(M('division by zero'))
        self.i = end
        whole = sp.Integer(int(previous.value))
        fraction = sp.Rational(numerator, denominator)
        if not isinstance(left, sp.Integer) or left != whole:
            # "-2\frac12" parsed as -(2) so far: the fraction continues the same sign.
            if isinstance(left, sp.Integer) and left == -whole:
                return self._postfix_ops(left - fraction)
            return None
        return self._postfix_ops(whole + fraction)

    def _fraction_digits(self, k):
        """(numerator, denominator, next index) of ``{n}{d}``, ``{n}d``, ``n{d}`` or ``nd`` at ``k``."""
        tokens = self.tokens
        if k + 1 < len(tokens) and tokens[k].kind == "num" and len(tokens[k].value) == 2 and tokens[k].value.isdigit():
            return int(tokens[k].value[0]), int(tokens[k].value[1]), k + 1  # \frac12
        values = []
        for _ in range(2):
            if k + 2 < len(tokens) and tokens[k].is_op("{") and tokens[k + 1].kind == "num" and tokens[k + 2].is_op("}"):
                text, k = tokens[k + 1].value, k + 3
            elif k < len(tokens) and tokens[k].kind == "num" and len(tokens[k].value) == 1:
                text, k = tokens[k].value, k + 1
            else:
                return None
            if not text.isdigit():
                return None
            values.append(int(text))
        return values[0], values[1], k

    def identifier(self):
        name = self.advance().value
        primes = 0
        while self.tok.is_op("'"):
            self.advance()
            primes += 1
        if self.tok.is_op("(") and (name in "fghFGH" or primes) and not self.tok.is_op("["):
            self.advance()
            args = self._call_arguments()
            return sp.Function(name + "'" * primes)(*[_expr(a) for a in args])
        if primes:
            return sp.Symbol(name + "'" * primes, real=True)
        if name == "e":
            return sp.E
        if name == "i" and self.imaginary_i:
            return sp.I
        return sp.Symbol(name, real=True)

    def _call_arguments(self):
        args = [self.relation()]
        while self.tok.is_op(","):
            self.advance()
            args.append(self.relation())
        self.expect_op(")")
        return args

    def word(self):
        name = self.advance().value
        if name == "pi":
            return sp.pi
        if name in ("inf", "infty", "infinity", "oo"):
            return sp.oo
        if name == "emptyset":
            return NamedSet(sp.S.EmptySet)
        if name in FUNCTION_NAMES:
            return self.function(name)
        raise ParseError(M('unexpected word {name}', name=repr(name)))

    def command(self):
        token = self.advance()
        name = token.value
        bare = name[1:]
        if name == r"\frac":
            numerator = self._latex_argument(single_digit=True)
            denominator = self._latex_argument(single_digit=True)
            return _div(numerator, denominator)
        if name == r"\sqrt":
            return self.sqrt()
        if name == r"\binom":
            n = self._latex_argument(single_digit=True)
            k = self._latex_argument(single_digit=True)
            return _binomial(n, k)
        if name == r"\pi":
            return sp.pi
        if name == r"\infty":
            return sp.oo
        if name in (r"\sum", r"\prod"):
            return self.big_operator(name)
        if name == r"\emptyset":
            return NamedSet(sp.S.EmptySet)
        if name in NAMED_SETS:
            return self._named_set(name)
        if name == r"\{":
            return self.set_literal()
        if name in (r"\lfloor", r"\lceil"):
            inner = self.additive()
            closer = r"\rfloor" if name == r"\lfloor" else r"\rceil"
            self.expect_cmd(closer)
            return (sp.floor if name == r"\lfloor" else sp.ceiling)(_expr(inner))
        if name == r"\overline":
            raise ParseError(M('\\overline outside a repeating decimal'))
        if name in (r"\vec", r"\overrightarrow"):
            return sp.Symbol("vec_" + self._subscript_text(), real=True)  # \vec{a} = (1, 2)
        if bare in GREEK:
            canonical = {"varepsilon": "epsilon", "vartheta": "theta", "varphi": "phi", "varrho": "rho"}.get(bare, bare)
            return sp.Symbol(canonical, real=True)
        if bare in FUNCTION_NAMES or bare in ("arcsin", "arccos", "arctan"):
            return self.function(bare)
        if name == r"\exp":
            return self.function("exp")
        if name in (r"\operatorname",):
            raise ParseError(M('unknown operator'))
        raise ParseError(M('unsupported command {name}', name=name))

    def big_operator(self, name):
        """``\\sum_{k=1}^{n} k^2``, ``\\prod_{i=1}^{5} i``: evaluated in closed form by SymPy (within the
        check's time budget), the summand being the next factor(s) as for a function argument."""
        self.expect_op("_")
        self.expect_op("{")
        index = self.advance()
        if index.kind != "ident" or len(index.value) != 1:
            raise ParseError(M('{name} needs an index such as k = 1', name=name))
        self.expect_op("=")
        lower = _expr(self.additive())
        self.expect_op("}")
        self.expect_op("^")
        upper = _expr(self._latex_argument(single_digit=True))
        variable = sp.Symbol(index.value, real=True)
        body = _expr(self._function_argument())
        if any("_" in symbol.name and index.value in symbol.name.split("_", 1)[1] for symbol in body.free_symbols):
            raise ParseError(M('{name} over indexed unknowns (x_{index_value}) is not evaluated', name=name, index_value=index.value))
        if lower.free_symbols or (upper.is_number and upper != sp.oo and (not upper.is_integer or upper - lower > 10_000)):
            raise ParseError(M('{name} with these limits is not evaluated', name=name))
        operator = sp.Sum if name == r"\sum" else sp.Product
        value = operator(body, (variable, lower, upper)).doit()
        if value.has(sp.Sum, sp.Product):
            raise ParseError(M('{name} has no closed form here', name=name))
        return value

    def _named_set(self, name):
        value = NAMED_SETS[name]
        if self.tok.is_op("^") and self.peek().kind in ("op", "cmd") and self.peek().value in ("+", "*", "-"):
            self.advance()
            sign = self.advance().value
            if value is sp.S.Reals:
                value = sp.Interval.open(0, sp.oo) if sign != "-" else sp.Interval.open(-sp.oo, 0)
            elif value in (sp.S.Integers, sp.S.Naturals0):
                value = sp.S.Naturals if sign != "-" else sp.Range(-sp.oo, 0)
        elif self.tok.is_op("_") and self.peek().is_op("+"):
            self.advance()
            self.advance()
            value = sp.S.Naturals if value in (sp.S.Naturals0, sp.S.Integers) else sp.Interval.open(0, sp.oo)
        return NamedSet(value)

    def sqrt(self):
        index = None
        if self.tok.is_op("["):
            self.advance()
            index = self.additive()
            self.expect_op("]")
        radicand = self._latex_argument(single_digit=False)
        if index is None:
            return sp.sqrt(_expr(radicand))
        return _root(_expr(radicand), _expr(index))

    def _latex_argument(self, single_digit):
        """One LaTeX argument: ``{...}``, a single token, or (plain text) a parenthesised group."""
        token = self.tok
        if token.is_op("{"):
            return self.group()
        if token.kind == "num":
            text = token.value
            if single_digit and len(text) > 1 and text.isdigit():
                # \frac12 is \frac{1}{2}: LaTeX takes one character.
                self.tokens[self.i] = Token("num", text[1:], token.pos + 1)
                return sp.Integer(int(text[0]))
            return self.number()
        if token.is_op("("):
            self.advance()
            return self.bracket("(")
        if token.is_op("-"):
            self.advance()
            return _neg(self._latex_argument(single_digit))
        return self.postfix()

    def group(self):
        self.expect_op("{")
        if self.tok.is_op("}"):
            raise ParseError(M('empty group'))
        saved = self.bar_depth
        self.bar_depth = 0
        value = self.relation()
        self.bar_depth = saved
        self.expect_op("}")
        return value

    def brace_group(self):
        """``{...}`` groups in LaTeX; with commas inside it is a set written in plain text."""
        self.expect_op("{")
        return self._set_contents(lambda: self.tok.is_op("}"), lambda: self.expect_op("}"), (",",), one_is_a_group=True)

    def set_literal(self):
        return self._set_contents(lambda: self.tok.is_cmd(r"\}"), lambda: self.expect_cmd(r"\}"), (",", ";"),
                                  one_is_a_group=False)

    def _set_contents(self, at_close, close, separators, *, one_is_a_group):
        """What stands inside a set's braces, up to and with the closing one: nothing (the empty
        set), a set-builder, or items between `separators` (one item alone is a plain group when
        `one_is_a_group`, as ``{x}`` is in LaTeX)."""
        if at_close():
            self.advance()
            return NamedSet(sp.S.EmptySet)
        self.bar_depth += 1
        first = self.relation()
        self.bar_depth -= 1
        if self.tok.is_op("|", ":"):
            # {x | x > 1 且 x ≠ 2}: a set-builder (also typed without backslashes)
            self.advance()
            return SetBuilder(first, self._builder_conditions(close))
        items = [first]
        while self.tok.is_op(*separators):
            self.advance()
            items.append(self.relation())
        close()
        return items[0] if one_is_a_group and len(items) == 1 else SetLiteral(items)

    def _builder_conditions(self, close):
        """The conditions of a set-builder: ``x > 1, x \\ne 2``, ``x > 1 且 x ≠ 2``, ``x < 0 或 x > 2``."""
        saved = self.bar_depth
        self.bar_depth = 0
        conditions, joiners = [self.relation()], []
        while self.tok.is_op(",") or self.tok.kind == "word" and self.tok.value in ("and", "or"):
            joiner = "or" if self.tok.value == "or" else "and"
            self.advance()
            if self.tok.kind == "word" and self.tok.value in ("and", "or"):  # ", 且"
                joiner = "or" if self.tok.value == "or" else "and"
                self.advance()
            joiners.append(joiner)
            conditions.append(self.relation())
        self.bar_depth = saved
        close()
        return conditions[0] if len(conditions) == 1 else ItemList(conditions, joiners)

    def bracket(self, opener):
        saved = self.bar_depth
        self.bar_depth = 0
        if opener == "]":
            self.french_interval += 1
            try:
                return self._bracket(opener, saved)
            finally:
                self.french_interval -= 1
        return self._bracket(opener, saved)

    def _bracket(self, opener, saved):
        if self.tok.is_op(")") and opener == "(":
            raise ParseError(M('empty parentheses'))
        items = [self.relation()]
        while self.tok.is_op(",", ";"):
            self.advance()
            items.append(self.relation())
        self.bar_depth = saved
        closer = self.tok
        if not closer.is_op(")", "]", "["):
            raise ParseError(M('unclosed {opener}', opener=opener))
        self.advance()
        if len(items) == 1 and (opener, closer.value) in (("(", ")"), ("[", "]")):
            value = items[0]
            if opener == "[" and isinstance(value, Bracket):
                return Bracket("[", [value], "]")  # [[1,2],[3,4]] rows
            return value
        return Bracket(opener, items, closer.value)

    def environment(self):
        env = self.advance().value
        rows, row = [], []
        while True:
            if self.tok.kind == "end":
                if self.tok.value != env:
                    raise ParseError(M('\\begin{{{env}}} closed by \\end{{{self_tok_value}}}', env=env, self_tok_value=self.tok.value))
                self.advance()
                break
            if self.tok.kind == "eof":
                raise ParseError(M('unclosed \\begin{{{env}}}', env=env))
            if self.tok.is_op("&"):
                self.advance()
                continue
            if self.tok.is_cmd("\\\\"):
                self.advance()
                if row:
                    rows.append(row)
                row = []
                continue
            row.append(self.relation())
            if self.tok.kind == "text":
                self._skip_noise()
        if row:
            rows.append(row)
        if env == "cases":
            return ItemList([r[0] for r in rows], ["and"] * (len(rows) - 1))
        if env in ("vmatrix", "Vmatrix"):
            if not _rectangular(rows):
                raise ParseError(M('a determinant needs a square array'))
            return _determinant(MatrixLiteral(rows))
        if not rows or not _rectangular(rows):
            raise ParseError(M('matrix rows have different lengths'))
        return MatrixLiteral(rows)

    # --- functions --------------------------------------------------------------------------------
    def function(self, name):
        power = None
        base = None
        if name == "log" and self.tok.is_op("_"):
            self.advance()
            base = self._latex_argument(single_digit=True)
        if self.tok.is_op("^"):
            self.advance()
            power = self.exponent()
        if name == "log" and base is None and self.tok.is_op("_"):
            self.advance()
            base = self._latex_argument(single_digit=True)
        if name == "sqrt":
            return self._apply_power(sp.sqrt(_expr(self._function_argument())), power)
        if name in _VARIADIC_FUNCTIONS:
            args = self._variadic_arguments()
            return self._apply_power(_VARIADIC_FUNCTIONS[name](*[_expr(a) for a in args]), power)
        if name == "det":
            argument = self._function_argument()
            if not isinstance(argument, MatrixLiteral):
                raise ParseError(M('det needs a matrix'))
            return _determinant(argument)
        argument = _expr(self._function_argument())
        if power is not None and power == -1 and name in _INVERSE:
            return _INVERSE[name](argument)
        if name == "log":
            result = sp.log(argument) if base is None else _log(argument, _expr(base))
        else:
            result = _UNARY_FUNCTIONS[name](argument)
        return self._apply_power(result, power)

    @staticmethod
    def _apply_power(value, power):
        return value if power is None else _pow(value, power)

    def _function_argument(self):
        if self.tok.is_op("("):
            self.advance()
            value = self.bracket("(")
            return value
        if self.tok.is_op("{"):
            return self.group()
        # \sin 2x is sin(2x); \sin x \cos x is sin(x) cos(x); \sin x + 1 is sin(x) + 1.
        if self.tok.is_op("-"):
            self.advance()
            value = _neg(self.power())
        else:
            value = self.power()
        while self._starts_atom(self.tok) and not self._starts_function(self.tok) and not self.tok.is_op("("):
            value = _mul(value, self.power())
        return value

    def _variadic_arguments(self):
        if self.tok.is_op("("):
            self.advance()
            return self._call_arguments()
        if self.tok.is_op("{") or self.tok.is_cmd(r"\{"):
            latex = self.advance().kind == "cmd"  # \max\{a, b\} as well as max{a, b}
            args = [self.relation()]
            while self.tok.is_op(","):
                self.advance()
                args.append(self.relation())
            if latex:
                self.expect_cmd(r"\}")
            else:
                self.expect_op("}")
            return args
        raise ParseError(M('max/min need parentheses'))

    @staticmethod
    def _starts_function(token):
        if token.kind == "word":
            return token.value in FUNCTION_NAMES
        return token.kind == "cmd" and (token.value[1:] in FUNCTION_NAMES or token.value[1:] in ("arcsin", "arccos", "arctan"))


_ATOM_COMMANDS = {
    r"\frac", r"\sqrt", r"\binom", r"\pi", r"\infty", r"\emptyset", r"\{", r"\lfloor", r"\lceil",
    r"\exp", r"\ln", r"\log", r"\lg", r"\sin", r"\cos", r"\tan", r"\cot", r"\sec", r"\csc",
    r"\arcsin", r"\arccos", r"\arctan", r"\sinh", r"\cosh", r"\tanh", r"\max", r"\min",
    r"\gcd", r"\det", r"\vec", r"\overrightarrow",
}


# --- building blocks ------------------------------------------------------------------------------

def _relation_symbol(token):
    if token.kind == "op" and token.value in RELATION_SYMBOL_CANON:
        return RELATION_SYMBOL_CANON[token.value]
    if token.kind == "cmd" and token.value in (r"\le", r"\ge", r"\ne"):
        return RELATION_OPS[token.value]
    return None


def _number_literal(text):
    """Exact value of a written number, and its :class:`DecimalLiteral` if it has a decimal point."""
    mantissa, _, exponent_text = text.partition("e")
    exponent = int(exponent_text) if exponent_text else 0
    if abs(exponent) > MAX_DECIMAL_EXPONENT:
        raise ParseError(M('number out of range'))
    if len(mantissa) > 1000:
        raise ParseError(M('number has too many digits'))
    whole, _, fraction = mantissa.partition(".")
    if not whole and not fraction:
        raise ParseError(M('a lone decimal point'))
    digits = (whole + fraction).lstrip("0")
    value = sp.Rational(int(whole or "0") * 10 ** len(fraction) + int(fraction or "0"), 10 ** len(fraction))
    value = value * sp.Rational(10) ** exponent
    if "." not in mantissa and not exponent_text:
        return value, None
    significant = len(digits) if digits else 1
    ulp = sp.Rational(1, 10 ** len(fraction)) * sp.Rational(10) ** exponent
    return value, DecimalLiteral(value=value, ulp=ulp, digits=significant)


def _is_set_like(value):
    return isinstance(value, (Bracket, NamedSet, SetLiteral, SetOperation))


def _rectangular(rows):
    return bool(rows) and all(len(r) == len(rows[0]) for r in rows)


def _expr(value):
    if isinstance(value, sp.Basic) and not isinstance(value, (sp.Set, sp.logic.boolalg.Boolean)):
        return value
    if isinstance(value, (sp.Number, sp.Expr)):
        return value
    raise ParseError(M('expected a number or expression here'))


def _add(a, b):
    if isinstance(a, MatrixLiteral) or isinstance(b, MatrixLiteral):
        return _from_matrix(_to_matrix(a) + _to_matrix(b))
    return sp.Add(_expr(a), _expr(b))


def _neg(a):
    if isinstance(a, MatrixLiteral):
        return _scaled(a, sp.Integer(-1))
    return -_expr(a)


def _mul(a, b):
    if isinstance(a, MatrixLiteral) and isinstance(b, MatrixLiteral):
        return _from_matrix(_to_matrix(a) * _to_matrix(b))
    if isinstance(b, MatrixLiteral):
        return _scaled(b, _expr(a))  # 2\\begin{pmatrix}...\\end{pmatrix}, \\frac12 A
    if isinstance(a, MatrixLiteral):
        return _scaled(a, _expr(b))
    return sp.Mul(_expr(a), _expr(b))


def _div(a, b):
    if isinstance(a, MatrixLiteral):
        return _scaled(a, _div(1, b))
    a, b = _expr(a), _expr(b)
    if b == 0:
        raise ParseError(M('division by zero'))
    return sp.Mul(a, sp.Pow(b, -1))


MAX_MATRIX_SIDE = 8
MAX_MATRIX_POWER = 12


def _matrix_cells(matrix):
    cells = [[_expr(cell) for cell in row] for row in matrix.rows]
    if len(cells) > MAX_MATRIX_SIDE or len(cells[0]) > MAX_MATRIX_SIDE:
        raise ParseError(M('matrix too large to compute with'))
    return cells


def _to_matrix(value):
    if not isinstance(value, MatrixLiteral):
        raise ParseError(M('a matrix added to a number'))
    return sp.Matrix(_matrix_cells(value))


def _from_matrix(matrix):
    return MatrixLiteral([list(matrix.row(r)) for r in range(matrix.rows)])


def _scaled(matrix, factor):
    return MatrixLiteral([[sp.Mul(factor, cell) for cell in row] for row in _matrix_cells(matrix)])


def _transpose(value):
    if isinstance(value, Bracket):  # (1, 2)^T is a column
        if value.left + value.right not in ("()", "[]"):
            raise ParseError(M('transpose of an interval'))
        return MatrixLiteral([[_expr(item)] for item in value.items])
    return _from_matrix(_to_matrix(value).T)


def _determinant(value):
    matrix = _to_matrix(value)
    if not matrix.is_square:
        raise ParseError(M('a determinant needs a square array'))
    return matrix.det()


def _matrix_power(matrix, exponent):
    matrix = _to_matrix(matrix)
    if not (exponent.is_Integer and abs(exponent) <= MAX_MATRIX_POWER and matrix.is_square):
        raise ParseError(M('only small integer powers of square matrices are computed'))
    if exponent < 0:
        if matrix.det() == 0:
            raise ParseError(M('the matrix is not invertible'))
        matrix, exponent = matrix.inv(), -exponent
    return _from_matrix(matrix ** int(exponent))


def _pow(base, exponent):
    if isinstance(base, MatrixLiteral):
        return _matrix_power(base, _expr(exponent))
    base, exponent = _expr(base), _expr(exponent)
    if _power_is_huge(base, exponent):
        if base.is_Integer and base > 1:
            root, power = sp.perfect_power(int(base)) or (int(base), 1)
            base, exponent = sp.Integer(root), exponent * power
        if base.is_number and base.is_negative and exponent.is_Integer:
            sign = -1 if exponent % 2 else 1
            return sign * HugePower(-base, exponent)
        if base.is_positive:
            return HugePower(base, exponent)
        raise ParseError(M('power too large to evaluate'))
    if base == 0 and exponent.is_negative:
        raise ParseError(M('division by zero'))
    return sp.Pow(base, exponent)


def _power_is_huge(base, exponent):
    if _has_huge(base) or _has_huge(exponent):
        return True
    if not exponent.is_number or not base.is_number or not exponent.is_Rational:
        return False
    if base in (0, 1, -1):
        return False
    if abs(exponent) > 10**7:
        return True
    size = _magnitude_bits(base)
    return size * abs(float(exponent)) > MAX_POWER_BITS


def _magnitude_bits(value):
    if value.is_Rational:
        return max(abs(value.p).bit_length(), abs(value.q).bit_length(), 1)
    try:
        magnitude = abs(complex(sp.N(value, 15)))
    except (TypeError, ValueError):
        return MAX_POWER_BITS
    return max(math.log2(magnitude) if magnitude > 0 else 1, 1) + 64


def _has_huge(value):
    return value.has(HugePower) or any(
        isinstance(node, sp.factorial) and node.args[0].is_Integer and node.args[0] > MAX_FACTORIAL
        for node in sp.preorder_traversal(value)
    )


def _root(radicand, index):
    if index == 0:
        raise ParseError(M('zeroth root'))
    if index.is_Integer and index % 2 == 1 and radicand.is_number and radicand.is_negative:
        return -sp.Pow(-radicand, 1 / index)  # real cube root of a negative number
    return sp.Pow(radicand, 1 / index)


def _log(argument, base):
    if base == 1 or base == 0:
        raise ParseError(M('logarithm base must not be 0 or 1'))
    return sp.log(argument, base)


def _factorial(value):
    value = _expr(value)
    if value.is_Integer and value > MAX_FACTORIAL:
        return sp.factorial(value, evaluate=False)
    if value.is_Integer and value < 0:
        raise ParseError(M('factorial of a negative integer'))
    return sp.factorial(value)


def _binomial(n, k):
    n, k = _expr(n), _expr(k)
    if n.is_Integer and k.is_Integer and n > 10 * MAX_FACTORIAL:
        return sp.binomial(n, k, evaluate=False)
    return sp.binomial(n, k)
