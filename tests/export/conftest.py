"""Fixtures of the export tests: a private export folder (used by the export page and API tests)."""
import pytest


@pytest.fixture
def _export_root(settings, tmp_path):
    settings.EXPORT_ROOT = tmp_path / "exports"
