"""Math in plain text: bare LaTeX found and delimited for KaTeX, and a math-normalised form for search.

Released problem statements and reference solutions often carry LaTeX without delimiters
(``已知函数 f(x)=e^{x}-\\frac{3}{2}x^{2}，讨论 ...``). `delimit_bare_latex` wraps each such run in
``\\( ... \\)`` so that the page's KaTeX auto-render (trust off, bounded nesting: static/js/app.js)
shows it as math; text already inside ``$...$``, ``$$...$$``, ``\\(...\\)``, ``\\[...\\]`` is left
as it is. A run is wrapped only when it carries LaTeX evidence (a command such as ``\\frac`` or a
braced ``^{...}`` / ``_{...}``), so unicode math (``√2/2``) and prose are never touched. The result
is plain text: the template still escapes it. Pure Python, no Django.
"""
import re

# Regions already delimited (kept whole): display and inline dollars, \( \), \[ \].
_DELIMITED = re.compile(r"\$\$.*?\$\$|\$[^$\n]*?\$|\\\(.*?\\\)|\\\[.*?\\\]", re.S)
# Characters a bare formula is made of: ASCII letters, digits, operators, brackets, spaces,
# and common unicode math symbols. CJK text, CJK punctuation and newlines end a formula.
_MATH_CHARS = r"A-Za-z0-9\\^_{}()\[\]|+\-*/=<>!.,:;'′ \t≤≥≠≈±×÷·∞∈∉⊂⊆∪∩∅αβγδεθλμπσφωΔΣΩ√∠°"
_RUN = re.compile(f"[{_MATH_CHARS}]+")
_EVIDENCE = re.compile(r"\\[A-Za-z{}]+|[\^_]\{")
# Words of three or more letters not preceded by a backslash are prose ("and", "where", "find"),
# unless they are function names written as such.
_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{3,}(?![A-Za-z])|-{3,}")  # a rubric's "------3 points" is prose too
_FUNCTIONS = {"sin", "cos", "tan", "cot", "sec", "csc", "log", "exp", "max", "min", "lim", "sup", "inf", "det"}
MAX_FORMULA_CHARS = 2000
_LABEL = re.compile(r"^\(\d{1,2}\)\s*")
# Short English words that start or end a run are prose, not variables ("minimum of \\sqrt{a}").
_EDGE_WORDS = {"an", "as", "at", "be", "by", "if", "in", "is", "it", "of", "on", "or", "so", "to", "we"}


def _split_on_prose(run):
    """Pieces of a run between prose words: [(text, is_prose), ...]."""
    pieces, last = [], 0
    for match in _WORD.finditer(run):
        if match.group(0).lower() in _FUNCTIONS:  # (never a run of dashes)
            continue
        pieces.append((run[last:match.start()], False))
        pieces.append((match.group(0), True))
        last = match.end()
    pieces.append((run[last:], False))
    return pieces


def _wrap(piece):
    """`piece` with its formula (without surrounding spaces and trailing punctuation) in \\( \\)."""
    words = piece.split(" ")
    while words and (not words[0].strip() or words[0].strip().lower() in _EDGE_WORDS):
        words.pop(0)
    while words and (not words[-1].strip() or words[-1].strip(",.;:").lower() in _EDGE_WORDS):
        words.pop()
    core = _LABEL.sub("", " ".join(words).strip())  # a sub-question label "(1)" before a formula is text
    while core and core[-1] in ",.;:":
        core = core[:-1].rstrip()
    if not core:
        return piece
    lead = piece.index(core)
    if not core or not _EVIDENCE.search(core) or len(core) > MAX_FORMULA_CHARS or not _balanced(core):
        return piece
    return f"{piece[:lead]}\\({core}\\){piece[lead + len(core):]}"


def _balanced(text):
    depth = 0
    for char in text:
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


def _delimit_plain(text):
    out, last = [], 0
    for run in _RUN.finditer(text):
        out.append(text[last:run.start()])
        out.append("".join(piece if prose else _wrap(piece) for piece, prose in _split_on_prose(run.group(0))))
        last = run.end()
    out.append(text[last:])
    return "".join(out)


def delimit_bare_latex(text):
    """`text` with each bare LaTeX formula outside existing delimiters wrapped in \\( \\)."""
    if not text or "\\" not in text and "^{" not in text and "_{" not in text:
        return text or ""
    out, last = [], 0
    for region in _DELIMITED.finditer(text):
        out.append(_delimit_plain(text[last:region.start()]))
        out.append(region.group(0))
        last = region.end()
    out.append(_delimit_plain(text[last:]))
    return "".join(out)


# --- search ---------------------------------------------------------------------------------

_SEARCH_DROP = re.compile(r"[\s$\\{}]")


def search_form(text):
    """The math-normalised form searched beside the raw text: lower case, without spaces,
    backslashes, braces and dollars, so that `ln3` finds `\\ln 3` and `frac{1}{2}` finds `\\frac 1 2`."""
    return _SEARCH_DROP.sub("", (text or "").lower())


SEARCH_DROPPED = (" ", "\t", "\n", "\r", "$", "\\", "{", "}")  # what search_form removes, for SQL REPLACE
