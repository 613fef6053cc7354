"""The import page (annotation.views.dataset_import, /import/): release files, a re-imported full export, background jobs."""
import io
import json
import re
import zipfile

import pytest
from django.contrib.auth import get_user_model
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from accounts.roles import user_role
from annotation.export.writers import write_export
from annotation.models import ImportReport, Label, Response
from tests.conftest import REALMATH_HUMAN, REALMATH_SYNTHETIC, api_client_for, make_user

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
    # the stored upload is gone (with a shared cache, Redis, the worker wrote no progress file either)
    assert not background_imports.exists() or list(background_imports.iterdir()) == []


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
        page = reviewer_client.post(reverse("annotation:import"), {"format": "realmath", "file": handle,
                                                                   "overlap": "keep"}, follow=True)
    html = page.content.decode()
    assert "<strong>32</strong> answers already here (skipped, kept as they were)" in html
    assert "<strong>32</strong> labels of skipped answers (not loaded again)" in html  # their imported golds
    assert "32 answers are already in the exam <strong>Demo exam</strong>." in html
    offer = reverse("annotation:import") + "?format=realmath&amp;exam=Demo+exam&amp;overlap=move"
    assert f'href="{offer}"' in html
    form = reviewer_client.get(reverse("annotation:import"), {"format": "realmath", "exam": "Demo exam"}).content.decode()
    assert 'value="Demo exam"' in form
    # Imported into that exam, nothing is offered: the answers are where the file goes.
    with REALMATH_HUMAN.open("rb") as handle:
        again = reviewer_client.post(reverse("annotation:import"), {"format": "realmath", "file": handle,
                                                                    "exam": "Demo exam"}, follow=True)
    assert "32 answers are already in the exam" in again.content.decode()
    assert "Import into “Demo exam” instead" not in again.content.decode()


# Re-importing a full JSONL export from the import page: the dataset.jsonl or the export's zip as
# downloaded; idempotent; a bad file is refused whole; a reviewer's import creates no user.
def _export(tmp_path):
    """A full export of the sample with one expert label by an admin, as bytes of dataset.jsonl and of a zip."""
    expert = make_user("expert-admin", "admin")
    response = Response.objects.filter(source="human").order_by("id").first()
    Label.objects.create(response=response, annotator=expert, sub_scores={"(1)": 3, "(2)": 1}, total=4, submitted=True)
    write_export(Response.objects.all(), "jsonl", tmp_path)
    data = (tmp_path / "dataset.jsonl").read_bytes()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("manifest.json", "{}")
        archive.writestr("dataset.jsonl", data)
    return data, buffer.getvalue()


def _upload(client, name, data):
    return client.post(reverse("annotation:import"), {"format": "dataset", "file": SimpleUploadedFile(name, data)},
                       follow=True)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("as_zip", [False, True])
def test_reviewer_reimports_a_full_export_from_the_page(sample_data, reviewer, client, tmp_path, as_zip):
    """A reviewer's import names only users who exist; an admin's creates them (without a
    password) and restores their roles."""
    jsonl, archive = _export(tmp_path)
    upload = ("export-1.zip", archive) if as_zip else ("dataset.jsonl", jsonl)
    call_command("flush", interactive=False, verbosity=0)
    reviewer = make_user("rev-import", "reviewer")
    client.force_login(reviewer)
    page = client.get(reverse("annotation:import")).content.decode()
    assert 'value="dataset"' in page
    refused = _upload(client, *upload).content.decode()
    assert "Nothing was imported. line 1, field username: user &#x27;expert-admin&#x27; does not exist" in refused
    assert Response.objects.count() == 0 and not get_user_model().objects.filter(username="expert-admin").exists()
    client.force_login(make_user("admin-import", "admin"))
    answer = _upload(client, *upload)
    report = ImportReport.objects.get()
    assert answer.status_code == 200 and answer.redirect_chain[-1][0] == reverse("annotation:import_report", args=[report.pk])
    assert report.kind == "dataset" and report.counts["responses_created"] == 64
    assert Response.objects.count() == 64 and Label.objects.filter(is_imported=False).count() == 1
    expert = get_user_model().objects.get(username="expert-admin")
    assert user_role(expert) == "admin" and not expert.has_usable_password()  # an admin's import restores roles
    client.force_login(reviewer)
    again = _upload(client, "dataset.jsonl", jsonl)
    assert again.status_code == 200 and Response.objects.count() == 64
    assert ImportReport.objects.order_by("-id").first().counts["responses_skipped"] == 64


@pytest.mark.django_db(transaction=True)
def test_a_bad_upload_is_refused_whole(sample_data, reviewer_client):
    before = (Response.objects.count(), ImportReport.objects.count())
    broken = b'{"type": "user", "username": "x"}\nnot json\n'
    answer = _upload(reviewer_client, "dataset.jsonl", broken)
    assert "Nothing was imported. line 2: not valid JSON" in answer.content.decode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("other.json", json.dumps({}))
    answer = _upload(reviewer_client, "export.zip", buffer.getvalue())
    assert "the zip holds no dataset.jsonl" in answer.content.decode()
    answer = _upload(reviewer_client, "export.zip", b"PK\x03\x04 not really a zip")
    assert "not a readable zip" in answer.content.decode()
    assert (Response.objects.count(), ImportReport.objects.count()) == before


@pytest.mark.django_db(transaction=True)
def test_large_full_export_zip_is_imported_by_a_job(sample_data, tmp_path, client, settings):
    from annotation.models import ImportJob

    settings.IMPORT_SYNC_MAX_BYTES = 0  # every upload goes to a job (run eagerly in tests)
    settings.IMPORT_ROOT = tmp_path / "imports"
    _, archive = _export(tmp_path)
    call_command("flush", interactive=False, verbosity=0)
    admin = make_user("admin-job", "admin")
    client.force_login(admin)
    answer = _upload(client, "export-1.zip", archive)
    job = ImportJob.objects.get()
    # Upload -> the job page -> (done) straight on to its report.
    assert [url for url, _ in answer.redirect_chain[-2:]] == [
        reverse("annotation:import_job", args=[job.pk]), reverse("annotation:import_report", args=[job.report_id])]
    assert job.status == "done" and job.report.kind == "dataset" and job.report.counts["responses_created"] == 64
    assert Response.objects.count() == 64 and job.report.created_by == admin



# One exam per release (issue 34): the full release overlaps the demo sample; the page asks first.
FULL_RELEASE = REALMATH_HUMAN.parent.parent / "realmath_eval_full" / "realmath_eval.json"


def _post_full(client, **fields):
    with FULL_RELEASE.open("rb") as handle:
        return client.post(reverse("annotation:import"), {"format": "realmath", "file": handle, **fields}, follow=True)


def test_the_page_asks_where_the_release_goes_when_part_of_it_is_in_another_exam(reviewer_client):
    from annotation.models import Exam, Question

    call_command("import_realmath", str(REALMATH_HUMAN), "--exam", "RealMath-Eval sample")
    page = _post_full(reviewer_client, exam="Release")
    html = page.content.decode()
    assert 'id="overlap-holders"' in html and "RealMath-Eval sample</a>: 2 questions" in html
    assert "Nothing was imported. 2 of the file&#x27;s 14 questions are already in other exams" in html
    assert not Exam.objects.filter(name="Release").exists() and Question.objects.count() == 2
    # The choice is on the form: moving brings the sample's two questions into the release's exam.
    page = _post_full(reviewer_client, exam="Release", overlap="move")
    assert Question.objects.filter(exam__name="Release").count() == 14
    html = page.content.decode()
    assert 'id="placed-questions"' in html
    assert html.count("moved from “RealMath-Eval sample” into “Release”, with its answers") == 2
    assert html.count("added to “Release”") == 12
    # The release names 3-16, 3-17 and 3-18 more than once (different problems): each line says which question it is.
    placed = re.findall(r'<li><a href="[^"]+">([^<]+)</a>', html.split('id="placed-questions"')[1].split("</section>")[0])
    assert len(placed) == len(set(placed)) == 14 and sum(p.startswith("3-18 · question #") for p in placed) == 3


def test_joining_the_exam_that_holds_part_of_the_release(reviewer_client):
    from annotation.models import Question

    call_command("import_realmath", str(REALMATH_HUMAN), "--exam", "RealMath-Eval sample")
    page = _post_full(reviewer_client, exam="Release", overlap="join")
    assert Question.objects.filter(exam__name="RealMath-Eval sample").count() == 14
    assert page.content.decode().count("already in “RealMath-Eval sample”") == 2


def test_the_overlap_choice_goes_with_a_background_job(reviewer_client, settings, tmp_path, monkeypatch):
    from annotation.importers import services as jobs
    from annotation.models import ImportJob, Question

    settings.IMPORT_ROOT = tmp_path
    settings.IMPORT_SYNC_MAX_BYTES = 10  # every upload is a job
    call_command("import_realmath", str(REALMATH_HUMAN), "--exam", "RealMath-Eval sample")
    monkeypatch.setattr(jobs.tasks.run_import_job_task, "delay", lambda job_id: None)  # run below, in this process
    with FULL_RELEASE.open("rb") as handle:
        reviewer_client.post(reverse("annotation:import"), {"format": "realmath", "file": handle, "exam": "Release",
                                                            "overlap": "move"})
    job = ImportJob.objects.get()
    assert default_storage.exists(jobs._options_name(job.stored_name))  # staged beside the upload
    jobs.run_import_job(job.pk)
    job.refresh_from_db()
    assert job.status == ImportJob.Status.DONE, job.error
    assert Question.objects.filter(exam__name="Release").count() == 14
    assert not list(tmp_path.glob("*.*"))  # nothing left in the worker's scratch folder
    assert default_storage.listdir("imports") == ([], [])  # the staged upload and its options are gone


def test_recent_imports_are_in_words_with_exam_names(reviewer_client):
    call_command("import_realmath", str(REALMATH_HUMAN), "--exam", "Demo exam")
    call_command("import_realmath", str(REALMATH_HUMAN), "--exam", "Other", "--overlap", "keep")
    html = reviewer_client.get(reverse("annotation:import")).content.decode()
    assert "skipped_by_exam" not in html and "questions_created" not in html and "{" not in html.split("Recent imports")[1]
    assert "32 answers added; 32 labels added (imported golds included)" in html
    assert "into “Other”; 32 skipped answers are in “Demo exam”" in html


def test_recent_imports_in_chinese(reviewer_client):
    call_command("import_realmath", str(REALMATH_HUMAN), "--exam", "Demo exam")
    html = reviewer_client.get(reverse("annotation:import"), HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "answers added" not in html and "导入到“Demo exam”" in html


def test_the_api_asks_too_and_says_where_the_questions_are(reviewer):
    call_command("import_realmath", str(REALMATH_HUMAN), "--exam", "RealMath-Eval sample")
    api = api_client_for(reviewer)
    with FULL_RELEASE.open("rb") as handle:
        refused = api.post("/api/import/", {"format": "realmath", "file": handle, "exam": "Release"})
    assert refused.status_code == 400
    assert refused.json()["overlap"]["held_by"][0]["name"] == "RealMath-Eval sample"
    assert refused.json()["overlap"]["held_by"][0]["questions"] == 2
    with FULL_RELEASE.open("rb") as handle:
        moved = api.post("/api/import/", {"format": "realmath", "file": handle, "exam": "Release", "overlap": "move"})
    assert moved.status_code == 201
    assert moved.json()["counts"]["questions_moved"] == 2
    assert sum(1 for row in moved.json()["counts"]["questions"] if row["how"] == "moved") == 2
