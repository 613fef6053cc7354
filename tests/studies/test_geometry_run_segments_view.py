"""A geometry run's segments as JSONL in the paper's shape (studies.geometry.views.
geometry_run_segments, /grading/studies/geometry/runs/<pk>/segments.jsonl): reviewers only; the
student text is kept as data; an unknown id is a 404."""
import json

import pytest
from django.urls import reverse

from tests.conftest import assert_reviewer_only

from .helpers import lexical_geometry_run

pytestmark = pytest.mark.django_db


def test_reviewers_only_and_one_line_per_segment(annotator, reviewer):
    run = lexical_geometry_run("<b>raw</b>")
    answer = assert_reviewer_only(reverse("studies:geometry_run_segments", args=[run.pk]), annotator, reviewer)
    assert answer.status_code == 200 and answer["Content-Type"].startswith("application/x-ndjson")
    assert answer["Content-Disposition"].endswith(f'-run-{run.pk}-segments.jsonl"')
    records = [json.loads(line) for line in answer.content.decode().splitlines()]
    assert len(records) == 16
    assert {r["analysis_subset"] for r in records} == {"human", "synthetic"}
    assert records[0]["segment_text"].startswith("<b>raw</b> human 0")  # data, not escaped
    assert (records[0]["sub_id"], records[0]["max_score"]) == ("(2)", 2)


@pytest.mark.parametrize("pk", [999999, 2**63])
def test_an_unknown_run_is_a_404(reviewer_client, pk):
    assert reviewer_client.get(f"/grading/studies/geometry/runs/{pk}/segments.jsonl").status_code == 404
