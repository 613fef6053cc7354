"""String-level clean-up of an answer before it is tokenised.

Everything here is plain text surgery: unify Unicode and LaTeX spellings of the same thing
(full-width digits, ``\\dfrac``, ``\\leqslant``, ``≥``, thin spaces, thousands separators) so the
parser sees one spelling. Nothing is evaluated.
"""
import re
import unicodedata

# Characters NFKC would mangle (x² -> x2) or leave as non-ASCII; mapped before NFKC.
_SUPERSCRIPTS = {
    "⁰": "0", "¹": "1", "²": "2", "³": "3", "⁴": "4", "⁵": "5", "⁶": "6", "⁷": "7",
    "⁸": "8", "⁹": "9", "⁻": "-", "⁺": "+", "ⁿ": "n",
}
_SUPERSCRIPT_RUN = re.compile("[" + "".join(_SUPERSCRIPTS) + "]+")

_UNICODE_TO_LATEX = {
    "≤": r"\le ", "⩽": r"\le ", "≦": r"\le ", "≥": r"\ge ", "⩾": r"\ge ", "≧": r"\ge ",
    "≠": r"\ne ", "≈": r"\approx ", "≃": r"\approx ", "≅": r"\approx ",
    "∞": r"\infty ", "π": r"\pi ", "√": r"\sqrt ", "∛": r"\sqrt[3]",
    "×": r"\times ", "·": r"\cdot ", "⋅": r"\cdot ", "∙": r"\cdot ", "÷": "/", "∕": "/", "⁄": "/",
    "−": "-", "–": "-", "—": "-", "‐": "-", "‑": "-", "﹣": "-", "－": "-",
    "±": r"\pm ", "∓": r"\mp ", "∈": r"\in ", "∉": r"\notin ",
    "∪": r"\cup ", "∩": r"\cap ", "∅": r"\emptyset ", "∖": r"\setminus ",
    "°": r"^\circ ", "℃": r"^\circ ", "∠": "", "∴": "", "∵": "",
    "ℝ": r"\mathbb{R}", "ℤ": r"\mathbb{Z}", "ℕ": r"\mathbb{N}", "ℚ": r"\mathbb{Q}", "ℂ": r"\mathbb{C}",
    "α": r"\alpha ", "β": r"\beta ", "γ": r"\gamma ", "δ": r"\delta ", "θ": r"\theta ",
    "λ": r"\lambda ", "μ": r"\mu ", "φ": r"\varphi ", "ω": r"\omega ", "ε": r"\varepsilon ",
    "∧": r"\land ", "∨": r"\lor ", "⇒": r"\Rightarrow ", "→": r"\to ", "∣": "|", "｜": "|",
    "、": ",", "，": ",", "；": ";", "：": ":", "（": "(", "）": ")", "【": "[", "】": "]",
    "「": "", "」": "", "“": '"', "”": '"', "‘": "'", "’": "'", "′": "'", "″": "''",
    "\u00a0": " ", "\u2009": " ", "\u200b": "", "\u3000": " ", "\ufeff": "",
}

# LaTeX macro spellings collapsed onto one name (longest first so \leqslant wins over \leq).
_MACRO_ALIASES = [
    (r"\leqslant", r"\le"), (r"\geqslant", r"\ge"), (r"\leqq", r"\le"), (r"\geqq", r"\ge"),
    (r"\leq", r"\le"), (r"\geq", r"\ge"), (r"\neq", r"\ne"), (r"\lt", "<"), (r"\gt", ">"),
    (r"\dfrac", r"\frac"), (r"\tfrac", r"\frac"), (r"\cfrac", r"\frac"),
    (r"\dbinom", r"\binom"), (r"\tbinom", r"\binom"),
    (r"\varnothing", r"\emptyset"), (r"\infin", r"\infty"),
    (r"\bigcup", r"\cup"), (r"\bigcap", r"\cap"), (r"\lbrace", r"\{"), (r"\rbrace", r"\}"),
    (r"\lbrack", "["), (r"\rbrack", "]"), (r"\vert", "|"), (r"\lvert", "|"), (r"\rvert", "|"),
    (r"\mid", "|"), (r"\colon", ":"), (r"\wedge", r"\land"), (r"\vee", r"\lor"),
    (r"\implies", r"\Rightarrow"), (r"\Longrightarrow", r"\Rightarrow"),
    (r"\langle", "("), (r"\rangle", ")"),
]
_MACRO_ALIAS_RE = re.compile(
    "|".join(re.escape(src) + r"(?![a-zA-Z])" for src, _ in _MACRO_ALIASES)
)
_MACRO_ALIAS_MAP = dict(_MACRO_ALIASES)

# Pure layout: removed outright (a trailing letter check keeps \leftarrow etc. intact).
_LAYOUT_MACROS = re.compile(
    r"\\(?:displaystyle|textstyle|scriptstyle|limits|nolimits|big|Big|bigg|Bigg"
    r"|bigl|bigr|Bigl|Bigr|biggl|biggr|Biggl|Biggr|quad|qquad|enspace|thinspace"
    r"|medspace|thickspace|negthinspace|nonumber|notag|displaylines|relax)(?![a-zA-Z])"
)
_SIZED_SPACE = re.compile(r"\\(?:hspace|vspace|kern|mkern|hskip|phantom|hphantom|vphantom)\*?\{[^{}]*\}")
_LEFT_RIGHT = re.compile(r"\\(?:left|right|middle)(?![a-zA-Z])\s*(\.)?")
_SPACING = re.compile(r"\\\\|\\[,;:! ]|~")  # a row break \\ is kept, even before a space
_MATH_DELIMS = re.compile(r"\$+|\\\(|\\\)|\\\[|\\\]")
_ENVIRONMENT_NOISE = re.compile(r"\\(?:begin|end)\{(?:aligned|align\*?|equation\*?|gathered|split|eqnarray\*?|displaymath|math)\}")

# 1{,}000 ; 1\,000 and 1 000 become 1000 (groups of exactly three digits).
_BANG_COMMA_GROUPS = re.compile(r"(?<=\d),\s*\\!\s*(?=\d{3}(?!\d))")
_BRACED_COMMA_GROUPS = re.compile(r"(?<=\d)\{,\}(?=\d{3}(?!\d))")
_SPACE_GROUPS = re.compile(r"(?<![\d.])(\d{1,3})((?:(?:\\,|\\ |\\;|\s|\u2009|')\d{3})+)(?![\d.])")
# "2 1/2" written in plain text is a mixed number (the fraction must be proper).
_PLAIN_MIXED = re.compile(r"(?<![\w.,/^_{}\\])(\d{1,6}) +(\d{1,6}) */ *(\d{1,6})(?![\d./])")
_COMMA_GROUPS = re.compile(r"(?<![\d.,])(\d{1,3})((?:,\d{3})+)(?![\d,])(\.\d+)?")


def normalize(text):
    """Return ``text`` with Unicode, macro and spacing variants unified (a plain string)."""
    text = _unicode(text)
    text = _ENVIRONMENT_NOISE.sub(" ", text)
    text = _MATH_DELIMS.sub(" ", text)
    text = _BANG_COMMA_GROUPS.sub("", text)  # 12,\! 345 is 12345
    text = text.replace(r"\!", "").replace(r"\$", " ")
    text = _BRACED_COMMA_GROUPS.sub("", text)
    text = _PLAIN_MIXED.sub(_mixed_number, text)
    text = _SPACE_GROUPS.sub(_join_groups, text)
    text = _MACRO_ALIAS_RE.sub(lambda m: _MACRO_ALIAS_MAP[m.group(0)], text)
    text = _SIZED_SPACE.sub(" ", text)
    text = _LEFT_RIGHT.sub("", text)
    text = _LAYOUT_MACROS.sub(" ", text)
    text = _SPACING.sub(lambda m: m.group(0) if m.group(0) == "\\\\" else " ", text)
    text = re.sub(r"\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|\\circ|\\degree", r" \\degree ", text)
    text = re.sub(r"\\%|%|％", r" \\% ", text)
    text = re.sub(r"\s+", " ", text).strip()
    return _strip_trailing_punctuation(text)


def join_thousands(text):
    """``1,234,567`` becomes ``1234567`` where every group after the first has three digits.

    Only applied by the parser when the answer is not a bracketed list, because ``(1,234)``
    is more likely a point than a number.
    """
    return _COMMA_GROUPS.sub(lambda m: m.group(1) + m.group(2).replace(",", "") + (m.group(3) or ""), text)


def _mixed_number(match):
    whole, numerator, denominator = match.groups()
    if not 0 < int(numerator) < int(denominator):
        return match.group(0)
    return f"({whole}+{numerator}/{denominator})"


def _join_groups(match):
    digits = re.sub(r"\D", "", match.group(2))
    return match.group(1) + digits


def _unicode(text):
    text = _SUPERSCRIPT_RUN.sub(lambda m: "^{" + "".join(_SUPERSCRIPTS[c] for c in m.group(0)) + "}", text)
    text = "".join(_UNICODE_TO_LATEX.get(ch, ch) for ch in text)
    # NFKC turns full-width digits, letters and operators into ASCII and ½ into 1⁄2.
    text = unicodedata.normalize("NFKC", text)
    return "".join(_UNICODE_TO_LATEX.get(ch, ch) for ch in text)


def _strip_trailing_punctuation(text):
    """Drop sentence punctuation after the answer ("x = 3." or "3。")."""
    return text.rstrip(" .。;,")
