"""Scans go through the storage layer: with the default storage in an S3 bucket, an upload's file,
its page images and thumbnails are objects of the bucket (none on the local disk), and the page
image view streams them from the bucket behind the same permission checks."""
import pytest
from django.urls import reverse

from ocr.models import Page
from tests.ocr.conftest import png_bytes, small_page

pytestmark = pytest.mark.django_db


def test_upload_pages_and_thumbnails_are_objects_of_the_bucket(s3_bucket, make_batch, client, reviewer, annotator,
                                                                settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    s3, name = s3_bucket
    image, _ = small_page(1)
    batch, _ = make_batch([("s01_3-17_p1.png", png_bytes(image))])
    keys = {o["Key"] for o in s3.list_objects_v2(Bucket=name).get("Contents", [])}
    page = Page.objects.get(batch=batch)
    stored = [n for n in (page.source_file.stored, page.master, page.web, page.thumb) if n]
    assert stored and set(stored) <= keys
    assert not (tmp_path / "media").exists()  # nothing written to a local folder
    kind = "web" if page.web else "master"
    client.force_login(reviewer)
    response = client.get(reverse("ocr:page_image", args=[page.pk, kind]))
    assert response.status_code == 200 and response.streaming
    body = b"".join(response.streaming_content)
    assert body == s3.get_object(Bucket=name, Key=getattr(page, kind))["Body"].read()
    client.force_login(annotator)  # not assigned: the same 403 as on the local folder
    assert client.get(reverse("ocr:page_image", args=[page.pk, kind])).status_code == 403
