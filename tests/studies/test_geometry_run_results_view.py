"""A geometry run's figures as a JSON file (studies.geometry.views.geometry_run_results,
/grading/studies/geometry/runs/<pk>/results.json): reviewers only; an unknown id is a 404."""
import json

import pytest
from django.urls import reverse

from tests.conftest import assert_reviewer_only

from .helpers import lexical_geometry_run

pytestmark = pytest.mark.django_db


def test_reviewers_only_and_the_file_is_the_runs_figures(annotator, reviewer):
    run = lexical_geometry_run()
    answer = assert_reviewer_only(reverse("studies:geometry_run_results", args=[run.pk]), annotator, reviewer)
    assert answer.status_code == 200 and answer["Content-Type"].startswith("application/json")
    assert answer["Content-Disposition"] == f'attachment; filename="{run.kind}-run-{run.pk}.json"'
    results = json.loads(answer.content)
    assert results == run.results and results["study"] == "error_geometry"


@pytest.mark.parametrize("pk", [999999, 2**63])
def test_an_unknown_run_is_a_404(reviewer_client, pk):
    assert reviewer_client.get(f"/grading/studies/geometry/runs/{pk}/results.json").status_code == 404
