"""Revision history with character diffs."""
import pytest
from django.urls import reverse

from ocr import services

from ..conftest import assert_reviewer_only
from .helpers import pages_without_ocr

pytestmark = pytest.mark.django_db


def test_history_shows_each_revision_with_its_diff(annotator, reviewer, make_batch, admin_user):
    _, pages = pages_without_ocr(make_batch, 1)
    page = pages[0]
    t = services.save_transcript(page, text=f"text of page {page.pk} <b>bold</b>", base_version=1, user=reviewer)
    services.verify_transcript(page, text=f"text on page {page.pk} <b>bold</b>", base_version=t.version, user=admin_user)
    response = assert_reviewer_only(reverse("ocr:page_history", args=[page.pk]), annotator, reviewer)
    body = response.content.decode()
    assert response.status_code == 200
    assert body.count('class="panel revision"') == 3
    assert "<del>f</del><ins>n</ins>" in body  # "of" -> "on": one character changed
    assert "<ins> &lt;b&gt;bold&lt;/b&gt;</ins>" in body
    assert "<b>bold</b>" not in body
    assert body.index('data-version="3"') < body.index('data-version="1"')  # newest first
    assert "adm1" in body and "rev1" in body and "OCR output" in body


def test_history_of_a_page_without_transcript(reviewer_client, make_batch):
    from ocr.models import Transcript

    _, pages = pages_without_ocr(make_batch, 1)
    Transcript.objects.all().delete()
    assert "No transcript yet" in reviewer_client.get(reverse("ocr:page_history", args=[pages[0].pk])).content.decode()
