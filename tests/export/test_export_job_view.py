"""An export's page (annotation.export.views.export_job, /export/<pk>/): its selection, progress,
the files of the zip once done, the reason and a restart button when it failed; reviewers only;
an unknown id is a 404."""
import pytest
from django.urls import reverse

from annotation.models import ExportJob
from tests.conftest import assert_reviewer_only

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("_export_root")]


def test_reviewers_only_and_a_finished_export_lists_its_files(annotator, reviewer):
    job = ExportJob.objects.create(format="csv", filters={"source": "human"}, status="done", done=32, total=32,
                                   file_name="e.zip", created_by=reviewer,
                                   manifest={"files": {"responses.csv": {"rows": 32, "bytes": 4096, "sha256": "ab12"}},
                                             "schema_version": 3, "exported_at": "2026-12-04"})
    page = assert_reviewer_only(reverse("annotation:export_job", args=[job.pk]), annotator, reviewer)
    html = page.content.decode()
    assert page.status_code == 200
    assert "source=human" in html and "32 / 32" in html and "responses.csv" in html and "ab12" in html
    assert f'href="{reverse("annotation:export_download", args=[job.pk])}" >' in html  # the download shown
    assert 'id="export-restart" hidden' in html


def test_a_failed_export_says_why_and_offers_a_restart(reviewer_client, reviewer):
    job = ExportJob.objects.create(format="jsonl", filters={"score_min": "3"}, status="failed", created_by=reviewer,
                                   error="The worker stopped.")
    html = reviewer_client.get(reverse("annotation:export_job", args=[job.pk])).content.decode()
    assert '<p id="export-error" class="error" >The worker stopped.</p>' in html
    assert 'id="export-restart" >' in html and 'name="score_min" value="3"' in html
    assert 'id="export-download" class="button primary" href="" hidden' in html


@pytest.mark.parametrize("pk", [999999, 2**63])
def test_an_unknown_export_is_a_404(reviewer_client, pk):
    assert reviewer_client.get(f"/export/{pk}/").status_code == 404
