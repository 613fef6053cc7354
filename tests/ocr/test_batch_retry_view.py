"""Retrying a batch's failed OCR runs (ocr.views.batch_retry, /ocr/batches/<pk>/retry/): POST only,
reviewers only; failed runs are queued again, others left alone; an unknown id is a 404."""
import pytest
from django.urls import reverse

from ocr.models import OcrRun

from ..conftest import assert_post_refused
from .helpers import pages_without_ocr

pytestmark = pytest.mark.django_db


def test_failed_runs_are_queued_again_and_done_ones_kept(reviewer_client, make_batch):
    batch, pages = pages_without_ocr(make_batch, 3)
    OcrRun.objects.filter(page__in=pages[:2]).update(status="failed", error="boom")
    answer = reviewer_client.post(reverse("ocr:batch_retry", args=[batch.pk]), follow=True)
    assert "Queued 2 failed run(s) again" in answer.content.decode()
    states = dict(OcrRun.objects.filter(page__batch=batch).values_list("page_id", "status"))
    assert states == {pages[0].pk: "queued", pages[1].pk: "queued", pages[2].pk: "done"}
    assert not OcrRun.objects.filter(page__batch=batch, status="queued").exclude(error="").exists()


def test_refused_writes_queue_nothing(annotator, reviewer, make_batch):
    batch, pages = pages_without_ocr(make_batch, 1)
    OcrRun.objects.filter(page=pages[0]).update(status="failed", error="boom")
    url = reverse("ocr:batch_retry", args=[batch.pk])
    assert_post_refused(url, annotator, reviewer)
    assert OcrRun.objects.get(page=pages[0]).status == "failed"


@pytest.mark.parametrize("pk", [999999, 2**63])
def test_an_unknown_batch_is_a_404(reviewer_client, pk):
    assert reviewer_client.post(f"/ocr/batches/{pk}/retry/").status_code == 404
