"""Write an export to a folder: the data file(s) and a manifest with counts and checksums."""
import csv
import hashlib
import json
from pathlib import Path

from django.utils import timezone

from .csv_cells import safe_row
from .full import SCHEMA_VERSION, iter_full_lines
from .release import iter_release_records
from .release import left_out as release_left_out
from .tables import TableBuilder

FORMATS = ("realmath", "jsonl", "csv", "parquet")
ROWS_PER_BATCH = 2000


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
    """A CSV table; text cells that a spreadsheet would run as a formula are neutralised (csv_cells)."""

    suffix = ".csv"

    def __init__(self, path, columns):
        self.handle = open(path, "w", encoding="utf-8", newline="")
        self.writer = csv.DictWriter(self.handle, fieldnames=[name for name, _ in columns], extrasaction="ignore")
        self.writer.writeheader()

    def write(self, rows):
        self.writer.writerows(safe_row(row) for row in rows)

    def close(self):
        self.handle.close()


class _ParquetSink:
    suffix = ".parquet"
    TYPES = {"string": "string", "float": "float64", "int": "int64", "bool": "bool_"}

    def __init__(self, path, columns):
        import pyarrow as pa  # imported here: ~0.7 s, and only the Parquet format needs it
        import pyarrow.parquet as pq

        self.pa = pa
        self.columns = columns
        self.schema = pa.schema([(name, getattr(pa, self.TYPES[kind])()) for name, kind in columns])
        self.writer = pq.ParquetWriter(path, self.schema, compression="zstd")

    def write(self, rows):
        arrays = []
        for name, kind in self.columns:
            values = [row.get(name) for row in rows]
            if kind == "string":
                values = [None if v is None else str(v) for v in values]
            arrays.append(self.pa.array(values, type=self.schema.field(name).type))
        self.writer.write_batch(self.pa.record_batch(arrays, schema=self.schema))

    def close(self):
        self.writer.close()


def _write_tables(queryset, out_dir, on_progress, sink_class):
    builder = TableBuilder()
    sinks, buffers, counts = {}, {}, {}

    def flush(table):
        if buffers.get(table):
            if table not in sinks:
                columns = builder.columns_for(table, buffers[table][0])
                sinks[table] = (sink_class(out_dir / f"{table}{sink_class.suffix}", columns))
            sinks[table].write(buffers[table])
            counts[table] = counts.get(table, 0) + len(buffers[table])
            buffers[table] = []

    for line in iter_full_lines(queryset, on_progress=on_progress):
        if line["type"] == "question":
            builder.add_question(line)
        if line["type"] != "response":
            continue
        for table, rows in builder.rows(line).items():
            buffers.setdefault(table, []).extend(rows)
            if len(buffers[table]) >= ROWS_PER_BATCH:
                flush(table)
    for table in list(buffers):
        flush(table)
    for sink in sinks.values():
        sink.close()
    return {f"{table}{sink_class.suffix}": rows for table, rows in counts.items()}


def write_export(queryset, fmt, out_dir, *, filters=None, on_progress=None):
    """Export the responses in queryset as `fmt` into out_dir; returns the manifest (also written)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
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
