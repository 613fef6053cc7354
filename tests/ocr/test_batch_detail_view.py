"""The batch page (ocr.views.batch_detail): progress, file report, pages with their assignment; query count flat in pages."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from accounts.services import set_user_language
from ocr.models import OcrRun

from ..conftest import assert_reviewer_only
from .helpers import pages_without_ocr

pytestmark = pytest.mark.django_db


def test_reviewer_only(annotator, reviewer, make_batch):
    batch, _ = pages_without_ocr(make_batch, 1)
    assert assert_reviewer_only(reverse("ocr:batch_detail", args=[batch.pk]), annotator, reviewer).status_code == 200
    for name in ("ocr:batch_assign", "ocr:batch_run_engine", "ocr:batch_retry", "ocr:batch_add_files"):
        assert assert_reviewer_only(reverse(name, args=[batch.pk]), annotator, reviewer, "post").status_code == 302


def test_batch_page_shows_pages_files_and_progress(reviewer_client, make_batch):
    batch, pages = pages_without_ocr(make_batch, 2)
    OcrRun.objects.filter(page=pages[1]).update(status="queued")
    response = reviewer_client.get(reverse("ocr:batch_detail", args=[batch.pk]))
    body = response.content.decode()
    assert "OCR 1 / 2 pages" in body
    assert body.count('class="ocr-thumb"') == 0  # not prepared: no thumbnail yet
    assert "s000_3-17_1.png" in body and "Accepted" in body
    assert reverse("ocr:page_correct", args=[pages[0].pk]) in body
    progress = reviewer_client.get(reverse("ocr:batch_progress", args=[batch.pk])).json()
    assert progress == {"total": 2, "queued": 1, "running": 0, "done": 1, "failed": 0, "finished": 1,
                        "percent": 50, "complete": False, "eta_seconds": None, "eta_text": "", "stalled": False}


def test_query_count_is_flat_as_pages_grow(reviewer_client, make_batch):
    small, _ = pages_without_ocr(make_batch, 3, start=0, student="a")
    large, _ = pages_without_ocr(make_batch, 30, start=100, student="b")
    counts = []
    for batch in (small, large):
        with CaptureQueriesContext(connection) as queries:
            response = reviewer_client.get(reverse("ocr:batch_detail", args=[batch.pk]))
        assert response.status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1], counts


def test_answer_counts_read_with_the_languages_colon(reviewer_client, reviewer, make_batch):
    """"OCR: 1" in English, "已识别：1" in Chinese (issue 39)."""
    batch, _ = pages_without_ocr(make_batch, 1)
    url = reverse("ocr:batch_detail", args=[batch.pk])
    body = reviewer_client.get(url).content.decode()
    assert "OCR: 1</span>" in body and "corrected: 0</span>" in body
    set_user_language(reviewer, "zh-hans")
    body = reviewer_client.get(url).content.decode()
    assert "已识别：1</span>" in body and "已校对：0</span>" in body and "已识别:" not in body
