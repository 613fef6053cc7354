"""`manage.py check_storage` against a real S3-compatible server on 127.0.0.1: it writes, reads and
deletes a probe object and says which bucket; a missing bucket is a clear error naming the step."""
import io

import pytest
from django.core.management import CommandError, call_command

pytestmark = pytest.mark.django_db


def test_the_bucket_passes_and_is_left_empty(s3_bucket):
    client, name = s3_bucket
    out = io.StringIO()
    call_command("check_storage", stdout=out)
    assert f"Storage OK: S3 bucket {name}" in out.getvalue()
    assert client.list_objects_v2(Bucket=name).get("KeyCount", 0) == 0


def test_a_missing_bucket_fails_at_the_write_step(s3_bucket):
    client, name = s3_bucket
    client.delete_bucket(Bucket=name)
    with pytest.raises(CommandError) as caught:
        call_command("check_storage", stdout=io.StringIO())
    assert "failed at the write step" in str(caught.value) and name in str(caught.value)
    assert "NoSuchBucket" in str(caught.value)


def test_the_local_folder(settings, tmp_path):
    settings.STORAGES = {**settings.STORAGES, "default": {"BACKEND": "django.core.files.storage.FileSystemStorage",
                                                          "OPTIONS": {"location": str(tmp_path)}}}
    out = io.StringIO()
    call_command("check_storage", stdout=out)
    assert str(tmp_path) in out.getvalue() and not any(tmp_path.rglob("*.txt"))
