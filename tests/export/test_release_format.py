"""Re-exporting the imported RealMath-Eval sample in the release format gives the original records."""
import json

import pytest

from annotation.export.release import RELEASE_FIELDS, iter_release_records
from annotation.models import Response

from ..conftest import REALMATH_HUMAN, REALMATH_SYNTHETIC

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("path", [REALMATH_HUMAN, REALMATH_SYNTHETIC])
def test_release_export_equals_originals_field_by_field(sample_data, path):
    originals = json.loads(path.read_text())
    exported = list(iter_release_records(Response.objects.filter(import_file=path.name).order_by("import_index")))
    assert len(exported) == len(originals)
    for original, record in zip(originals, exported):
        assert list(record) == list(original) == RELEASE_FIELDS
        for field in RELEASE_FIELDS:
            assert record[field] == original[field], field
            assert type(record[field]) is type(original[field]), field
    # Byte-level too: the same JSON text, record by record.
    assert [json.dumps(r, ensure_ascii=False) for r in exported] == [
        json.dumps(r, ensure_ascii=False) for r in originals
    ]
