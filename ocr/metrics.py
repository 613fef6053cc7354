r"""Character error rate (CER) of OCR output against a verified transcript.

No edit-distance library (rapidfuzz, jiwer, python-Levenshtein) is installed here, so this is a
plain Levenshtein distance (unit costs for insertion, deletion, substitution), computed one row
at a time with NumPy: the insertions inside a row are a running minimum, which
`np.minimum.accumulate` does in one pass.

Both texts are compared after Unicode NFKC normalisation (full-width `，` and `：` become `,` and
`:`, as OCR engines disagree on those) and with all whitespace removed (line breaks and the
spaces engines put between CJK characters carry no meaning in a transcript).

The *math-normalised* CER also drops the markup a person adds when transcribing a formula and
an engine never reads off paper: `$` delimiters, `^` and `_`, braces, and LaTeX spacing
commands (`\,` `\;` `\:` `\!` `\quad` `\qquad`) and `\left` / `\right`. So a verified
`$x^{2}$` against OCR's `x2` is 0 edits there (3 in the plain CER), while a wrong digit still
counts. Nothing else is rewritten: `\frac{a}{b}` against `a/b` still differs.
"""
import re
import unicodedata

import numpy as np

_WHITESPACE = re.compile(r"\s+")
_MATH_MARKUP = re.compile(r"\\(?:left|right|qquad|quad)(?![A-Za-z])|\\[,;:!]|[$^_{}]")


def normalise(text):
    return _WHITESPACE.sub("", unicodedata.normalize("NFKC", text or ""))


def normalise_math(text):
    r"""`normalise` with math markup removed too: `$`, `^`, `_`, braces, LaTeX spacing, `\left`/`\right`."""
    return _WHITESPACE.sub("", _MATH_MARKUP.sub("", unicodedata.normalize("NFKC", text or "")))


def levenshtein(a, b):
    """Edit distance between two strings (insert, delete, substitute; each costs 1)."""
    if a == b:
        return 0
    if len(a) < len(b):
        a, b = b, a
    if not b:
        return len(a)
    codes_b = np.frombuffer(b.encode("utf-32-le"), dtype=np.uint32)
    columns = np.arange(len(b) + 1, dtype=np.int64)
    previous = columns.copy()
    for i, char in enumerate(a, start=1):
        cost = (codes_b != ord(char)).astype(np.int64)
        row = np.empty_like(previous)
        row[0] = i
        # Deletion (from above) and substitution (from the diagonal) first ...
        row[1:] = np.minimum(previous[1:] + 1, previous[:-1] + cost)
        # ... then insertions along the row: row[j] = min over k <= j of row[k] + (j - k).
        row = np.minimum.accumulate(row - columns) + columns
        previous = row
    return int(previous[-1])


def char_errors(hypothesis, reference, *, math=False):
    """(edits, reference length) after normalisation (and math markup removed with `math`): CER is their ratio."""
    clean = normalise_math if math else normalise
    hyp, ref = clean(hypothesis), clean(reference)
    return levenshtein(hyp, ref), len(ref)


def cer(hypothesis, reference, *, math=False):
    """Character error rate; 0.0 for two empty texts, 1.0 per character when the reference is empty."""
    edits, length = char_errors(hypothesis, reference, math=math)
    if length == 0:
        return 0.0 if edits == 0 else float(edits)
    return edits / length
