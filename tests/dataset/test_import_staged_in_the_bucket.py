"""Background imports are staged in the storage layer (issue 38): the web side saves the upload
(and its options) as objects of the default storage, here an S3 bucket of moto's server on
127.0.0.1, so that a worker on another machine reads it; the worker copies it block by block into
its scratch folder (an S3 stream cannot seek, the release importer reads the file twice), imports
it, and removes the staged objects and its copy when the job ends, done or failed."""
from datetime import timedelta
from pathlib import Path

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.importers import services as jobs
from annotation.models import ImportJob, Question, Response
from tests.conftest import REALMATH_HUMAN, ROOT

FULL = ROOT / "fixtures" / "realmath_eval_full" / "realmath_eval.json"

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _folders(settings, tmp_path, monkeypatch):
    settings.IMPORT_SYNC_MAX_BYTES = 10  # every upload is a job
    settings.IMPORT_ROOT = tmp_path / "imports"
    settings.MEDIA_ROOT = tmp_path / "media"
    monkeypatch.setattr(jobs.tasks.run_import_job_task, "delay", lambda job_id: None)  # run below, as a worker would


def _keys(s3, bucket):
    return sorted(o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", []))


def _leftovers(folder):
    return [p for p in Path(folder).rglob("*") if p.is_file()] if Path(folder).exists() else []


def test_a_background_import_is_staged_in_the_bucket_and_removed_when_done(s3_bucket, reviewer_client, settings):
    s3, bucket = s3_bucket
    with REALMATH_HUMAN.open("rb") as handle:
        reviewer_client.post(reverse("annotation:import"), {"format": "realmath", "file": handle, "exam": "Bucket exam",
                                                            "overlap": "keep"})
    job = ImportJob.objects.get()
    assert job.stored_name.startswith("imports/") and job.stored_name.endswith(".upload")
    options = job.stored_name.removesuffix(".upload") + ".options"
    assert _keys(s3, bucket) == sorted([job.stored_name, options])
    staged = s3.get_object(Bucket=bucket, Key=job.stored_name)["Body"].read()
    assert staged == REALMATH_HUMAN.read_bytes()
    assert _leftovers(settings.IMPORT_ROOT) == [] and _leftovers(settings.MEDIA_ROOT) == []  # the web side kept nothing

    jobs.run_import_job(job.pk)  # the worker: reads the bucket (the release importer seeks back to the start)
    job.refresh_from_db()
    assert job.status == ImportJob.Status.DONE, job.error
    assert Response.objects.count() == 32 and Question.objects.filter(exam__name="Bucket exam").count() == 2
    assert _keys(s3, bucket) == []  # the staged upload and its options are removed
    assert _leftovers(settings.IMPORT_ROOT) == [] and _leftovers(settings.MEDIA_ROOT) == []


def test_a_failed_import_removes_its_staged_upload(s3_bucket, reviewer_client, settings, tmp_path):
    s3, bucket = s3_bucket
    bad = tmp_path / "bad.json"
    bad.write_text('[{"student_id": "x"}]')
    with bad.open("rb") as handle:
        reviewer_client.post(reverse("annotation:import"), {"format": "realmath", "file": handle, "exam": "Bad"})
    job = ImportJob.objects.get()
    assert job.stored_name in _keys(s3, bucket)
    jobs.run_import_job(job.pk)
    job.refresh_from_db()
    assert job.status == ImportJob.Status.FAILED and job.error.startswith("Nothing was imported. record 0: missing field")
    assert _keys(s3, bucket) == [] and _leftovers(settings.IMPORT_ROOT) == []


def test_a_staged_upload_gone_from_the_bucket_fails_the_job_with_a_message(s3_bucket, reviewer_client, settings):
    s3, bucket = s3_bucket
    with REALMATH_HUMAN.open("rb") as handle:
        reviewer_client.post(reverse("annotation:import"), {"format": "realmath", "file": handle, "exam": "Gone"})
    job = ImportJob.objects.get()
    s3.delete_object(Bucket=bucket, Key=job.stored_name)
    jobs.run_import_job(job.pk)
    job.refresh_from_db()
    assert job.status == ImportJob.Status.FAILED and job.error.startswith("Nothing was imported. FileNotFoundError")
    assert Response.objects.count() == 0 and _leftovers(settings.IMPORT_ROOT) == []


def test_a_job_whose_worker_died_for_the_last_time_removes_its_staged_upload(s3_bucket, reviewer_client, settings):
    s3, bucket = s3_bucket
    settings.JOB_MAX_ATTEMPTS = 1
    with REALMATH_HUMAN.open("rb") as handle:
        reviewer_client.post(reverse("annotation:import"), {"format": "realmath", "file": handle, "exam": "Dead"})
    job = ImportJob.objects.get()
    ImportJob.objects.filter(pk=job.pk).update(status=ImportJob.Status.RUNNING, attempt=1,
                                               created=timezone.now() - timedelta(hours=1))
    jobs.fail_stale_jobs()
    job.refresh_from_db()
    assert job.status == ImportJob.Status.FAILED and "stopped" in job.error
    assert _keys(s3, bucket) == []


def test_on_the_local_default_the_upload_is_staged_in_the_media_folder(reviewer_client, settings):
    with REALMATH_HUMAN.open("rb") as handle:
        reviewer_client.post(reverse("annotation:import"), {"format": "realmath", "file": handle, "exam": "Local"})
    job = ImportJob.objects.get()
    staged = Path(settings.MEDIA_ROOT) / job.stored_name
    assert staged.read_bytes() == REALMATH_HUMAN.read_bytes() and _leftovers(settings.IMPORT_ROOT) == []
    jobs.run_import_job(job.pk)
    job.refresh_from_db()
    assert job.status == ImportJob.Status.DONE, job.error
    assert Response.objects.count() == 32 and not staged.exists()
    assert _leftovers(settings.IMPORT_ROOT) == [] and _leftovers(settings.MEDIA_ROOT) == []


def test_an_upload_kept_for_a_choice_waits_in_the_bucket_and_the_choice_stages_it_again(s3_bucket, reviewer_client,
                                                                                        settings):
    """The worker that found the overlap and the web server that takes the choice may be two machines:
    the kept upload is an object of the bucket, and the choice stages it again as a new job's upload."""
    from django.core.management import call_command

    s3, bucket = s3_bucket
    call_command("import_realmath", str(REALMATH_HUMAN), "--exam", "Sample")  # its questions are in the release
    with FULL.open("rb") as handle:
        reviewer_client.post(reverse("annotation:import"), {"format": "realmath", "file": handle, "exam": "Release"})
    job = ImportJob.objects.get()
    jobs.run_import_job(job.pk)  # the worker: refused for a choice
    job.refresh_from_db()
    assert job.status == ImportJob.Status.FAILED and "already in other exams" in job.error
    kept = [key for key in _keys(s3, bucket) if key.startswith("imports/pending/")]
    token = kept[0].removeprefix("imports/pending/").split(".")[0]
    assert _keys(s3, bucket) == [f"imports/pending/{token}.json", f"imports/pending/{token}.upload"]
    assert s3.get_object(Bucket=bucket, Key=kept[1])["Body"].read() == FULL.read_bytes()

    page = reviewer_client.post(reverse("annotation:import_choose", args=[token]), {"overlap": "move"})
    second = ImportJob.objects.exclude(pk=job.pk).get()
    assert page.url == reverse("annotation:import_job", args=[second.pk])
    assert _keys(s3, bucket) == sorted([second.stored_name, second.stored_name.removesuffix(".upload") + ".options"])
    jobs.run_import_job(second.pk)
    second.refresh_from_db()
    assert second.status == ImportJob.Status.DONE, second.error
    assert Question.objects.filter(exam__name="Release").count() == 14
    assert _keys(s3, bucket) == [] and _leftovers(settings.IMPORT_ROOT) == [] and _leftovers(settings.MEDIA_ROOT) == []
