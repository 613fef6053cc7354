"""Re-importing a full JSONL export from the import page: the dataset.jsonl or the export's zip
as downloaded; idempotent; a bad file is refused whole; a reviewer's import creates no user."""
import io
import json
import zipfile

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from accounts.roles import user_role
from annotation.export.writers import write_export
from annotation.models import ImportReport, Label, Response

from ..conftest import make_user

pytestmark = pytest.mark.django_db(transaction=True)


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
