"""Character error rate (CER) of OCR output against a verified transcript.

No edit-distance library (rapidfuzz, jiwer, python-Levenshtein) is installed here, so this is a
plain Levenshtein distance (unit costs for insertion, deletion, substitution), computed one row
at a time with NumPy: the insertions inside a row are a running minimum, which
`np.minimum.accumulate` does in one pass.

Both texts are compared after Unicode NFKC normalisation (full-width `，` and `：` become `,` and
`:`, as OCR engines disagree on those) and with all whitespace removed (line breaks and the
spaces engines put between CJK characters carry no meaning in a transcript).
"""
import re
import unicodedata

import numpy as np

_WHITESPACE = re.compile(r"\s+")


def normalise(text):
    return _WHITESPACE.sub("", unicodedata.normalize("NFKC", text or ""))


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


def char_errors(hypothesis, reference):
    """(edits, reference length) after normalisation: CER is their ratio."""
    hyp, ref = normalise(hypothesis), normalise(reference)
    return levenshtein(hyp, ref), len(ref)


def cer(hypothesis, reference):
    """Character error rate; 0.0 for two empty texts, 1.0 per character when the reference is empty."""
    edits, length = char_errors(hypothesis, reference)
    if length == 0:
        return 0.0 if edits == 0 else float(edits)
    return edits / length
