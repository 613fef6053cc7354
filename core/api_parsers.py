"""The API's JSON parser: DRF's, with the importers' guard on what a body may hold.

DRF's `JSONParser` turns a decoding error (a ValueError) into a 400, but a body nested a few
thousand levels deep makes Python's decoder raise RecursionError, which it let through as a 500
on every write route (issue 40). This parser answers 400 to that, and to what the importers refuse
in any JSON (`core.json_guard.json_problem`, the one depth guard: nesting deeper than
MAX_JSON_DEPTH levels, a NUL character, which PostgreSQL can store in neither text nor JSON), and
to a number too large to be a float (`1e999` decodes to infinity; JSON has no infinity, and
`NaN`/`Infinity` literals were refused already). An integer literal longer than Python reads is a
ValueError, a 400 as before. It is the default parser of every API view (settings), and views
that list their parsers name it instead of DRF's.
"""
import codecs
import math

from django.utils.translation import gettext
from rest_framework import parsers
from rest_framework.exceptions import ParseError
from rest_framework.settings import api_settings
from rest_framework.utils import json

from core.json_guard import TOO_DEEP, json_problem


def _finite_float(literal):
    number = float(literal)
    if not math.isfinite(number):
        raise ValueError(gettext("the number %(number)s is too large") % {"number": literal[:40]})
    return number


class JSONParser(parsers.JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        encoding = parsers.get_encoding(parser_context or {})
        try:
            decoded_stream = codecs.getreader(encoding)(stream)
            parse_constant = json.strict_constant if api_settings.STRICT_JSON else None
            data = json.load(decoded_stream, parse_constant=parse_constant, parse_float=_finite_float)
        except ValueError as exc:
            raise ParseError(gettext("JSON parse error - %(error)s") % {"error": exc}) from None
        except RecursionError:  # the decoder recurses once per level of [[[...]]]
            raise ParseError(gettext("JSON parse error - %(error)s") % {"error": TOO_DEEP}) from None
        problem = json_problem(data)
        if problem is None:
            return data
        key, text = problem
        if key:
            raise ParseError(gettext("JSON parse error - %(field)s: %(error)s") % {"field": key, "error": text})
        raise ParseError(gettext("JSON parse error - %(error)s") % {"error": text})
