"""Running another OCR engine on a batch (ocr.views.batch_run_engine, /ocr/batches/<pk>/engine/):
POST only, reviewers only; a run queued per page that has none of that engine; an unknown engine
is refused with a message; an unknown id is a 404."""
import pytest
from django.test import Client
from django.urls import reverse

from ocr.models import OcrRun

from .helpers import pages_without_ocr

pytestmark = pytest.mark.django_db


def test_another_engine_is_queued_once_per_page(reviewer_client, make_batch):
    batch, _ = pages_without_ocr(make_batch, 2)
    url = reverse("ocr:batch_run_engine", args=[batch.pk])
    answer = reviewer_client.post(url, {"engine": "rapidocr"}, follow=True)
    assert "Queued rapidocr on 2 page(s)" in answer.content.decode()
    assert OcrRun.objects.filter(page__batch=batch, engine="rapidocr", status="queued").count() == 2
    again = reviewer_client.post(url, {"engine": "rapidocr"}, follow=True)
    assert "Queued rapidocr on 0 page(s)" in again.content.decode()
    assert OcrRun.objects.filter(page__batch=batch, engine="rapidocr").count() == 2


@pytest.mark.parametrize("engine", ["", "no-such-engine", "RAPIDOCR"])
def test_an_unknown_engine_is_refused_with_a_message(reviewer_client, make_batch, engine):
    batch, _ = pages_without_ocr(make_batch, 1)
    answer = reviewer_client.post(reverse("ocr:batch_run_engine", args=[batch.pk]), {"engine": engine}, follow=True)
    assert answer.status_code == 200 and "Unknown engine." in answer.content.decode()
    assert OcrRun.objects.filter(page__batch=batch).count() == 1


def test_refused_writes_queue_nothing(annotator, reviewer, make_batch):
    batch, _ = pages_without_ocr(make_batch, 1)
    url = reverse("ocr:batch_run_engine", args=[batch.pk])
    assert "/accounts/login/" in Client().post(url, {"engine": "rapidocr"})["Location"]
    other = Client()
    other.force_login(annotator)
    assert other.post(url, {"engine": "rapidocr"}).status_code == 403
    other.force_login(reviewer)
    assert other.get(url).status_code == 405
    assert OcrRun.objects.filter(page__batch=batch).count() == 1


@pytest.mark.parametrize("pk", [999999, 2**63])
def test_an_unknown_batch_is_a_404(reviewer_client, pk):
    assert reviewer_client.post(f"/ocr/batches/{pk}/engine/", {"engine": "rapidocr"}).status_code == 404
