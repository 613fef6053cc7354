"""Shared pieces of the dataset importers: loading, field checks and results."""
import codecs
import hashlib
import io
import json
import os
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from django.conf import settings
from django.utils.translation import gettext, pgettext_lazy

from core.json_guard import TOO_DEEP, json_problem, loads
from core.json_guard import decoder as json_decoder


class ImportFormatError(ValueError):
    """The file cannot be imported; nothing was written. The message names record and field."""


def field_problem(index, name, problem):
    """The message of a record's field that cannot be imported: "record N: field 'NAME' PROBLEM."."""
    return gettext("record %(index)s: field '%(field)s' %(problem)s.") % {"index": index, "field": name,
                                                                          "problem": problem}


def _too_large(file_name):
    return gettext("%(file)s: file is larger than %(max)s bytes.") % {"file": file_name,
                                                                      "max": settings.IMPORT_MAX_BYTES}


def _not_utf8(file_name, reason, at):
    return gettext("%(file)s: not UTF-8 text (%(reason)s at byte %(at)s).") % {"file": file_name, "reason": reason,
                                                                               "at": at}


def _not_json(file_name, message, line, column):
    """The decoder's own message (English, from Python) is kept, with where it is in the file."""
    return gettext("%(file)s: not valid JSON: %(message)s at line %(line)s, column %(column)s.") % {
        "file": file_name, "message": message, "line": line, "column": column}


def _not_array(file_name, data):
    return gettext("%(file)s: expected a JSON array of records, got %(type)s.") % {"file": file_name,
                                                                                   "type": type(data).__name__}


@dataclass
class ImportResult:
    kind: str
    file_name: str
    sha256: str
    counts: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)
    report_id: int | None = None

    def count(self, key, n=1):
        self.counts[key] = self.counts.get(key, 0) + n

    def count_in(self, key, where, n=1):
        """Count under `counts[key][str(where)]` (e.g. skipped responses by the exam they sit in)."""
        bucket = self.counts.setdefault(key, {})
        bucket[str(where)] = bucket.get(str(where), 0) + n


def load_json_array(raw, file_name):
    """Parse bytes (or a binary file) as a JSON array of objects, or raise ImportFormatError."""
    raw = raw if isinstance(raw, (bytes, bytearray)) else raw.read()
    if len(raw) > settings.IMPORT_MAX_BYTES:
        raise ImportFormatError(_too_large(file_name))
    if not raw.strip():
        raise ImportFormatError(gettext("%(file)s: the file is empty.") % {"file": file_name})
    try:
        data = loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise ImportFormatError(_not_utf8(file_name, exc.reason, exc.start)) from exc
    except json.JSONDecodeError as exc:
        raise ImportFormatError(_not_json(file_name, exc.msg, exc.lineno, exc.colno)) from exc
    except RecursionError:  # the decoder recurses once per level of [[[...]]]
        raise ImportFormatError(gettext("%(file)s: %(problem)s.") % {"file": file_name, "problem": TOO_DEEP}) from None
    if not isinstance(data, list):
        raise ImportFormatError(_not_array(file_name, data))
    if not data:
        raise ImportFormatError(gettext("%(file)s: the array holds no records.") % {"file": file_name})
    for index, record in enumerate(data):
        check_record(record, index)
    return data


def check_record(record, index):
    """The one depth guard of the record importers (the full JSONL's lines have the same):
    a record is an object, nested no deeper than MAX_JSON_DEPTH, without NUL characters."""
    if not isinstance(record, dict):
        raise ImportFormatError(gettext("record %(index)s: expected an object, got %(type)s.")
                                % {"index": index, "type": type(record).__name__})
    problem = json_problem(record)
    if problem:
        raise ImportFormatError(field_problem(index, problem[0], problem[1]))


def sha256_of(raw):
    """SHA-256 of bytes, or of a binary file read in blocks (left at its start)."""
    if isinstance(raw, (bytes, bytearray)):
        return hashlib.sha256(raw).hexdigest()
    digest = hashlib.sha256()
    raw.seek(0)
    for block in iter(lambda: raw.read(1 << 20), b""):
        digest.update(block)
    raw.seek(0)
    return digest.hexdigest()


def as_stream(raw):
    """A binary file for bytes or a binary file."""
    return io.BytesIO(raw) if isinstance(raw, (bytes, bytearray)) else raw


def stream_size(stream):
    try:
        return os.fstat(stream.fileno()).st_size
    except (AttributeError, OSError, io.UnsupportedOperation):
        position = stream.seek(0, io.SEEK_END)
        stream.seek(0)
        return position


class _TextWindow:
    """The not yet parsed part of a file's text, read in blocks, with line and column bookkeeping."""

    def __init__(self, stream, file_name, block):
        self.stream, self.file_name, self.block = stream, file_name, block
        self.decoder = codecs.getincrementaldecoder("utf-8-sig")()
        self.text, self.pos, self.eof, self.fed = "", 0, False, 0
        self.line, self.column = 1, 0  # of text[0]

    def more(self):
        """Read one more block; False at the end of the file."""
        if self.eof:
            return False
        data = self.stream.read(self.block)
        self.eof = not data
        try:
            new = self.decoder.decode(data, final=self.eof)
        except UnicodeDecodeError as exc:
            pending = len(self.decoder.getstate()[0])
            at = self.fed - pending + exc.start
            raise ImportFormatError(_not_utf8(self.file_name, exc.reason, at)) from exc
        self.fed += len(data)
        self.drop()
        self.text += new
        return True

    def drop(self):
        """Forget the parsed text before pos."""
        gone = self.text[: self.pos]
        newlines = gone.count("\n")
        if newlines:
            self.line += newlines
            self.column = len(gone) - gone.rindex("\n") - 1
        else:
            self.column += len(gone)
        self.text, self.pos = self.text[self.pos :], 0

    def where(self, pos):
        before = self.text[:pos]
        newlines = before.count("\n")
        if newlines:
            return self.line + newlines, len(before) - before.rindex("\n")
        return self.line, self.column + pos + 1

    def error(self, message, pos):
        line, column = self.where(pos)
        return ImportFormatError(_not_json(self.file_name, message, line, column))

    def skip_space(self):
        """Move past white space; the next character, or "" at the end of the file."""
        while True:
            while self.pos < len(self.text) and self.text[self.pos] in " \t\r\n":
                self.pos += 1
            if self.pos < len(self.text):
                return self.text[self.pos]
            if not self.more():
                return ""

    def value(self, decoder, index):
        """Decode the JSON value at pos, reading more of the file while it is cut off."""
        while True:
            try:
                value, end = decoder.raw_decode(self.text, self.pos)
            except json.JSONDecodeError as exc:
                if self.more():
                    continue
                raise self.error(exc.msg, exc.pos) from exc
            except RecursionError:  # the decoder recurses once per level of [[[...]]]
                raise ImportFormatError(gettext("record %(index)s: %(problem)s.") % {"index": index, "problem": TOO_DEEP}) from None
            if end == len(self.text) and self.more():  # a number may go on in the next block
                continue
            self.pos = end
            return value


def iter_json_array(raw, file_name, *, block=1 << 20):
    """Yield (index, record) of a JSON array of objects in bytes or a binary file, reading the file
    in blocks so that memory holds one record at a time, not the file. Raises ImportFormatError,
    with the same messages as load_json_array, when the file is not such an array."""
    stream = as_stream(raw)
    if stream_size(stream) > settings.IMPORT_MAX_BYTES:
        raise ImportFormatError(_too_large(file_name))
    window, decoder = _TextWindow(stream, file_name, block), json_decoder()
    first = window.skip_space()
    if not first:
        raise ImportFormatError(gettext("%(file)s: the file is empty.") % {"file": file_name})
    if first != "[":
        data = window.value(decoder, 0)
        if window.skip_space():
            raise window.error("Extra data", window.pos)
        raise ImportFormatError(_not_array(file_name, data))
    window.pos += 1
    index = 0
    while True:
        following = window.skip_space()
        if following == "]" and index == 0:
            window.pos += 1
            break
        if index:
            if following == "]":
                window.pos += 1
                break
            if following != ",":
                raise window.error("Expecting ',' delimiter", window.pos)
            window.pos += 1
            window.skip_space()
        record = window.value(decoder, index)
        check_record(record, index)
        yield index, record
        index += 1
    if window.skip_space():
        raise window.error("Extra data", window.pos)
    if index == 0:
        raise ImportFormatError(gettext("%(file)s: the array holds no records.") % {"file": file_name})


# The names of the types a field may have, as the messages say them (Python's others as they are).
KIND_NAMES = {str: pgettext_lazy("JSON type", "string"), float: pgettext_lazy("JSON type", "number"),
              int: pgettext_lazy("JSON type", "int"), list: pgettext_lazy("JSON type", "list"),
              dict: pgettext_lazy("JSON type", "dict")}


def _type_name(value):
    return "null" if value is None else type(value).__name__


def require(record, index, name, kinds, *, optional=False, allow_empty=True, max_length=None):
    """Return record[name] after checking it exists and has one of the given types (text: at
    most `max_length` characters, the column's, and no NUL character, which PostgreSQL refuses)."""
    if name not in record:
        if optional:
            return None
        raise ImportFormatError(gettext("record %(index)s: missing field '%(field)s'.") % {"index": index, "field": name})
    value = record[name]
    if optional and value is None:
        return None
    wanted = kinds if isinstance(kinds, tuple) else (kinds,)
    # bool is an int in Python but never a valid number or text here.
    if isinstance(value, bool) and bool not in wanted or not isinstance(value, wanted):
        kinds = (float,) if set(wanted) == {int, float} else wanted  # a whole number is a number too
        names = gettext(" or ").join(str(KIND_NAMES.get(k, k.__name__)) for k in kinds)
        raise ImportFormatError(field_problem(index, name, gettext("must be %(kinds)s, got %(type)s")
                                              % {"kinds": names, "type": _type_name(value)}))
    if isinstance(value, str):
        if not allow_empty and not value.strip():
            raise ImportFormatError(field_problem(index, name, gettext("is empty")))
        if "\x00" in value:
            raise ImportFormatError(field_problem(index, name, gettext("holds a NUL character")))
        if max_length is not None and len(value) > max_length:
            raise ImportFormatError(field_problem(index, name, gettext("is %(n)s characters long, longer than %(max)s")
                                                  % {"n": len(value), "max": max_length}))
    return value


def finite_decimal(value, problem):
    """`value` as a finite Decimal; else ImportFormatError with `problem(what is wrong)` (the
    message that names the record and field)."""
    try:
        number = Decimal(str(value))
    except InvalidOperation as exc:
        raise ImportFormatError(problem(gettext("is not a number: %(value)s") % {"value": repr(value)})) from exc
    if not number.is_finite():
        raise ImportFormatError(problem(gettext("is not a finite number")))
    return number


def to_decimal(value, index, name):
    number = finite_decimal(value, lambda text: field_problem(index, name, text))
    if abs(number) >= Decimal("100000"):
        raise ImportFormatError(field_problem(index, name, gettext("is out of range: %(value)s") % {"value": repr(value)}))
    return number


def number_type(value):
    """'int' or 'float', so that an export can write numbers as the source did."""
    return "int" if isinstance(value, int) else "float"
