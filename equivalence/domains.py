"""Where the unknowns live: a domain stated by the question or the gold answer (issue 41).

``parse_domain("n \\ge 2, n \\in \\mathbb{N}^*")`` gives ``{"n": Range(low=2, high=None, integer=True)}``.
Point tests (``Comparator.numeric_points``) then only use points inside the domain, so
``\\sqrt{\\frac{n}{n-1}}`` and ``\\frac{\\sqrt{n(n-1)}}{n-1}`` are compared for n = 2, 3, ... and not
at n = -2/3. Without a stated domain, a difference found only where an index letter (n, m, k) is
not a positive integer is *undecided*, and the verdict says that the domain decides.

Conditions read: ``n \\ge 2``, ``x > 0``, ``2 \\le n \\le 10``, ``0 < x < 1``, ``n \\in \\mathbb{N}^*``
(also ``ℕ*``, ``N*``, ``\\mathbb{N}^{*}``, ``\\mathbb{N}_+``, ``\\mathbb{N}^{+}``; ``\\mathbb{N}`` / ``ℕ`` is
0, 1, 2, ...; ``\\mathbb{Z}``, ``\\mathbb{R}``, ``\\mathbb{R}^+``), an interval after ``\\in``
(``x \\in (0, +\\infty)``, ``x \\in [1, 3)``), and in words: ``n 为正整数`` / ``为整数`` / ``为自然数`` /
``为实数`` / ``为正数``, ``n is a positive integer`` / ``an integer`` / ``a natural number`` (0, 1, 2, ...) /
``a real number`` / ``positive``. Conditions are joined by commas, semicolons, 且 or "and" at the
top level (the comma inside ``(0, 1)`` is the interval's); "or" is not read (a domain is one
condition per letter). Bounds must be numbers; anything else is a :class:`DomainError` (the check
is then undecided, never run on a domain it misread).
"""
import re
from dataclasses import dataclass

import sympy as sp

from .messages import M, joined

INDEX_LETTERS = frozenset({"n", "m", "k"})


class DomainError(ValueError):
    pass


@dataclass(frozen=True)
class Range:
    low: object = None  # a SymPy number or None
    high: object = None
    low_open: bool = False
    high_open: bool = False
    integer: bool = False

    def contains(self, value):
        if self.integer and not (value.is_integer or (value == int(value))):
            return False
        if self.low is not None and (value < self.low or (self.low_open and value == self.low)):
            return False
        if self.high is not None and (value > self.high or (self.high_open and value == self.high)):
            return False
        return True

    def describe(self, name):
        parts = []
        if self.low is not None:
            parts.append(f"{name} {'>' if self.low_open else '≥'} {self.low}")
        if self.high is not None:
            parts.append(f"{name} {'<' if self.high_open else '≤'} {self.high}")
        if self.integer:
            parts.append(M("{name} integer", name=name))
        return joined(", ", parts) or M("{name} real", name=name)


    def as_set(self):
        """The range as a SymPy set of reals (integers: a ``Range``)."""
        interval = sp.Interval(self.low if self.low is not None else -sp.oo, self.high if self.high is not None else sp.oo,
                               self.low_open, self.high_open)
        return sp.Intersection(interval, sp.S.Integers) if self.integer else interval


POSITIVE_INTEGERS = Range(low=sp.Integer(1), integer=True)
MAX_DOMAIN_CHARS = 300


def parse_domain(text):
    """{name: Range} for a stated domain; {} for an empty one. Raises DomainError."""
    if not text or not text.strip():
        return {}
    if len(text) > MAX_DOMAIN_CHARS:
        raise DomainError(M('longer than {MAX_DOMAIN_CHARS} characters', MAX_DOMAIN_CHARS=MAX_DOMAIN_CHARS))
    from .parser import ParseError, Relation, parse_answer  # lazy: SymPy's parser
    from .reading import _top_level_items  # lazy: the reading imports this module

    text = _spelled_out(text)
    items = _top_level_items(text)
    if any(joiner == "or" for _, _, joiner in items):
        raise DomainError(M('a domain joined by «or» is not read'))
    pieces = [text[start:end] for start, end, _ in items if text[start:end].strip()]
    found = {}
    for piece in pieces:
        try:
            relation = parse_answer(piece).value
        except ParseError as exc:
            raise DomainError(M('{piece_strip}: {exc}', piece_strip=piece.strip(), exc=exc)) from None
        if not isinstance(relation, Relation):
            raise DomainError(M('{piece_strip} is not a condition', piece_strip=piece.strip()))
        name, update = _condition(relation)
        found[name] = _merge(found.get(name, Range()), update)
    return found


# ℕ*, N*, \mathbb{N}^{*}, \mathbf{N}_{+}, ... (positive integers) as the parser reads them.
_POSITIVE_NATURALS = re.compile(
    r"(?:ℕ|\\mathbb\s*\{\s*N\s*\}|\\mathbb\s*N|\\mathbf\s*\{\s*N\s*\}|\\mathbf\s*N|(?<![A-Za-z\\])N(?![A-Za-z]))"
    r"\s*(?:\^\s*\{\s*[*+]\s*\}|_\s*\{\s*[*+]\s*\}|\^\s*[*+]|_\s*[*+]|\*|\+(?!\s*[\d\\(]))"
)
_LETTER = r"(?P<name>[A-Za-z](?:_\{?\w+\}?)?)"
# "n 为正整数", "n is a positive integer": {name} is replaced by the letter.
_WORDS = [
    (re.compile(_LETTER + r"\s*(?:为|是|取)\s*(?:任意)?正整数$"), "{name} \\in \\mathbb{N}^*"),
    (re.compile(_LETTER + r"\s*(?:为|是|取)\s*(?:任意)?自然数$"), "{name} \\in \\mathbb{N}"),
    (re.compile(_LETTER + r"\s*(?:为|是|取)\s*(?:任意)?整数$"), "{name} \\in \\mathbb{Z}"),
    (re.compile(_LETTER + r"\s*(?:为|是)\s*(?:任意)?实数$"), "{name} \\in \\mathbb{R}"),
    (re.compile(_LETTER + r"\s*(?:为|是)\s*正(?:实)?数$"), "{name} > 0"),
    (re.compile(_LETTER + r"\s+(?i:is\s+a\s+positive\s+integer)$"), "{name} \\in \\mathbb{N}^*"),
    (re.compile(_LETTER + r"\s+(?i:is\s+a\s+natural\s+number)$"), "{name} \\in \\mathbb{N}"),
    (re.compile(_LETTER + r"\s+(?i:is\s+an\s+integer)$"), "{name} \\in \\mathbb{Z}"),
    (re.compile(_LETTER + r"\s+(?i:is\s+(?:a\s+)?real(?:\s+number)?)$"), "{name} \\in \\mathbb{R}"),
    (re.compile(_LETTER + r"\s+(?i:is\s+(?:a\s+)?positive(?:\s+real)?(?:\s+number)?)$"), "{name} > 0"),
]


def _spelled_out(text):
    """The domain with its spellings made the parser's: ℕ* is ``\\mathbb{N}^*``, 且 / ； are commas,
    each condition in words a condition in symbols."""
    text = text.strip().replace("，", ",").replace("；", ";").replace("且", ",").replace("∈", " \\in ")
    text = re.sub(r"(?i)\s+and\s+", ", ", text)
    text = _POSITIVE_NATURALS.sub(lambda m: "\\mathbb{N}^*", text)
    text = re.sub(r"ℕ", r"\\mathbb{N}", text)
    text = re.sub(r"(?<![A-Za-z\\{])N(?=\s*$|\s*[,;])", r"\\mathbb{N}", text)  # "n ∈ N"
    pieces = []
    for piece in re.split(r"([,;])", text):
        bare = piece.strip().rstrip(".。")
        for pattern, replacement in _WORDS:
            match = pattern.match(bare)
            if match:
                piece = replacement.replace("{name}", match.group("name"))
                break
        pieces.append(piece)
    return "".join(pieces)


_SETS = {"Naturals": Range(low=sp.Integer(1), integer=True), "Naturals0": Range(low=sp.Integer(0), integer=True),
         "Integers": Range(integer=True), "Reals": Range()}


def _condition(relation):
    operands, ops = relation.operands, relation.ops
    if ops == ["in"] and isinstance(operands[0], sp.Symbol):
        value = getattr(operands[1], "value", None)
        key = type(value).__name__
        if key in _SETS:
            return operands[0].name, _SETS[key]
        if isinstance(value, sp.Interval):
            return operands[0].name, _interval_range(value.start, value.end, value.left_open, value.right_open)
        items, left, right = (getattr(operands[1], name, None) for name in ("items", "left", "right"))
        if items is not None and len(items) == 2 and left in ("(", "[") and right in (")", "]"):
            # x \in (0, +\infty), x \in [1, 3): an interval (the parser keeps the brackets)
            return operands[0].name, _interval_range(items[0], items[1], operands[1].left == "(", operands[1].right == ")")
        raise DomainError(M('an unknown set'))
    symbols = [item for item in operands if isinstance(item, sp.Symbol)]
    if len(symbols) != 1 or any(op not in ("<", "<=", ">", ">=") for op in ops):
        raise DomainError(M('a condition on one letter with <, ≤, >, ≥ is needed'))
    name = symbols[0].name
    result = Range()
    for left, op, right in zip(operands, ops, operands[1:]):
        if isinstance(left, sp.Symbol) == isinstance(right, sp.Symbol):
            raise DomainError(M('a bound must be a number'))
        bound = right if isinstance(left, sp.Symbol) else left
        bound = _exact(bound)
        if not getattr(bound, "is_number", False) or not bound.is_real:
            raise DomainError(M('a bound must be a number'))
        strict = op in ("<", ">")
        symbol_is_smaller = (op in ("<", "<=")) == isinstance(left, sp.Symbol)
        if symbol_is_smaller:
            result = _merge(result, Range(high=bound, high_open=strict))
        else:
            result = _merge(result, Range(low=bound, low_open=strict))
    return name, result


def _interval_range(start, end, left_open, right_open):
    for bound in (start, end):
        if not getattr(bound, "is_number", False) or not (bound.is_real or bound in (sp.oo, -sp.oo)):
            raise DomainError(M('a bound must be a number'))
    if not start < end:
        raise DomainError(M('an empty interval'))
    return Range(low=None if start == -sp.oo else _exact(start), high=None if end == sp.oo else _exact(end),
                 low_open=bool(left_open) and start != -sp.oo, high_open=bool(right_open) and end != sp.oo)


def _exact(value):
    """A Float as the rational it is written as (0.1 is 1/10), without SymPy's nsimplify, which
    parses strings (no text ever reaches sympify; test_engine traps it)."""
    if isinstance(value, sp.Float):
        return sp.Rational(format(value, ".30g")) if value.is_finite else value
    return value


def merged(first, second):
    """Two domains as one: each letter's conditions together."""
    found = dict(first)
    for name, update in second.items():
        found[name] = _merge(found.get(name, Range()), update)
    return found


def _merge(a, b):
    low, low_open = a.low, a.low_open
    if b.low is not None and (low is None or b.low > low or (b.low == low and b.low_open)):
        low, low_open = b.low, b.low_open
    high, high_open = a.high, a.high_open
    if b.high is not None and (high is None or b.high < high or (b.high == high and b.high_open)):
        high, high_open = b.high, b.high_open
    return Range(low, high, low_open, high_open, a.integer or b.integer)


def inside(point, domain, rng, index):
    """``point`` with every unknown that has a domain moved inside it (None when impossible)."""
    moved = dict(point)
    for symbol, value in point.items():
        found = domain.get(symbol.name)
        if found is None:
            continue
        moved[symbol] = _sample(found, value, rng, index)
        if moved[symbol] is None:
            return None
    return moved


def _sample(found, value, rng, index):
    if found.integer:
        low = int(sp.ceiling(found.low)) if found.low is not None else (int(sp.floor(found.high)) - 12 if found.high is not None else -6)
        choices = [n for n in range(low, low + 14) if found.contains(sp.Integer(n))]
        return sp.Integer(choices[(index * 5 + rng.randint(0, 13)) % len(choices)]) if choices else None
    magnitude = abs(sp.Rational(value)) if value.is_Rational else _exact(abs(value))
    if found.low is not None and found.high is not None:
        fraction = sp.Rational(rng.randint(1, 99), 100)
        candidate = found.low + (found.high - found.low) * fraction
    elif found.low is not None:
        candidate = found.low + magnitude
    elif found.high is not None:
        candidate = found.high - magnitude
    else:
        return value
    if not value.is_Rational:
        candidate = sp.Float(candidate, getattr(value, "_prec", 53) // 3 + 1)
    return candidate if found.contains(_exact(candidate)) else None


def describe(domain):
    return joined("; ", [found.describe(name) for name, found in sorted(domain.items())])
