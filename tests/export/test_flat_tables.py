"""The flat tables (CSV, Parquet), read from the database in Arrow batches, hold exactly what
the full JSONL export says: the same rows in the same order, the same values and types.

The reference derives them from the JSONL lines the way the first version of the export did
(tests/export/flat_oracle.py); CSV files must be byte for byte what it wrote.
"""
import csv
import io
import json
from datetime import UTC, datetime

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from annotation.export import tables, writers
from annotation.export.writers import write_export
from annotation.models import Label, Response
from core.csv_cells import safe_row

from .flat_oracle import tables_from_full_lines
from .test_round_trip import _annotate, _judge, _scan

pytestmark = pytest.mark.django_db

TYPES = {"string": pa.string(), "float": pa.float64(), "int": pa.int64(), "bool": pa.bool_()}
SCHEMAS = {
    "responses": "sss" "ssfs" "sfsfsis",
    "annotations": "sss" "sbfsbsisi",
    "step_labels": "sss" "sisiisfss",
    "adjudications": "sss" "sfsss",
    "judge_results": "sss" "sisffsiifiissbs",
}
LETTERS = {"s": pa.string(), "f": pa.float64(), "i": pa.int64(), "b": pa.bool_()}


@pytest.fixture
def rich_data(sample_data, annotator, reviewer):
    _annotate(annotator, reviewer)
    _judge(reviewer)
    _scan(reviewer)
    response = Response.objects.filter(source="synthetic").order_by("id").first()
    Label.objects.create(  # non-ASCII JSON keys, a whole-second time, a null total
        response=response, annotator=reviewer, sub_scores={"(1)": 1.5, "Teil ü": 2}, total=None, submitted=True,
        submitted_at=datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC), comment="naïve, \"quoted\"\nnew line",
    )
    Label.objects.filter(annotator__isnull=False, comment="ok").update(comment="=HYPERLINK(\"x\")", total=-1)


def _expected(tmp_path, responses):
    write_export(responses, "jsonl", tmp_path / "jsonl")
    lines = [json.loads(line) for line in (tmp_path / "jsonl" / "dataset.jsonl").read_text().splitlines()]
    return tables_from_full_lines(lines)


def _csv_bytes(rows):
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(safe_row(row) for row in rows)  # as the first version wrote them, formulas neutralised
    return buffer.getvalue().encode()


@pytest.mark.parametrize("selection", [{}, {"source": "human"}])
def test_flat_tables_equal_the_full_export(rich_data, tmp_path, selection):
    responses = Response.objects.filter(**selection)
    expected = _expected(tmp_path, responses)
    assert set(expected) == set(SCHEMAS) if not selection else {"responses", "annotations", "judge_results"} <= set(expected)
    csv_manifest = write_export(responses, "csv", tmp_path / "csv")
    parquet_manifest = write_export(responses, "parquet", tmp_path / "parquet")
    assert set(csv_manifest["files"]) == {f"{name}.csv" for name in expected}
    assert set(parquet_manifest["files"]) == {f"{name}.parquet" for name in expected}
    for name, rows in expected.items():
        assert (tmp_path / "csv" / f"{name}.csv").read_bytes() == _csv_bytes(rows), name
        table = pq.read_table(tmp_path / "parquet" / f"{name}.parquet")
        assert table.schema.names == list(rows[0]), name
        assert [field.type for field in table.schema] == [LETTERS[c] for c in SCHEMAS[name]], name
        assert table.to_pylist() == rows, name
        assert csv_manifest["files"][f"{name}.csv"]["rows"] == len(rows)


def test_batches_are_bounded_and_keep_the_order(rich_data, tmp_path):
    responses = Response.objects.all()
    table = tables.core_tables(responses)[1]
    batches = list(writers.iter_batches(table, batch_rows=7))
    assert all(batch.num_rows <= 7 for batch, _ in batches) and len(batches) > 5
    ids = [last for _, last in batches]
    assert ids == sorted(ids)
    whole = pa.Table.from_batches([batch for batch, _ in batches]).to_pylist()
    assert whole == _expected(tmp_path, responses)["annotations"]


def test_progress_reaches_the_total(rich_data, tmp_path):
    seen = []
    write_export(Response.objects.all(), "parquet", tmp_path, on_progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (64, 64)
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)


def test_wide_rows_make_smaller_batches(rich_data):
    table = tables.core_tables(Response.objects.all())[0]
    batches = [batch for batch, _ in writers.iter_batches(table, batch_rows=30, batch_bytes=12_000)]
    sizes = [batch.num_rows for batch in batches]
    assert sizes[0] == 30 and sum(sizes) == 64 and max(sizes[1:]) < 30
