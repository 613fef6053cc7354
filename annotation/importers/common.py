"""Shared pieces of the dataset importers: loading, field checks and results."""
import hashlib
import json
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from django.conf import settings


class ImportFormatError(ValueError):
    """The file cannot be imported; nothing was written. The message names record and field."""


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


def load_json_array(raw, file_name):
    """Parse bytes as a JSON array of objects, or raise ImportFormatError."""
    if len(raw) > settings.IMPORT_MAX_BYTES:
        raise ImportFormatError(f"{file_name}: file is larger than {settings.IMPORT_MAX_BYTES} bytes.")
    if not raw.strip():
        raise ImportFormatError(f"{file_name}: the file is empty.")
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise ImportFormatError(f"{file_name}: not UTF-8 text ({exc.reason} at byte {exc.start}).") from exc
    except json.JSONDecodeError as exc:
        raise ImportFormatError(
            f"{file_name}: not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}."
        ) from exc
    except RecursionError:  # the decoder recurses once per level of [[[...]]]
        raise ImportFormatError(f"{file_name}: the JSON is nested too deeply to read.") from None
    if not isinstance(data, list):
        raise ImportFormatError(f"{file_name}: expected a JSON array of records, got {type(data).__name__}.")
    if not data:
        raise ImportFormatError(f"{file_name}: the array holds no records.")
    for index, record in enumerate(data):
        if not isinstance(record, dict):
            raise ImportFormatError(f"record {index}: expected an object, got {type(record).__name__}.")
    return data


def sha256_of(raw):
    return hashlib.sha256(raw).hexdigest()


def _type_name(value):
    return "null" if value is None else type(value).__name__


def require(record, index, name, kinds, *, optional=False, allow_empty=True):
    """Return record[name] after checking it exists and has one of the given types."""
    if name not in record:
        if optional:
            return None
        raise ImportFormatError(f"record {index}: missing field '{name}'.")
    value = record[name]
    if optional and value is None:
        return None
    wanted = kinds if isinstance(kinds, tuple) else (kinds,)
    # bool is an int in Python but never a valid number or text here.
    if isinstance(value, bool) and bool not in wanted or not isinstance(value, wanted):
        names = " or ".join(k.__name__ for k in wanted).replace("str", "string").replace("float", "number")
        raise ImportFormatError(f"record {index}: field '{name}' must be {names}, got {_type_name(value)}.")
    if not allow_empty and isinstance(value, str) and not value.strip():
        raise ImportFormatError(f"record {index}: field '{name}' is empty.")
    return value


def to_decimal(value, index, name):
    try:
        number = Decimal(str(value))
    except InvalidOperation as exc:
        raise ImportFormatError(f"record {index}: field '{name}' is not a number: {value!r}.") from exc
    if not number.is_finite():
        raise ImportFormatError(f"record {index}: field '{name}' is not a finite number.")
    if abs(number) >= Decimal("100000"):
        raise ImportFormatError(f"record {index}: field '{name}' is out of range: {value!r}.")
    return number


def number_type(value):
    """'int' or 'float', so that an export can write numbers as the source did."""
    return "int" if isinstance(value, int) else "float"
