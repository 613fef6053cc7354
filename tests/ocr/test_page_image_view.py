"""Page images are served only to reviewers, only as renditions we made."""
import pytest
from django.core.files.storage import default_storage
from django.urls import reverse

from ocr import services
from ocr.models import Page

from ..conftest import assert_reviewer_only
from .helpers import pages_without_ocr

pytestmark = pytest.mark.django_db


def test_renditions_are_served_to_reviewers(annotator, reviewer, make_batch, reviewer_client):
    _, pages = pages_without_ocr(make_batch, 1)
    page = pages[0]
    services.prepare_stored_page(page)
    response = assert_reviewer_only(reverse("ocr:page_image", args=[page.pk, "web"]), annotator, reviewer)
    assert response.status_code == 200 and response["Content-Type"] == "image/jpeg"
    assert b"".join(response.streaming_content)[:3] == b"\xff\xd8\xff"
    page.refresh_from_db()
    for kind, content_type in (("thumb", "image/jpeg"), ("processed", "image/png"), ("master", "image/png")):
        response = reviewer_client.get(reverse("ocr:page_image", args=[page.pk, kind]))
        assert response.status_code == 200 and response["Content-Type"] == content_type
    assert page.status == Page.Status.PREPARED


def test_unknown_or_missing_renditions_are_404(reviewer_client, make_batch):
    _, pages = pages_without_ocr(make_batch, 1)
    assert reviewer_client.get(reverse("ocr:page_image", args=[pages[0].pk, "web"])).status_code == 404
    assert reviewer_client.get(reverse("ocr:page_image", args=[pages[0].pk, "source_file"])).status_code == 404
    assert reviewer_client.get(reverse("ocr:page_image", args=[pages[0].pk, "..%2Fmaster"])).status_code == 404
    assert reviewer_client.get(reverse("ocr:page_image", args=[99999, "web"])).status_code == 404


def test_a_page_read_by_rapidocr_gets_its_thresholded_rendition_when_first_asked(reviewer_client, make_batch):
    """RapidOCR reads the gray page: its page task makes no threshold; Alt+P's image is made once, on demand."""
    _, pages = pages_without_ocr(make_batch, 1)
    page = pages[0]
    prepared = services.prepare_stored_page(page, reads="gray")
    assert prepared.binary is None
    page.refresh_from_db()
    assert page.status == Page.Status.PREPARED and page.processed == "" and page.web
    url = reverse("ocr:page_image", args=[page.pk, "processed"])
    response = reviewer_client.get(url)
    assert response.status_code == 200 and response["Content-Type"] == "image/png"
    assert b"".join(response.streaming_content)[:8] == b"\x89PNG\r\n\x1a\n"
    page.refresh_from_db()
    made = page.processed
    assert made and default_storage.exists(made)
    reviewer_client.get(url)
    page.refresh_from_db()
    assert page.processed == made  # made once, then served


def test_no_processed_rendition_is_made_for_a_page_not_prepared(reviewer_client, make_batch):
    _, pages = pages_without_ocr(make_batch, 1)
    assert reviewer_client.get(reverse("ocr:page_image", args=[pages[0].pk, "processed"])).status_code == 404
    pages[0].refresh_from_db()
    assert pages[0].processed == ""
