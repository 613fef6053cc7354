"""Write an export to a folder: the data file(s) and a manifest with counts and checksums.

`FORMATS` is the registry of formats and `write_export` runs the one asked for. CSV and Parquet
write the flat tables of tables.py (the queries), read here from a cursor into Arrow record
batches and written batch by batch (`_CsvSink`, `_ParquetSink`)."""
import csv
import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path

from django.db import connection
from django.db.models import Max, Min
from django.utils import timezone
from django.utils.translation import gettext

from core.csv_cells import safe_text_column

from . import tables
from .full import SCHEMA_VERSION, iter_full_lines
from .release import iter_release_records
from .release import left_out as release_left_out

FORMATS = ("realmath", "jsonl", "csv", "parquet")

BATCH_ROWS = 10_000
BATCH_BYTES = 8 * 1024 * 1024  # long transcripts make batches of fewer rows
# Column kinds: string, float, int, bool as they are; json (a JSON field) and time (a date-time)
# are written as text, the way the full JSONL export writes them.
ARROW_TYPES = {"string": "string", "json": "string", "time": "string", "float": "float64", "int": "int64", "bool": "bool_"}


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _write_release(queryset, out_dir, on_progress):
    path = out_dir / "realmath_eval.json"
    total = queryset.count()
    rows = 0
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("[")
        for record in iter_release_records(queryset):
            handle.write(("," if rows else "") + "\n" + json.dumps(record, ensure_ascii=False))
            rows += 1
            if on_progress and rows % 500 == 0:
                on_progress(rows, total)
        handle.write("\n]\n")
    return {path.name: rows}


def _write_jsonl(queryset, out_dir, on_progress):
    path = out_dir / "dataset.jsonl"
    rows = 0
    with open(path, "w", encoding="utf-8") as handle:
        for line in iter_full_lines(queryset, on_progress=on_progress):
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
            rows += 1
    return {path.name: rows}


class _CsvSink:
    """A CSV table written with Python's csv module, so cells read as before (True/False, 3.0, an empty
    cell for null); text cells that a spreadsheet would run as a formula are neutralised (csv_cells)."""

    suffix = ".csv"

    def __init__(self, path, table):
        self.handle = open(path, "w", encoding="utf-8", newline="")
        self.writer = csv.writer(self.handle)
        self.writer.writerow([name for name, _ in table.columns])

    def write(self, batch):
        self.writer.writerows(zip(*(self.cells(batch, i) for i in range(batch.num_columns))))

    @staticmethod
    def cells(batch, index):
        """The values of one column as CSV cells: the one place that turns Arrow values into cells."""
        values = batch.column(index).to_pylist()
        return safe_text_column(values) if batch.schema.field(index).type == "string" else values

    def close(self):
        self.handle.close()


class _ParquetSink:
    suffix = ".parquet"

    def __init__(self, path, table):
        import pyarrow.parquet as pq  # slow import: only Parquet exports need it

        self.writer = pq.ParquetWriter(path, schema(table), compression="zstd")

    def write(self, batch):
        self.writer.write_batch(batch)

    def close(self):
        self.writer.close()


# --- flat tables as Arrow record batches (CSV and Parquet) --------------------------------

def _json_text_sqlite(value):
    # Django wrote the text with json.dumps (ASCII escapes); without escapes it is already
    # what json.dumps(..., ensure_ascii=False) gives.
    if value is None:
        return "null"
    return value if "\\u" not in value else json.dumps(json.loads(value), ensure_ascii=False)


def _json_text(value):
    return "null" if value is None else json.dumps(json.loads(value), ensure_ascii=False)


def _time_sqlite(value):
    # Naive UTC: a datetime where the column type is declared, else the stored text.
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value.replace(tzinfo=UTC).isoformat()


def _time(value):
    return None if value is None else value.isoformat()


def _arrays(pa, columns, values_by_column, sqlite):
    arrays = []
    for (_, kind), values in zip(columns, values_by_column):
        if kind == "json":
            values = list(map(_json_text_sqlite if sqlite else _json_text, values))
        elif kind == "time":
            values = list(map(_time_sqlite if sqlite else _time, values))
        if kind == "bool" and sqlite:  # SQLite gives 0 and 1 for expressions, bools for columns
            values = [None if v is None else bool(v) for v in values]
        arrays.append(pa.array(values, type=getattr(pa, ARROW_TYPES[kind])()))
    return arrays


def schema(table):
    import pyarrow as pa  # slow import: only Parquet exports need it

    return pa.schema([(name, getattr(pa, ARROW_TYPES[kind])()) for name, kind in table.columns])


def iter_batches(table, batch_rows=BATCH_ROWS, batch_bytes=BATCH_BYTES):
    """Yield (record batch, response id of its last row) for a table.

    A batch has at most `batch_rows` rows, fewer when its rows are wide: the first is small, and
    after each the row count is set so that the next holds about `batch_bytes`.
    """
    import pyarrow as pa  # slow import: only Parquet exports need it

    sql, params = table.queryset.query.sql_with_params()
    table_schema = schema(table)
    sqlite = connection.vendor == "sqlite"
    width = len(table.columns)
    # A named (server-side) cursor on PostgreSQL; SQLite steps through its result set as we fetch.
    rows_wanted = min(batch_rows, 256)  # a first small batch measures how wide the rows are
    with connection.chunked_cursor() as cursor:
        cursor.execute(sql, params)
        while rows := cursor.fetchmany(rows_wanted):
            values_by_column = list(zip(*rows))
            batch = pa.record_batch(_arrays(pa, table.columns, values_by_column[:width], sqlite), schema=table_schema)
            last = rows[-1][width]
            del rows, values_by_column
            yield batch, last
            rows_wanted = min(batch_rows, max(16, batch_bytes * batch.num_rows // max(batch.nbytes, 1)))
            del batch  # not alive while the next one is built


def _write_tables(queryset, out_dir, on_progress, sink_class):
    """One file per table that has rows, streamed batch by batch from the database."""
    bounds = queryset.aggregate(low=Min("pk"), high=Max("pk"))
    total = queryset.count()
    span = (bounds["high"] - bounds["low"] + 1) if bounds["low"] is not None else 1
    flat = tables.flat_tables(queryset)
    counts = {}
    for number, table in enumerate(flat):
        sink = None
        try:
            for batch, last_response_id in iter_batches(table):
                if sink is None:
                    sink = sink_class(out_dir / f"{table.name}{sink_class.suffix}", table)
                sink.write(batch)
                counts[table.name] = counts.get(table.name, 0) + batch.num_rows
                del batch  # not alive while the next one is built
                if on_progress:
                    within = (last_response_id - bounds["low"] + 1) / span
                    on_progress(int(total * (number + within) / len(flat)), total)
        finally:
            if sink is not None:
                sink.close()
    if on_progress:
        on_progress(total, total)
    return {f"{name}{sink_class.suffix}": rows for name, rows in counts.items()}


def write_export(queryset, fmt, out_dir, *, filters=None, on_progress=None):
    """Export the responses in queryset as `fmt` into out_dir; returns the manifest (also written)."""
    if fmt not in FORMATS:
        raise ValueError(gettext("unknown format %(fmt)s; choose one of %(join)s") % {"fmt": repr(fmt), "join": ', '.join(FORMATS)})
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    writers = {
        "realmath": _write_release,
        "jsonl": _write_jsonl,
        "csv": lambda q, o, p: _write_tables(q, o, p, _CsvSink),
        "parquet": lambda q, o, p: _write_tables(q, o, p, _ParquetSink),
    }
    rows = writers[fmt](queryset, out_dir, on_progress)
    manifest = {
        "schema_version": SCHEMA_VERSION,
        "format": fmt,
        "exported_at": timezone.now().isoformat(),
        "filters": filters or {},
        "counts": {"responses": queryset.count(), "questions": queryset.values("question").distinct().count()},
        **({"left_out": release_left_out(queryset)} if fmt == "realmath" else {}),
        "files": {
            name: {"rows": count, "bytes": (out_dir / name).stat().st_size, "sha256": _sha256(out_dir / name)}
            for name, count in sorted(rows.items())
        },
    }
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    return manifest
