"""Fixtures of the export tests: a private export folder (used by the export page and API tests)."""
import pytest


@pytest.fixture
def _export_root(settings, tmp_path):
    settings.EXPORT_ROOT = tmp_path / "exports"


from tests.s3_server import s3_bucket, s3_server  # noqa: E402, F401 (the S3 test server fixtures)
