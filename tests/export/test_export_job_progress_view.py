"""An export's progress JSON (annotation.export.views.export_job_progress, /export/<pk>/progress/):
counts and percent, the download address only when done, the reason when failed; reviewers only;
an unknown id is a 404."""
import pytest
from django.urls import reverse

from annotation.models import ExportJob
from tests.conftest import assert_reviewer_only

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("_export_root")]


def test_reviewers_only_and_a_running_export_has_no_download_yet(annotator, reviewer):
    job = ExportJob.objects.create(format="csv", status="running", done=8, total=32, created_by=reviewer)
    state = assert_reviewer_only(reverse("annotation:export_progress", args=[job.pk]), annotator, reviewer).json()
    assert (state["id"], state["status"], state["done"], state["total"]) == (job.pk, "running", 8, 32)
    assert state["percent"] == job.percent and state["download"] is None


def test_done_and_failed_exports(reviewer_client, reviewer):
    done = ExportJob.objects.create(format="csv", status="done", done=32, total=32, file_name="e.zip",
                                    file_size=1234, created_by=reviewer)
    state = reviewer_client.get(reverse("annotation:export_progress", args=[done.pk])).json()
    assert state["download"] == reverse("annotation:export_download", args=[done.pk]) and state["file_size"] == 1234
    failed = ExportJob.objects.create(format="csv", status="failed", error="Disk full.", created_by=reviewer)
    state = reviewer_client.get(reverse("annotation:export_progress", args=[failed.pk])).json()
    assert (state["status"], state["error"], state["download"]) == ("failed", "Disk full.", None)


@pytest.mark.parametrize("pk", [999999, 2**63])
def test_an_unknown_export_is_a_404(reviewer_client, pk):
    assert reviewer_client.get(f"/export/{pk}/progress/").status_code == 404
