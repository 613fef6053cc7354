"""Plain-text and LaTeX forms of a classified answer, for the verdict and the page."""
import math
import re

import sympy as sp
from sympy.printing.latex import LatexPrinter
from sympy.printing.str import StrPrinter

from .answers import Answer

MAX_DIGITS_SHOWN = 40
MAX_TEXT = 400


def _approximate_integer(value):
    """(mantissa text, decimal exponent) of a huge integer, from its top 64 bits (fast)."""
    value = int(value)
    sign = "-" if value < 0 else ""
    value = abs(value)
    shift = max(value.bit_length() - 64, 0)
    log10 = math.log10(value >> shift) + shift * math.log10(2)
    exponent = math.floor(log10)
    mantissa = 10 ** (log10 - exponent)
    return f"{sign}{mantissa:.7f}".rstrip("0").rstrip("."), exponent


def _is_long(integer):
    return abs(int(integer)).bit_length() > MAX_DIGITS_SHOWN * 3.33


class _ShortStr(StrPrinter):
    def _print_Integer(self, expr):
        if _is_long(expr.p):
            mantissa, exponent = _approximate_integer(expr.p)
            return f"{mantissa}e{exponent}"
        return super()._print_Integer(expr)

    def _print_Rational(self, expr):
        if _is_long(expr.p) or _is_long(expr.q):
            return f"{self._print(sp.Integer(expr.p))}/{self._print(sp.Integer(expr.q))}"
        return super()._print_Rational(expr)


class _ShortLatex(LatexPrinter):
    def _print_Integer(self, expr):
        if _is_long(expr.p):
            mantissa, exponent = _approximate_integer(expr.p)
            return rf"\approx {mantissa} \times 10^{{{exponent}}}"
        return str(expr.p)

    def _print_Rational(self, expr):
        if _is_long(expr.p) or _is_long(expr.q):
            return rf"\frac{{{self._print(sp.Integer(expr.p))}}}{{{self._print(sp.Integer(expr.q))}}}"
        return super()._print_Rational(expr)

    def _print_Symbol(self, expr, style="plain"):
        name = expr.name
        if "'" in name:
            return name
        return super()._print_Symbol(expr, style=style)


def text_of(value):
    return _clip(_ShortStr().doprint(value))


def latex_of(value):
    return _ShortLatex().doprint(value)


def set_text(value):
    """Sets in school notation: ``(2, ∞)``, ``[1, 3) ∪ {5}``, ``∅``."""
    if value is sp.S.EmptySet:
        return "\u2205"
    named = {sp.S.Reals: "\u211d", sp.S.Integers: "\u2124", sp.S.Naturals: "\u2115+", sp.S.Naturals0: "\u2115",
             sp.S.Rationals: "\u211a", sp.S.Complexes: "\u2102"}
    if value in named:
        return named[value]
    if isinstance(value, sp.Interval):
        def end(x):
            return "\u221e" if x == sp.oo else "-\u221e" if x == -sp.oo else text_of(x)
        return ("(" if value.left_open else "[") + f"{end(value.start)}, {end(value.end)}" + (")" if value.right_open else "]")
    if isinstance(value, sp.Union):
        return " \u222a ".join(set_text(part) for part in value.args)
    if isinstance(value, sp.Intersection):
        return " \u2229 ".join(set_text(part) for part in value.args)
    if isinstance(value, sp.Complement):
        return f"{set_text(value.args[0])} \\ {set_text(value.args[1])}"
    if isinstance(value, sp.FiniteSet):
        return "{" + ", ".join(text_of(item) for item in value.args) + "}"
    if isinstance(value, sp.Range) and value.step == 1:  # integers of a stated domain
        if value.size.is_finite and value.size <= 6:
            return "{" + ", ".join(text_of(item) for item in value) + "}"
        if value.inf.is_finite:
            return "{" + ", ".join(text_of(value.inf + i) for i in range(3)) + ", ...}"
        if value.sup.is_finite:
            return "{..., " + ", ".join(text_of(value.sup - i) for i in (2, 1, 0)) + "}"
        return "\u2124"
    return text_of(value)


RELATION_LATEX = {"=": "=", "<": "<", ">": ">", "<=": r"\leq", ">=": r"\geq", "!=": r"\neq", "approx": r"\approx"}
RELATION_TEXT = {"<=": "<=", ">=": ">=", "!=": "!=", "approx": "~"}


def describe(answer):
    """(plain text, LaTeX) for an :class:`Answer`."""
    kind = answer.kind
    if kind == "number" and answer.decimal is not None and not answer.value.is_Integer:
        written = decimal_text(answer.decimal)
        if written:
            suffix = {"percent": ("%", r"\%"), "degree": ("\u00b0", r"^\circ")}.get(answer.unit, ("", ""))
            return written + suffix[0], written + suffix[1]
    if kind in ("number", "expression"):
        suffix_text = {"percent": "%", "degree": "\u00b0"}.get(answer.unit, "")
        suffix_latex = {"percent": r"\%", "degree": r"^\circ"}.get(answer.unit, "")
        return text_of(answer.value) + suffix_text, latex_of(answer.value) + suffix_latex
    if kind == "equation":
        if answer.head is not None and answer.rhs is not None:
            text, latex = describe(answer.rhs)
            return f"{text_of(answer.head)} = {text}", f"{latex_of(answer.head)} = {latex}"
        left, right = answer.value
        return f"{text_of(left)} = {text_of(right)}", f"{latex_of(left)} = {latex_of(right)}"
    if kind == "inequality":
        sides, ops = answer.value
        text = text_of(sides[0])
        latex = latex_of(sides[0])
        for op, side in zip(ops, sides[1:]):
            text += f" {RELATION_TEXT.get(op, op)} {text_of(side)}"
            latex += f" {RELATION_LATEX[op]} {latex_of(side)}"
        return text, latex
    if kind == "set":
        value = answer.value
        if isinstance(value, tuple):
            _, variable, condition, _domain = value
            text, latex = describe(condition)
            return f"{{{variable} | {text}}}", rf"\left\{{{latex_of(variable)} \mid {latex}\right\}}"
        return set_text(value), latex_of(value)
    if kind == "membership":
        symbol, target = answer.value
        text, latex = describe(target)
        return f"{symbol} in {text}", rf"{latex_of(symbol)} \in {latex}"
    if kind in ("pair", "tuple"):
        left, right = (answer.brackets or "()")[0], (answer.brackets or "()")[-1]
        parts = [describe(item) for item in answer.value]
        return (
            left + ", ".join(t for t, _ in parts) + right,
            _latex_bracket(left) + ", ".join(tex for _, tex in parts) + _latex_bracket(right),
        )
    if kind in ("list", "set_literal", "compound"):
        items = answer.value[0] if kind == "compound" else answer.value
        joiner = f" {answer.value[1]} " if kind == "compound" else ", "
        parts = [describe(item) for item in items]
        text = joiner.join(t for t, _ in parts)
        latex = (r" \text{ %s } " % answer.value[1] if kind == "compound" else ", ").join(tex for _, tex in parts)
        if kind == "set_literal":
            return "{" + text + "}", r"\left\{" + latex + r"\right\}"
        return text, latex
    if kind == "system":
        parts = [(str(k), describe(v)) for k, v in answer.value.items()]
        return ", ".join(f"{k} = {t}" for k, (t, _) in parts), ", ".join(
            f"{latex_of(k)} = {tex}" for k, (_, tex) in zip(answer.value, [d for _, d in parts])
        )
    if kind == "matrix":
        rows, cols = answer.shape
        cells = [describe(cell) for cell in answer.value]
        text = "[" + ", ".join(
            "[" + ", ".join(cells[r * cols + c][0] for c in range(cols)) + "]" for r in range(rows)
        ) + "]"
        latex = r"\begin{pmatrix}" + r" \\ ".join(
            " & ".join(cells[r * cols + c][1] for c in range(cols)) for r in range(rows)
        ) + r"\end{pmatrix}"
        return text, latex
    if kind == "family":
        return _describe_family(answer.value)
    if kind == "relation_symbol":
        return RELATION_TEXT.get(answer.value, answer.value), RELATION_LATEX.get(answer.value, answer.value)
    if kind == "choice":
        return f"({answer.value})", rf"\text{{({answer.value})}}"
    if kind == "text":
        safe = re.sub(r"[^\w\s\u3400-\u9fff.,'-]", "", answer.value)[:MAX_TEXT]
        return answer.value[:MAX_TEXT], rf"\text{{{safe}}}"
    if kind == "polar":
        return answer.symbol[:MAX_TEXT], rf"\text{{{_safe_text(answer.symbol)}}}"
    if kind == "labelled":
        parts = [(word.rstrip("为是:= "), describe(value)) for _, word, value in answer.value]
        text = ", ".join(f"{word}: {shown[0]}" for word, shown in parts)
        latex = r",\ ".join(rf"\text{{{_safe_text(word)}: }} {shown[1]}" for word, shown in parts)
        return _clip(text), latex
    if kind == "piecewise":
        rows = []
        for condition, value in answer.value.branches:
            rows.append((describe(value), describe(condition) if condition is not None else ("otherwise", r"\text{otherwise}")))
        head = answer.value.head
        text = (f"{head} = " if head else "") + "; ".join(f"{v[0]} ({c[0]})" for v, c in rows)
        latex = r"\begin{cases} " + r" \\ ".join(f"{v[1]} & {c[1]}" for v, c in rows) + r" \end{cases}"
        return _clip(text), latex
    return kind, ""


def _safe_text(text):
    """Words for ``\\text{}``: letters, digits, CJK and plain punctuation only (no braces or backslashes)."""
    return re.sub(r"[^\w\s\u3400-\u9fff.,'-]", "", text)[:MAX_TEXT]


def _describe_family(family):
    """``[πk - 3π/8, πk + π/8], k ∈ ℤ`` (and its LaTeX)."""
    texts, latexes = [], []
    for member in family.members:
        if hasattr(member, "coords"):
            texts.append("(" + ", ".join(text_of(c) for c in member.coords) + ")")
            latexes.append(r"\left(" + ", ".join(latex_of(c) for c in member.coords) + r"\right)")
        elif member.is_point:
            texts.append(text_of(member.lo))
            latexes.append(latex_of(member.lo))
        else:
            left, right = "(" if member.lo_open else "[", ")" if member.hi_open else "]"
            texts.append(f"{left}{text_of(member.lo)}, {text_of(member.hi)}{right}")
            latexes.append(rf"\left{left}{latex_of(member.lo)}, {latex_of(member.hi)}\right{right}")
    names = ", ".join(sorted(family.params)) or "k"
    joiner = " or " if all(getattr(m, "is_point", False) for m in family.members) else " \u222a "
    latex_joiner = r" \text{ or } " if joiner == " or " else r" \cup "
    text, latex = joiner.join(texts), latex_joiner.join(latexes)
    if family.variable is not None:
        relation = "=" if joiner == " or " else "\u2208"
        text = f"{family.variable} {relation} {text}"
        latex = f"{latex_of(family.variable)} {'=' if relation == '=' else chr(92) + 'in'} {latex}"
    return f"{text}, {names} \u2208 \u2124", rf"{latex}, \; {names} \in \mathbb{{Z}}"


def decimal_text(literal):
    """A decimal literal as written (to its last place): ``6.28318``, ``0.0015``."""
    value, ulp = literal.value, literal.ulp
    if not (value.is_Rational and ulp.is_Rational and ulp.p == 1):
        return ""
    places = len(str(ulp.q)) - 1
    if ulp.q != 10**places or places > 60:
        return ""
    units = value / ulp
    if not units.is_Integer:
        return ""
    digits = str(abs(int(units))).rjust(places + 1, "0")
    text = digits[:-places] + "." + digits[-places:] if places else digits
    return ("-" if units < 0 else "") + text


def _latex_bracket(char):
    return {"(": r"\left(", ")": r"\right)", "[": r"\left[", "]": r"\right]"}.get(char, char)


def _clip(text):
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 3] + "..."


def describe_safely(answer):
    """Like :func:`describe` but never fails (a display problem must not lose a verdict)."""
    if not isinstance(answer, Answer):
        return "", ""
    try:
        text, latex = describe(answer)
    except Exception:  # noqa: BLE001 - printing is best effort
        return answer.kind, ""
    if len(latex) > 4 * MAX_TEXT:
        latex = ""
    return text, latex
