"""The one guard on decoded JSON from outside, before anything reads it: nesting deeper than
MAX_JSON_DEPTH levels, a NUL character (PostgreSQL stores neither text nor JSON with one), and an
integer literal longer than Python reads. Used by every importer (`annotation.importers`, the full
JSONL load, judge results) and by the API's JSON parser (`core.api_parsers`); the importers' field
checks (`annotation.importers.checks`) come after it.
"""
import json

from django.utils.text import format_lazy
from django.utils.translation import gettext, gettext_lazy

from core.numbers import JSON_INT_DIGITS

# Deeper JSON than this is refused by every importer, whether or not Python's decoder could read
# it: nothing we export nests past about ten levels, and pages, exports and the API walk stored
# JSON recursively.
MAX_JSON_DEPTH = 100
TOO_DEEP = gettext_lazy("the JSON is nested too deeply to read")
HAS_NUL = gettext_lazy("holds a NUL character (\\u0000), which the database cannot store")
TOO_DEEP_FIELD = format_lazy(gettext_lazy("is nested too deeply to read (more than {levels} levels)"),
                             levels=MAX_JSON_DEPTH)
# Python reads integer literals of at most this many digits by default (4,300): json.loads raises a
# bare ValueError on a longer one, which no importer expected. Fixed here, whatever the process set.
MAX_INTEGER_DIGITS = JSON_INT_DIGITS


class LongInteger:
    """Where the importers' decoder met an integer literal longer than Python reads: it stands in
    for the number, and json_problem refuses it with its record and field."""

    __slots__ = ("digits",)

    def __init__(self, digits):
        self.digits = digits

    def __repr__(self):
        return f"<integer of {self.digits} digits>"


def read_integer(literal):
    """parse_int of the importers' decoder: an int, or a LongInteger for a literal too long to read."""
    digits = len(literal) - (literal[:1] == "-")
    if digits > MAX_INTEGER_DIGITS:
        return LongInteger(digits)
    return int(literal)


def loads(text):
    """json.loads for imported files: an over-long integer literal becomes a LongInteger (refused
    by json_problem with its field) instead of a ValueError no caller expects. Raises
    json.JSONDecodeError and RecursionError as json.loads does."""
    return json.loads(text, parse_int=read_integer)


def decoder():
    """A json.JSONDecoder reading integers as `loads` does (for raw_decode of a stream)."""
    return json.JSONDecoder(parse_int=read_integer)


def long_integer_problem(integer):
    return gettext("is a whole number of %(digits)s digits, more than %(limit)s (too long to read)") % {
        "digits": integer.digits, "limit": MAX_INTEGER_DIGITS}


def _path_to(value, wanted):
    """The path ("a.b[2]") of the object `wanted` inside `value`, or "" (a walk without recursion)."""
    stack = [(value, "")]
    while stack:
        item, path = stack.pop()
        if item is wanted:
            return path
        if isinstance(item, dict):
            stack.extend((child, f"{path}.{key}" if path else str(key)) for key, child in item.items())
        elif isinstance(item, list):
            stack.extend((child, f"{path}[{index}]") for index, child in enumerate(item))
    return ""


def json_problem(value, limit=MAX_JSON_DEPTH):
    """(key, problem) when a decoded JSON object cannot be imported, else None: it nests lists
    and objects deeper than `limit`, holds a NUL character (PostgreSQL stores neither text
    nor JSON with one), or an integer literal too long to read (a LongInteger of `loads`). `key`
    is the object's key the problem is under (for a long integer, its whole path). One walk, no
    recursion."""
    stack = [(item, 2, key) for key, item in value.items()] if isinstance(value, dict) else [(value, 1, "")]
    while stack:
        item, depth, key = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return key, HAS_NUL
            continue
        if isinstance(item, LongInteger):
            return (_path_to(value, item) or key), long_integer_problem(item)
        if isinstance(item, dict):
            if any("\x00" in name for name in item):
                return key, HAS_NUL
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return key, TOO_DEEP_FIELD
        stack.extend((child, depth + 1, key) for child in children if isinstance(child, (dict, list, str, LongInteger)))
    return None
