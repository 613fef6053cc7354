"""Checks of imported values before anything is written: shapes that check each field against the
column it goes to (type, range, length, choices), after the one guard on any decoded JSON
(`core.json_guard`: depth, NUL characters, integers too long to read).

A shape describes a JSON value: `Obj(model, keys)` is an object whose keys are columns of
`model` (each checked by the model field's own type, null, max_length, choices, integer range
and decimal digits), `ListOf(shape)` a list of them, `MapOf(value)` an object of string keys.
`check(shape, value, path)` raises `Refused(path, problem)`; the importers turn it into
"line N, field PATH: PROBLEM." (full JSONL) or "record N: field 'PATH' ..." (release files).
"""
import math
from datetime import date, datetime
from decimal import Decimal, InvalidOperation

from django.core.exceptions import ValidationError
from django.core.validators import DecimalValidator
from django.db import models
from django.db.backends.base.operations import BaseDatabaseOperations
from django.utils.translation import gettext, pgettext

from core.json_guard import LongInteger

# The limits of PostgreSQL's integer columns, also on SQLite (whose columns take any integer):
# a file that imports on one database imports on the other.
INTEGER_RANGES = BaseDatabaseOperations.integer_field_ranges


class Refused(ValueError):
    def __init__(self, path, problem):
        super().__init__(f"{path}: {problem}")
        self.path, self.problem = path, problem


def type_name(value):
    if value is None:
        return "null"
    if isinstance(value, LongInteger):
        return pgettext("JSON type", "a whole number too long to read")
    return {bool: pgettext("JSON type", "true/false"), int: pgettext("JSON type", "a whole number"),
            float: pgettext("JSON type", "a number"), str: pgettext("JSON type", "text"),
            list: pgettext("JSON type", "a list"), dict: pgettext("JSON type", "an object")}.get(type(value),
                                                                                               type(value).__name__)


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_finite(value):
    """value as a float, or a problem: a finite JSON number."""
    if not _is_number(value):
        raise ValueError(gettext("must be a number, got %(type)s") % {"type": type_name(value)})
    try:
        number = float(value)
    except OverflowError:
        raise ValueError(gettext("is out of range")) from None
    if not math.isfinite(number):
        raise ValueError(gettext("must be a finite number"))
    return number


def check_decimal(value, max_digits, decimal_places):
    """A number or a decimal string that fits a DECIMAL(max_digits, decimal_places) column."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(gettext("must be a number or a decimal string, got %(type)s") % {"type": type_name(value)})
    if isinstance(value, str) and len(value) > 60:
        raise ValueError(gettext("is not a decimal number"))
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation:
        raise ValueError(gettext("is not a number: %(value)s") % {"value": repr(str(value)[:40])}) from None
    if not number.is_finite():
        raise ValueError(gettext("must be a finite number"))
    limit = Decimal(10) ** (max_digits - decimal_places)
    if abs(number) >= limit:
        raise ValueError(gettext("is out of range (at most %(n)s digits before the point)")
                         % {"n": max_digits - decimal_places})
    try:
        DecimalValidator(max_digits, decimal_places)(number)
    except ValidationError:
        raise ValueError(gettext("has more than %(n)s decimal places") % {"n": decimal_places}) from None
    return number


def check_column(field, value):
    """Raise ValueError(problem) if `value` (from JSON) cannot be stored in `field`'s column."""
    if value is None:
        if field.null:
            return
        raise ValueError(gettext("must not be null"))
    if isinstance(field, models.BooleanField):
        if not isinstance(value, bool):
            raise ValueError(gettext("must be true or false, got %(type)s") % {"type": type_name(value)})
    elif isinstance(field, (models.CharField, models.TextField)):
        if not isinstance(value, str):
            raise ValueError(gettext("must be text, got %(type)s") % {"type": type_name(value)})
        if "\x00" in value:
            raise ValueError(gettext("holds a NUL character"))
        if field.max_length is not None and len(value) > field.max_length:
            raise ValueError(gettext("is %(n)s characters long, longer than %(max)s")
                             % {"n": len(value), "max": field.max_length})
        if field.choices and not (value == "" and field.blank):
            allowed = [str(key) for key, _ in field.flatchoices]
            if value not in allowed:
                raise ValueError(gettext("must be one of %(values)s; got %(value)s")
                                 % {"values": ", ".join(allowed), "value": repr(value[:40])})
    elif isinstance(field, models.IntegerField):  # and its Positive/Small/Big kinds
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(gettext("must be a whole number, got %(type)s") % {"type": type_name(value)})
        low, high = INTEGER_RANGES.get(field.get_internal_type(), INTEGER_RANGES["IntegerField"])
        if not low <= value <= high:
            raise ValueError(gettext("must be a whole number from %(low)s to %(high)s") % {"low": low, "high": high})
        _run_validators(field, value)
    elif isinstance(field, models.FloatField):
        _run_validators(field, check_finite(value))
    elif isinstance(field, models.DecimalField):
        _run_validators(field, check_decimal(value, field.max_digits, field.decimal_places))
    elif isinstance(field, models.DateTimeField):
        check_time(value)
    elif isinstance(field, models.DateField):
        if not isinstance(value, str):
            raise ValueError(gettext("must be an ISO date, got %(type)s") % {"type": type_name(value)})
        try:
            date.fromisoformat(value[:10])
        except ValueError:
            raise ValueError(gettext("is not an ISO date: %(value)s") % {"value": repr(value[:40])}) from None
    elif isinstance(field, models.JSONField):
        default = field.get_default()
        wanted = type(default) if isinstance(default, (dict, list)) else None
        if wanted and not isinstance(value, wanted):
            raise ValueError(gettext("must be %(kind)s, got %(type)s") % {"kind": type_name(default), "type": type_name(value)})


def _run_validators(field, value):
    """The field's own validators (minimum and maximum values, ...), as its form would run them."""
    try:
        field.run_validators(value)
    except ValidationError as exc:
        raise ValueError(" ".join(str(m) for m in exc.messages).rstrip(".")) from None


def check_time(value):
    if not isinstance(value, str):
        raise ValueError(gettext("must be an ISO date-time, got %(type)s") % {"type": type_name(value)})
    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(gettext("is not an ISO date-time: %(value)s") % {"value": repr(value[:40])}) from None


class Shape:
    def check(self, value, path, context):  # pragma: no cover - interface
        raise NotImplementedError


class Column(Shape):
    """One column of a model (for a key whose name differs from the field's, or a lone value)."""

    def __init__(self, model, field_name, *, null=None):
        self.field = model._meta.get_field(field_name)
        self.null = self.field.null if null is None else null

    def check(self, value, path, context):
        if value is None and self.null:
            return
        try:
            check_column(self.field, value)
        except ValueError as exc:
            raise Refused(path, str(exc)) from None


class Value(Shape):
    """A value checked by a function raising ValueError(problem)."""

    def __init__(self, function, *, null=True):
        self.function, self.null = function, null

    def check(self, value, path, context):
        if value is None and self.null:
            return
        try:
            self.function(value)
        except ValueError as exc:
            raise Refused(path, str(exc)) from None


def text(max_length=None):
    def check(value):
        if not isinstance(value, str):
            raise ValueError(gettext("must be text, got %(type)s") % {"type": type_name(value)})
        if "\x00" in value:
            raise ValueError(gettext("holds a NUL character"))
        if max_length is not None and len(value) > max_length:
            raise ValueError(gettext("is %(n)s characters long, longer than %(max)s") % {"n": len(value), "max": max_length})
    return Value(check)


def kind_of(*kinds, label):
    def check(value):
        if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
            raise ValueError(gettext("must be %(kind)s, got %(type)s") % {"kind": label, "type": type_name(value)})
    return Value(check)


class ListOf(Shape):
    def __init__(self, item, *, unique=None, null=True):
        self.item, self.unique, self.null = item, unique, null

    def check(self, value, path, context):
        if value is None and self.null:
            return
        if not isinstance(value, list):
            raise Refused(path, gettext("must be a list, got %(type)s") % {"type": type_name(value)})
        seen = set()
        for index, item in enumerate(value):
            self.item.check(item, f"{path}[{index}]", context)
            key = self.unique(item) if self.unique else None
            if key is not None:
                if key in seen:
                    raise Refused(f"{path}[{index}]", gettext("repeats %(key)s of an earlier entry") % {"key": repr(key)})
                seen.add(key)


class MapOf(Shape):
    """An object of string keys (at most `key_length` long) to values of one shape."""

    def __init__(self, value, *, key_length=200, null=True):
        self.value, self.key_length, self.null = value, key_length, null

    def check(self, value, path, context):
        if value is None and self.null:
            return
        if not isinstance(value, dict):
            raise Refused(path, gettext("must be an object, got %(type)s") % {"type": type_name(value)})
        for key, item in value.items():
            if len(key) > self.key_length or "\x00" in key:
                raise Refused(path, gettext("has a key longer than %(n)s characters") % {"n": self.key_length})
            self.value.check(item, f"{path}.{key}", context)


NUMBER = Value(check_finite)
POINTS = Value(lambda value: check_decimal(value, 7, 2))


class Obj(Shape):
    """An object whose `keys` are columns of `model` (checked by the fields themselves), with
    `shapes` for the keys that are not plain columns and the `required` keys."""

    def __init__(self, model, keys=(), *, shapes=None, required=(), null=False, extra=None):
        self.columns = {key: Column(model, key) for key in keys} if model else {}
        self.shapes = {**self.columns, **(shapes or {})}
        self.required, self.null, self.extra = tuple(required), null, extra

    def with_shapes(self, shapes):
        """The same object, with more shapes (other apps' sections of a response line)."""
        copy = Obj(None, required=self.required, null=self.null, extra=self.extra)
        copy.shapes = {**self.shapes, **shapes}
        return copy

    def check(self, value, path, context):
        if value is None and self.null:
            return
        if not isinstance(value, dict):
            raise Refused(path or "line", gettext("must be an object, got %(type)s") % {"type": type_name(value)})
        prefix = f"{path}." if path else ""
        for key in self.required:
            if value.get(key) is None:
                raise Refused(f"{prefix}{key}", gettext("is missing"))
        for key, shape in self.shapes.items():
            if key in value:
                shape.check(value[key], f"{prefix}{key}", context)
        if self.extra:
            try:
                self.extra(value, context)
            except Refused as exc:
                raise Refused(f"{prefix}{exc.path}", exc.problem) from None


def check(shape, value, path="", context=None):
    shape.check(value, path, context)
