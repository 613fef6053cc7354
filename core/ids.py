"""Ids from request input: the one rule every page, API view and filter parses ids by."""
import re

MAX_ID = 2**63 - 1  # the largest value of a database id column
_DIGITS = re.compile(r"[0-9]+")


def id_param(value):
    """A database id from request input (a query parameter, a form field), or None.

    Only ASCII digits count ("²" and "٣" are digits to Python's str.isdigit, not ids)."""
    text = str(value or "").strip()
    return int(text) if _DIGITS.fullmatch(text) and int(text) <= MAX_ID else None


def filter_by_id(queryset, field, value):
    """Filter on an id given as request text: no filter without digits, nothing for an id no
    column can hold (it names no row, and would overflow SQLite's integers)."""
    if not _DIGITS.fullmatch(str(value or "").strip()):
        return queryset
    pk = id_param(value)
    return queryset.filter(**{field: pk}) if pk is not None else queryset.none()
