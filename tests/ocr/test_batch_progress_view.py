"""A scan batch's OCR progress JSON (ocr.views.batch_progress, /ocr/batches/<pk>/progress.json):
pages by run state and the percent finished; reviewers only; an unknown id is a 404."""
import pytest
from django.urls import reverse

from ocr.models import OcrRun

from ..conftest import assert_reviewer_only
from .helpers import pages_without_ocr

pytestmark = pytest.mark.django_db


def test_reviewers_only_and_the_counts_follow_the_runs(annotator, reviewer, make_batch):
    batch, pages = pages_without_ocr(make_batch, 4)
    OcrRun.objects.filter(page=pages[1]).update(status="queued")
    OcrRun.objects.filter(page=pages[2]).update(status="failed", error="engine died")
    progress = assert_reviewer_only(reverse("ocr:batch_progress", args=[batch.pk]), annotator, reviewer).json()
    assert (progress["total"], progress["done"], progress["queued"], progress["failed"]) == (4, 2, 1, 1)
    assert progress["finished"] == 3 and progress["percent"] == 75 and not progress["complete"]


def test_a_batch_with_every_page_read_is_complete(reviewer_client, make_batch):
    batch, _ = pages_without_ocr(make_batch, 2)
    progress = reviewer_client.get(reverse("ocr:batch_progress", args=[batch.pk])).json()
    assert progress["complete"] and progress["percent"] == 100


@pytest.mark.parametrize("pk", [999999, 2**63])
def test_an_unknown_batch_is_a_404(reviewer_client, pk):
    assert reviewer_client.get(f"/ocr/batches/{pk}/progress.json").status_code == 404
