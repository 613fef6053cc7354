"""A background import's progress JSON (annotation.views.import_job_progress,
/import/jobs/<pk>/progress/): bytes read of the file while it runs, the report's address when
done, the reason when it failed; reviewers only; an unknown id is a 404."""
import pytest
from django.urls import reverse

from annotation.importers.services import _progress_path
from annotation.models import ImportJob, ImportReport
from tests.conftest import assert_reviewer_only

pytestmark = pytest.mark.django_db


@pytest.fixture
def imports_dir(settings, tmp_path):
    settings.IMPORT_ROOT = tmp_path / "imports"
    settings.IMPORT_ROOT.mkdir()
    return settings.IMPORT_ROOT


def job(user, **fields):
    return ImportJob.objects.create(format="realmath", file_name="big.json", stored_name="big-stored.json",
                                    created_by=user, **fields)


def test_reviewers_only_and_a_running_job_counts_bytes_read(annotator, reviewer, imports_dir):
    running = job(reviewer, status="running")
    _progress_path(running).write_text("7000 10000")
    state = assert_reviewer_only(reverse("annotation:import_job_progress", args=[running.pk]), annotator, reviewer).json()
    assert (state["id"], state["status"], state["done"], state["total"], state["percent"]) == (
        running.pk, "running", 7000, 10000, 70)
    assert state["report"] is None and state["error"] == ""


def test_done_and_failed_jobs(reviewer_client, reviewer, imports_dir):
    report = ImportReport.objects.create(kind="realmath", file_sha256="0" * 64, file_name="big.json", counts={"records": 3})
    done = reviewer_client.get(reverse("annotation:import_job_progress",
                                       args=[job(reviewer, status="done", report=report).pk])).json()
    assert done["percent"] == 100 and done["report"] == reverse("annotation:import_report", args=[report.pk])
    failed = reviewer_client.get(reverse("annotation:import_job_progress",
                                         args=[job(reviewer, status="failed", error="Bad file.").pk])).json()
    assert failed["status"] == "failed" and failed["error"] == "Bad file." and failed["report"] is None


@pytest.mark.parametrize("pk", [999999, 2**63])
def test_an_unknown_job_is_a_404(reviewer_client, pk):
    assert reviewer_client.get(f"/import/jobs/{pk}/progress/").status_code == 404
