"""Fixtures of the export tests: a private export folder (used by the export page and API tests),
and a temporary folder of each test's own, where a worker's export makes its scratch folder."""
import tempfile
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _own_temporary_folder(tmp_path, monkeypatch):
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def scratch_left():
    """The export scratch folders left in this test's temporary folder (none once a job ended)."""
    return list(Path(tempfile.gettempdir()).glob("realmath-export-*"))


@pytest.fixture
def _export_root(settings, tmp_path):
    settings.EXPORT_ROOT = tmp_path / "exports"


from tests.s3_server import s3_bucket, s3_server  # noqa: E402, F401 (the S3 test server fixtures)
