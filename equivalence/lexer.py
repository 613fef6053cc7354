"""Tokeniser for answers written in LaTeX, plain text math, or a mix of both.

The token stream is the only thing the parser sees; no part of the answer is ever handed to
Python's ``eval`` (nor to SymPy's ``sympify``/``parse_expr``, which use it).
"""
import re
from dataclasses import dataclass

from . import units
from .messages import M

MAX_TOKENS = 4000


class LexError(ValueError):
    """The answer contains something the tokeniser does not understand."""


@dataclass(frozen=True)
class Token:
    kind: str  # num, ident, word, cmd, op, text, begin, end, eof
    value: str
    pos: int = 0

    def is_op(self, *values):
        return self.kind == "op" and self.value in values

    def is_cmd(self, *values):
        return self.kind == "cmd" and self.value in values


# Plain-text words with a meaning of their own. Other letter runs are products of symbols.
FUNCTION_WORDS = {
    "sin", "cos", "tan", "cot", "sec", "csc", "arcsin", "arccos", "arctan", "arccot",
    "asin", "acos", "atan", "sinh", "cosh", "tanh", "ln", "log", "lg", "exp", "sqrt",
    "cbrt", "abs", "max", "min", "gcd", "lcm", "floor", "ceil", "det",
}
CONSTANT_WORDS = {"pi", "inf", "infty", "infinity", "oo", "emptyset"}
CONNECTIVE_WORDS = {"or", "and"}
TEXT_WORDS = {
    "no", "none", "solution", "solutions", "real", "roots", "root", "undefined", "dne",
    "does", "not", "exist", "exists", "empty", "set", "all", "numbers", "number",
    "true", "false", "yes", "impossible", "nan", "is", "the", "answer", "of", "for",
    "where", "with", "any", "every", "integer", "integers", "to", "from", "in", "as",
}
UNIT_WORDS = {
    "cm", "mm", "km", "kg", "mg", "ml", "mL", "cm2", "cm3", "m2", "m3", "sec", "min", "hr",
    "hrs", "hours", "hour", "minutes", "minute", "seconds", "second", "days", "day", "dollars",
    "dollar", "cents", "cent", "yuan", "degrees", "degree", "deg", "units", "unit", "meters",
    "meter", "metres", "metre", "inches", "inch", "feet", "foot", "ft", "miles", "mile", "mph",
    "kmh", "percent", "liters", "liter", "litres", "grams", "gram", "kilograms", "pounds", "lbs",
    "rad", "radians", "radian", "sq", "square", "cubic", "people", "students", "ways", "times",
}
CJK_UNITS = {
    "米", "厘米", "毫米", "千米", "公里", "克", "千克", "公斤", "元", "角", "分", "秒", "分钟", "小时",
    "天", "个", "人", "种", "次", "度", "平方米", "平方厘米", "立方米", "立方厘米", "升", "毫升",
    "岁", "只", "条", "本", "件", "块", "辆", "张", "页", "年", "月", "周", "倍", "弧度",
}
CJK_CONNECTIVES = {"或", "或者", "且", "和", "及", "与"}

_SINGLE_LETTER_UNITS = {"m", "s", "g", "h", "L", "l", "N", "J", "W", "V", "A", "K", "Pa", "Hz"}
_UNIT_TEXT = re.compile(r"[A-Za-z]+(?:\^?\{?\d\}?)?(?:\s*/\s*[A-Za-z]+(?:\^?\{?\d\}?)?)?")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:\.(?=\s*\\(?:overline|dot|bar)))?|\.\d+")
_SCIENTIFIC = re.compile(r"(\d+\.\d+|\d+)[eE]([+-]?\d+)(?![\d.a-zA-Z])")
_COMMAND = re.compile(r"\\([a-zA-Z]+)\*?|\\(.)", re.S)
_WORD = re.compile(r"[a-zA-Z]+")
_OPERATORS = ("**", "<=", ">=", "!=", "==", "=>", "->", ":=")
_SINGLE_OPS = set("+-*/^_()[]{},;|=<>!'&:?")

# Text-style macros: their braced argument is prose (units, "or", "no solution").
_TEXT_MACROS = {"text", "textrm", "textit", "textbf", "textsf", "texttt", "mbox", "textnormal", "hbox", "textup"}
# Font macros in math mode: their argument is math in another typeface.
_FONT_MACROS = {
    "mathrm", "mathit", "mathbf", "boldsymbol", "bm", "mathsf", "mathtt", "mathnormal",
    "operatorname", "mathcal", "mathscr", "mathfrak", "rm", "bf", "it", "pmb", "bold",
}


def tokenize(text):
    """Split normalised answer text into tokens (ends with an ``eof`` token)."""
    tokens = []
    _lex_into(text, 0, tokens)
    tokens.append(Token("eof", "", len(text)))
    return tokens


def _lex_into(text, offset, tokens):
    i, n = 0, len(text)
    while i < n:
        if len(tokens) > MAX_TOKENS:
            raise LexError(M('answer is too long to check'))
        ch = text[i]
        if ch.isspace():
            i += 1
            continue
        if ch == "\\":
            i = _lex_command(text, i, offset, tokens)
            continue
        match = _SCIENTIFIC.match(text, i)
        if match and ("." in match.group(1) or match.group(2)[0] not in "+-"):
            # "1.5e-3" and "1e5" are scientific; "2e-1" stays 2e - 1 (e is Euler's number).
            tokens.append(Token("num", f"{match.group(1)}e{match.group(2)}", offset + i))
            i = _lex_plain_unit(text, match.end(), offset, tokens)
            continue
        match = _NUMBER.match(text, i)
        if match:
            tokens.append(Token("num", match.group(0), offset + i))
            i = _lex_plain_unit(text, match.end(), offset, tokens)
            continue
        match = _WORD.match(text, i)
        if match:
            _lex_word(match.group(0), offset + i, tokens)
            i = match.end()
            continue
        match = _CJK.match(text, i)
        if match:
            _lex_cjk(match.group(0), offset + i, tokens)
            i = match.end()
            continue
        two = text[i : i + 2]
        if two in _OPERATORS:
            tokens.append(Token("op", {"**": "^", "==": "=", ":=": "="}.get(two, two), offset + i))
            i += 2
            continue
        if ch in _SINGLE_OPS:
            tokens.append(Token("op", ch, offset + i))
            i += 1
            continue
        if ch in "\"`.":
            i += 1
            continue
        raise LexError(M('unexpected character {ch}', ch=repr(ch)))


def _lex_plain_unit(text, i, offset, tokens):
    """After a number: a unit written in plain text ("5 m", "3 m/s", "9.8 m/s^2") is one token."""
    j = i
    while j < len(text) and text[j] == " ":
        j += 1
    found = units.plain_unit_at(text, j, spaced=j > i)
    if found is None:
        return i
    phrase, end = found
    tokens.append(Token("unit", phrase, offset + j))
    return end


def _after_value(tokens):
    """Does a unit here follow a value (a number, a closing bracket, or unit / unit)?"""
    if not tokens:
        return False
    last = tokens[-1]
    if last.kind in ("num", "unit") or last.is_op(")", "}", "]"):
        return True
    return last.is_op("/") and len(tokens) > 1 and tokens[-2].kind == "unit"


def _lex_word(word, pos, tokens):
    lower = word.lower()
    if len(word) == 1:
        tokens.append(Token("ident", word, pos))
    elif lower in FUNCTION_WORDS or lower in CONSTANT_WORDS or lower in CONNECTIVE_WORDS:
        tokens.append(Token("word", lower, pos))
    elif word in UNIT_WORDS or lower in UNIT_WORDS:
        tokens.append(Token("unit", word, pos))
    elif lower in TEXT_WORDS or len(word) > 4:
        tokens.append(Token("text", word, pos))
    else:
        # "xy" is x times y, as in handwritten algebra.
        for k, letter in enumerate(word):
            tokens.append(Token("ident", letter, pos + k))


def _lex_command(text, i, offset, tokens):
    match = _COMMAND.match(text, i)
    if not match:
        raise LexError(M('stray backslash'))
    name = match.group(1)
    if name is None:  # \{ \} \\ \% \| \# and friends
        symbol = match.group(2)
        if symbol == "|":
            tokens.append(Token("op", "|", offset + i))
        elif symbol == "\\":
            tokens.append(Token("cmd", "\\\\", offset + i))
        else:
            tokens.append(Token("cmd", "\\" + symbol, offset + i))
        return match.end()
    end = match.end()
    if name in ("begin", "end"):
        env, end = _braced(text, end)
        tokens.append(Token(name, env.strip().rstrip("*"), offset + i))
        if name == "begin" and env.strip() == "array":
            _, end = _braced(text, end)  # column spec {cc}
        return end
    if name in _TEXT_MACROS:
        content, end = _braced(text, end)
        _lex_text(content, offset + i, tokens)
        return end
    if name in _FONT_MACROS:
        content, end = _braced_or_token(text, end)
        _lex_font(content, offset + i, tokens)
        return end
    if name in ("mathbb", "Bbb", "mathbbm"):
        content, end = _braced_or_token(text, end)
        tokens.append(Token("cmd", "\\mathbb{" + content.strip() + "}", offset + i))
        return end
    tokens.append(Token("cmd", "\\" + name, offset + i))
    return end


def _lex_text(content, pos, tokens):
    """Prose inside \\text{}: connectives, words, units; math-looking text is lexed as math."""
    stripped = content.strip()
    if not stripped:
        return
    if re.fullmatch(r"[\d\s.,+\-*/()=<>^]+", stripped) or re.fullmatch(r"\(?[A-F]\)?", stripped):
        _lex_into(stripped, pos, tokens)
        return
    if _UNIT_TEXT.fullmatch(stripped) and all(
        word in UNIT_WORDS or word in _SINGLE_LETTER_UNITS for word in re.findall(r"[A-Za-z]+", stripped)
    ):
        tokens.append(Token("unit", stripped, pos))
        return
    for piece in re.findall(r"[A-Za-z]+|[\u3400-\u9fff]+|\S", stripped):
        if piece.lower() in CONNECTIVE_WORDS:
            tokens.append(Token("word", piece.lower(), pos))
        elif _CJK.fullmatch(piece):
            _lex_cjk(piece, pos, tokens)
        elif piece in UNIT_WORDS or piece.lower() in UNIT_WORDS:
            tokens.append(Token("unit", piece, pos))
        else:
            tokens.append(Token("text", piece, pos))


def _lex_cjk(run, pos, tokens):
    pieces = _cjk_pieces(run)
    if pieces is None:
        tokens.append(Token("text", run, pos))
        return
    for piece in pieces:
        if piece in CJK_CONNECTIVES:
            tokens.append(Token("word", "and" if piece in ("且", "和", "及", "与") else "or", pos))
        else:
            tokens.append(Token("unit", piece, pos))


def _cjk_pieces(run):
    """Split a run like "厘米和" into known units and connectives, longest first; None if it is prose."""
    known = CJK_UNITS | CJK_CONNECTIVES
    pieces, i = [], 0
    while i < len(run):
        for length in range(min(4, len(run) - i), 0, -1):
            if run[i : i + length] in known:
                pieces.append(run[i : i + length])
                i += length
                break
        else:
            return None
    return pieces


def _lex_font(content, pos, tokens):
    """\\mathrm{cm} is a unit, \\mathrm{e} is Euler's number, \\operatorname{arcsin} a function."""
    stripped = content.strip()
    if _after_value(tokens) and (units.PHRASE.fullmatch(stripped) or stripped in UNIT_WORDS):
        tokens.append(Token("unit", stripped, pos))  # 5\,\mathrm{cm}, 5\mathrm{~m}, 3\mathrm{m/s}
        return
    if re.fullmatch(r"[A-Za-z]+", stripped):
        lower = stripped.lower()
        if len(stripped) == 1:
            tokens.append(Token("ident", stripped, pos))
        elif lower in FUNCTION_WORDS or lower in CONSTANT_WORDS or lower in CONNECTIVE_WORDS:
            tokens.append(Token("word", lower, pos))
        else:
            tokens.append(Token("text", stripped, pos))
        return
    _lex_into(content, pos, tokens)


def _braced(text, i):
    """Return the content of the balanced ``{...}`` group starting at or after ``i``."""
    while i < len(text) and text[i].isspace():
        i += 1
    if i >= len(text) or text[i] != "{":
        raise LexError(M('expected {{'))
    depth, j = 0, i
    while j < len(text):
        if text[j] == "\\":
            j += 2
            continue
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return text[i + 1 : j], j + 1
        j += 1
    raise LexError(M('unbalanced braces'))


def _braced_or_token(text, i):
    while i < len(text) and text[i].isspace():
        i += 1
    if i < len(text) and text[i] == "{":
        return _braced(text, i)
    if i < len(text) and text[i] == "\\":
        match = _COMMAND.match(text, i)
        return match.group(0), match.end()
    if i < len(text):
        return text[i], i + 1
    raise LexError(M('missing argument'))
