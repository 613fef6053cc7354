import json

import pandas as pd
import pytest
from django.core.management import CommandError, call_command

from annotation.models import Response

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_flat_tables_hold_every_response_and_label(sample_data, tmp_path, fmt):
    call_command("export_dataset", "--format", fmt, "--out", str(tmp_path))
    read = pd.read_csv if fmt == "csv" else pd.read_parquet
    responses = read(tmp_path / f"responses.{fmt}")
    annotations = read(tmp_path / f"annotations.{fmt}")
    assert len(responses) == 64 and len(annotations) == 64
    assert responses["gold_score"].sum() == pytest.approx(float(sum(r.gold_score for r in Response.objects.all())))
    assert set(responses["source"]) == {"human", "synthetic"}
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["counts"]["responses"] == 64
    assert manifest["files"][f"responses.{fmt}"]["rows"] == 64
    assert len(manifest["files"][f"responses.{fmt}"]["sha256"]) == 64


def test_filters_apply(sample_data, tmp_path):
    call_command("export_dataset", "--format", "realmath", "--out", str(tmp_path), "--source", "synthetic")
    records = json.loads((tmp_path / "realmath_eval.json").read_text())
    assert len(records) == 32 and all("_t_" in r["student_id"] for r in records)


def test_empty_selection_is_an_error(sample_data, tmp_path):
    with pytest.raises(CommandError, match="No response matches"):
        call_command("export_dataset", "--format", "jsonl", "--out", str(tmp_path), "--score-min", "99")


def test_import_dataset_command(sample_data, tmp_path, capsys):
    call_command("export_dataset", "--format", "jsonl", "--out", str(tmp_path))
    call_command("import_dataset", str(tmp_path / "dataset.jsonl"))
    assert "responses_skipped: 64" in capsys.readouterr().out
