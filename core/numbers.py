"""The one parser for ids and whole numbers that come from outside (query parameters, form
fields, file names, uploaded JSON keys).

Python's own tests are too generous for input: ``"²".isdigit()`` and ``"٣".isdigit()`` are True
(``int("²")`` then raises, ``int("٣")`` is 3), ``int(" 7 ")`` and ``int("1_000")`` succeed, and
a 25-digit number overflows every database column. Here only ASCII digits count, with at most
an optional sign for plain integers, and every value is checked against its range: anything else
is None (or the caller's default), never an exception. Plain Python, no Django.
"""
import re

MAX_ID = 2**63 - 1  # the largest value of a database id column (bigint)
MAX_INT32 = 2**31 - 1  # the largest value of an IntegerField / PositiveIntegerField column

_DIGITS = re.compile(r"[0-9]+")
_INTEGER = re.compile(r"[+-]?[0-9]+")
_MAX_LENGTH = 40  # more characters than any range here needs: refused before int() reads them


def ascii_digits(value):
    """Whether `value` (after trimming spaces) is one or more ASCII digits 0-9 and nothing else."""
    text = _text(value)
    return text is not None and _DIGITS.fullmatch(text) is not None


def parse_int(value, *, minimum=None, maximum=None, default=None):
    """A whole number from text (or an int): ASCII digits with an optional sign, within
    [minimum, maximum] when given; `default` for anything else (blank, "²", "1.5", "1e3",
    True, out of range)."""
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        number = value
    else:
        text = _text(value)
        if text is None or _INTEGER.fullmatch(text) is None:
            return default
        number = int(text)
    if (minimum is not None and number < minimum) or (maximum is not None and number > maximum):
        return default
    return number


def parse_id(value):
    """A database id (1 to MAX_ID, ASCII digits, no sign) from request input, or None."""
    if isinstance(value, bool):
        return None
    if not isinstance(value, int) and not ascii_digits(value):
        return None
    return parse_int(value, minimum=1, maximum=MAX_ID)


def _text(value):
    if value is None:
        return None
    text = value if isinstance(value, str) else str(value) if isinstance(value, int) else None
    if text is None:
        return None
    text = text.strip(" \t\r\n")
    return text if 0 < len(text) <= _MAX_LENGTH else None


_DIGIT_RUNS = re.compile(r"([0-9]+)")


JSON_INT_DIGITS = 4300  # Python's default limit of an integer literal (sys.int_info.default_max_str_digits)


def json_int(literal):
    """`parse_int` for json.loads: an integer literal of more than JSON_INT_DIGITS digits raises
    ValueError, whatever limit the process has set for itself (a process that raised it, as the
    equivalence checks do, would otherwise read a 100,000-digit literal)."""
    if len(literal) - (literal[:1] == "-") > JSON_INT_DIGITS:
        raise ValueError(f"Exceeds the limit ({JSON_INT_DIGITS} digits) for an integer literal")
    return int(literal)


def natural_key(text):
    """A sort key for natural order ("s2" before "s10"): runs of ASCII digits compare as numbers
    (by length without leading zeros, then digit by digit: no int(), so a run of any length is
    fine), everything else case-folded as text. Other digits ("²", "٣") are text like letters."""
    key = []
    for part in _DIGIT_RUNS.split(text or ""):
        if not part:
            continue
        if part[0] in "0123456789":
            significant = part.lstrip("0") or "0"
            key.append((0, len(significant), significant, part))
        else:
            key.append((1, 0, part.casefold(), part))
    return key
