"""A background import's page (annotation.views.import_job, /import/jobs/<pk>/): the file, its
progress and, when it failed, why; a finished job goes on to its report; reviewers only; an
unknown id is a 404."""
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
    values = {"format": "realmath", "file_name": "class-4b.json", "stored_name": "stored-4b.json",
              "file_size": 10000, "created_by": user}
    values.update(fields)
    return ImportJob.objects.create(**values)


def test_reviewers_only_and_a_running_job_shows_its_file_and_progress(annotator, reviewer, imports_dir):
    running = job(reviewer, status="running")
    _progress_path(running).write_text("2500 10000")
    page = assert_reviewer_only(reverse("annotation:import_job", args=[running.pk]), annotator, reviewer)
    html = page.content.decode()
    assert page.status_code == 200 and "class-4b.json" in html
    assert page.context["state"]["percent"] == 25 and 'data-percent="25"' in html
    assert 'id="import-error" class="error" hidden' in html


def test_a_failed_job_says_why(reviewer_client, reviewer, imports_dir):
    failed = job(reviewer, status="failed", error="Line 3: not valid JSON.")
    html = reviewer_client.get(reverse("annotation:import_job", args=[failed.pk])).content.decode()
    assert '<p id="import-error" class="error" >Line 3: not valid JSON.</p>' in html  # shown, not hidden


def test_a_finished_job_goes_on_to_its_report(reviewer_client, reviewer, imports_dir):
    report = ImportReport.objects.create(kind="realmath", file_sha256="0" * 64, file_name="class-4b.json", counts={"records": 3})
    done = job(reviewer, status="done", report=report)
    answer = reviewer_client.get(reverse("annotation:import_job", args=[done.pk]))
    assert answer.status_code == 302 and answer["Location"] == reverse("annotation:import_report", args=[report.pk])


@pytest.mark.parametrize("pk", [999999, 2**63])
def test_an_unknown_job_is_a_404(reviewer_client, pk):
    assert reviewer_client.get(f"/import/jobs/{pk}/").status_code == 404
