"""Ids from request input: the one rule every page, API view and filter parses ids by, on the
one number parser (core.numbers: ASCII digits only, "²" and "٣" are not ids; 1 to MAX_ID)."""
from .numbers import MAX_ID, ascii_digits, parse_id

__all__ = ["MAX_ID", "filter_by_id", "id_param"]


def id_param(value):
    """A database id from request input (a query parameter, a form field), or None."""
    return parse_id(value)


def filter_by_id(queryset, field, value):
    """Filter on an id given as request text: no filter without digits, nothing for an id no
    column can hold (it names no row, and would overflow SQLite's integers)."""
    if not ascii_digits(value):
        return queryset
    pk = id_param(value)
    return queryset.filter(**{field: pk}) if pk is not None else queryset.none()
