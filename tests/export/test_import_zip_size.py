"""A zip upload is imported at once or by a worker by the size its dataset.jsonl inflates to,
not by its compressed size; a zip whose dataset.jsonl would inflate past the cap is refused
before anything is inflated (issue 29, item 8)."""
import io
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from annotation.export.writers import write_export
from annotation.models import ImportJob, ImportReport, Response

from ..conftest import make_user

pytestmark = pytest.mark.django_db(transaction=True)


def _zip(data):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("dataset.jsonl", data)
    return buffer.getvalue()


def _upload(client, name, data):
    return client.post(reverse("annotation:import"), {"format": "dataset", "file": SimpleUploadedFile(name, data)},
                       follow=True)


def test_a_small_zip_of_a_large_file_goes_to_a_worker(sample_data, tmp_path, client, settings):
    write_export(Response.objects.all(), "jsonl", tmp_path)
    data = (tmp_path / "dataset.jsonl").read_bytes()
    archive = _zip(data)
    assert len(archive) * 3 < len(data)
    call_command("flush", interactive=False, verbosity=0)
    settings.IMPORT_SYNC_MAX_BYTES = len(archive) + 1  # the zip is under the limit, what it holds is not
    settings.IMPORT_ROOT = tmp_path / "imports"
    client.force_login(make_user("boss", "admin"))
    answer = _upload(client, "export.zip", archive)
    job = ImportJob.objects.get()
    # through the job's page (a worker's job), which sends a finished job on to its report
    assert reverse("annotation:import_job", args=[job.pk]) in [url for url, _ in answer.redirect_chain]
    assert job.status == "done" and job.report.counts["responses_created"] == 64  # run eagerly in tests
    # the upload and what was copied out of it are gone (with Redis no progress file was written either)
    assert not (tmp_path / "imports").exists() or not list((tmp_path / "imports").iterdir())


def test_a_zip_that_inflates_past_the_cap_is_refused_unread(db, client, settings):
    settings.IMPORT_MAX_BYTES = 100_000
    bomb = _zip(b" " * 5_000_000)
    assert len(bomb) < 10_000
    client.force_login(make_user("boss", "admin"))
    page = _upload(client, "export.zip", bomb).content.decode()
    assert "Nothing was imported. export.zip: dataset.jsonl is 5000000 bytes uncompressed, larger than 100000" in page
    assert not ImportJob.objects.exists() and not ImportReport.objects.exists()
