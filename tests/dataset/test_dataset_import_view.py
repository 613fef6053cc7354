import pytest
from django.urls import reverse

from annotation.models import ImportReport, Response
from tests.conftest import REALMATH_HUMAN, REALMATH_SYNTHETIC, api_client_for

pytestmark = pytest.mark.django_db


def test_reviewer_uploads_release_file_and_sees_report(reviewer_client):
    with REALMATH_HUMAN.open("rb") as handle:
        response = reviewer_client.post(reverse("annotation:import"), {"format": "realmath", "file": handle}, follow=True)
    assert response.status_code == 200
    assert Response.objects.count() == 32
    html = response.content.decode()
    assert "<strong>32</strong> answers added" in html and "responses_created" not in html
    assert "<strong>32</strong> labels added (imported golds included)" in html


def test_upload_of_malformed_file_shows_error_and_writes_nothing(reviewer_client, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('[{"student_id": "x"}]')
    with bad.open("rb") as handle:
        response = reviewer_client.post(reverse("annotation:import"), {"format": "realmath", "file": handle})
    assert response.status_code == 200
    assert "Nothing was imported. record 0: missing field" in response.content.decode()
    assert ImportReport.objects.count() == 0


def test_api_import_and_reimport(reviewer):
    api = api_client_for(reviewer)
    with REALMATH_SYNTHETIC.open("rb") as handle:
        first = api.post("/api/import/", {"format": "realmath", "file": handle})
    assert first.status_code == 201
    assert first.json()["counts"]["responses_created"] == 32
    with REALMATH_SYNTHETIC.open("rb") as handle:
        second = api.post("/api/import/", {"format": "realmath", "file": handle})
    assert second.json()["counts"]["responses_created"] == 0
    assert second.json()["counts"]["responses_skipped"] == 32


def test_api_import_malformed_is_400(reviewer):
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("x.json", b"not json", content_type="application/json")
    response = api_client_for(reviewer).post("/api/import/", {"format": "realmath", "file": upload})
    assert response.status_code == 400
    assert "not valid JSON" in response.json()["detail"]


@pytest.fixture
def background_imports(settings, tmp_path):
    settings.IMPORT_SYNC_MAX_BYTES = 0  # every upload goes to a job (run eagerly in tests)
    settings.IMPORT_ROOT = tmp_path / "imports"
    return settings.IMPORT_ROOT


@pytest.mark.django_db(transaction=True)
def test_large_upload_runs_as_a_job_with_progress(reviewer_client, reviewer, background_imports):
    from annotation.models import ImportJob

    with REALMATH_HUMAN.open("rb") as handle:
        response = reviewer_client.post(reverse("annotation:import"), {"format": "realmath", "file": handle})
    job = ImportJob.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("annotation:import_job", args=[job.pk])
    job.refresh_from_db()
    assert job.status == "done" and job.created_by == reviewer and job.file_name == REALMATH_HUMAN.name
    assert Response.objects.count() == 32 and Response.objects.first().history.get().history_user == reviewer
    state = reviewer_client.get(reverse("annotation:import_job_progress", args=[job.pk])).json()
    size = REALMATH_HUMAN.stat().st_size
    assert state["percent"] == 100 and (state["done"], state["total"]) == (size, size)
    assert state["report"] == reverse("annotation:import_report", args=[job.report_id])
    page = reviewer_client.get(reverse("annotation:import_job", args=[job.pk]))  # done: straight to the report
    assert page.status_code == 302 and page["Location"] == reverse("annotation:import_report", args=[job.report_id])
    assert list(background_imports.iterdir()) == []  # the stored upload is gone


@pytest.mark.django_db(transaction=True)
def test_malformed_large_upload_fails_the_job_and_writes_nothing(reviewer_client, background_imports, tmp_path):
    from annotation.models import ImportJob

    bad = tmp_path / "bad.json"
    bad.write_text('[{"student_id": "x"}]')
    with bad.open("rb") as handle:
        reviewer_client.post(reverse("annotation:import"), {"format": "realmath", "file": handle})
    job = ImportJob.objects.get()
    assert job.status == "failed" and job.error.startswith("Nothing was imported. record 0: missing field")
    state = reviewer_client.get(reverse("annotation:import_job_progress", args=[job.pk])).json()
    assert state["status"] == "failed" and state["report"] is None
    assert ImportReport.objects.count() == 0 and Response.objects.count() == 0
    assert "bad.json" in reviewer_client.get(reverse("annotation:import")).content.decode()


def test_running_job_reports_progress_from_its_file(reviewer_client, reviewer, background_imports):
    from annotation.importers.services import _progress_path
    from annotation.models import ImportJob

    job = ImportJob.objects.create(format="realmath", file_name="big.json", stored_name="x.json", status="running",
                                   created_by=reviewer)
    background_imports.mkdir()
    _progress_path(job).write_text("4000 10000")
    state = reviewer_client.get(reverse("annotation:import_job_progress", args=[job.pk])).json()
    assert (state["done"], state["total"], state["percent"]) == (4000, 10000, 40)


def test_annotators_cannot_see_import_jobs(annotator_client, reviewer):
    from annotation.models import ImportJob

    job = ImportJob.objects.create(format="realmath", file_name="big.json", stored_name="x.json", created_by=reviewer)
    assert annotator_client.get(reverse("annotation:import_job", args=[job.pk])).status_code == 403
    assert annotator_client.get(reverse("annotation:import_job_progress", args=[job.pk])).status_code == 403


def test_reimport_says_where_skipped_answers_sit_and_offers_that_exam(reviewer_client):
    with REALMATH_HUMAN.open("rb") as handle:
        reviewer_client.post(reverse("annotation:import"), {"format": "realmath", "file": handle, "exam": "Demo exam"})
    with REALMATH_HUMAN.open("rb") as handle:
        page = reviewer_client.post(reverse("annotation:import"), {"format": "realmath", "file": handle}, follow=True)
    html = page.content.decode()
    assert "<strong>32</strong> answers already here (skipped, kept as they were)" in html
    assert "<strong>32</strong> labels of skipped answers (not loaded again)" in html  # their imported golds
    assert "32 answers are already in the exam <strong>Demo exam</strong>." in html
    offer = reverse("annotation:import") + "?format=realmath&amp;exam=Demo+exam"
    assert f'href="{offer}"' in html
    form = reviewer_client.get(reverse("annotation:import"), {"format": "realmath", "exam": "Demo exam"}).content.decode()
    assert 'value="Demo exam"' in form
    # Imported into that exam, nothing is offered: the answers are where the file goes.
    with REALMATH_HUMAN.open("rb") as handle:
        again = reviewer_client.post(reverse("annotation:import"), {"format": "realmath", "file": handle,
                                                                    "exam": "Demo exam"}, follow=True)
    assert "32 answers are already in the exam" in again.content.decode()
    assert "instead" not in again.content.decode()
