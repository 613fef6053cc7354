"""The OCR quality page: CER per batch and engine against verified transcripts."""
import pytest
from django.urls import reverse

from ocr import services
from ocr.models import OcrRun

from ..conftest import assert_reviewer_only
from .helpers import pages_without_ocr

pytestmark = pytest.mark.django_db


def test_cer_per_batch_and_engine(annotator, reviewer, make_batch):
    batch, pages = pages_without_ocr(make_batch, 2)
    for page in pages:
        OcrRun.objects.create(page=page, engine="rapidocr", status="done", raw_text="abcdefghij", seconds=2.0)
        OcrRun.objects.filter(page=page, engine="tesseract").update(raw_text="abcdeXghij")
    for page in pages:
        services.verify_transcript(page, text="abcdefghij", base_version=1, user=reviewer)
    OcrRun.objects.filter(page=pages[1], engine="tesseract").update(cer_edits=3)
    response = assert_reviewer_only(reverse("ocr:quality"), annotator, reviewer)
    body = response.content.decode()
    assert response.status_code == 200
    rows = {row["engine"]: row for row in response.context["rows"]}
    assert rows["rapidocr"]["cer"] == 0.0 and rows["rapidocr"]["pages"] == 2
    assert rows["tesseract"]["cer"] == pytest.approx(4 / 20)
    assert "0.200" in body and batch.name in body
    assert '<canvas id="cer-chart"' in body and "chart.umd.min.js" in body


def test_page_detail_of_one_batch(reviewer_client, make_batch, reviewer):
    batch, pages = pages_without_ocr(make_batch, 1)
    services.verify_transcript(pages[0], text="same", base_version=1, user=reviewer)
    response = reviewer_client.get(reverse("ocr:quality") + f"?batch={batch.pk}")
    assert list(response.context["detail_rows"])[0].page_id == pages[0].pk


def test_no_verified_pages_yet(reviewer_client, db):
    assert "No verified pages yet" in reviewer_client.get(reverse("ocr:quality")).content.decode()


def test_raw_and_math_normalised_cer_side_by_side(reviewer_client, make_batch, reviewer):
    batch, pages = pages_without_ocr(make_batch, 1)
    OcrRun.objects.filter(page=pages[0]).update(raw_text="解:x2+1=5")
    services.verify_transcript(pages[0], text="解：$x^{2}+1=5$", base_version=1, user=reviewer)
    run = OcrRun.objects.get(page=pages[0])
    assert (run.cer_edits, run.cer_length) == (5, 13) and (run.cer_math_edits, run.cer_math_length) == (0, 8)
    response = reviewer_client.get(reverse("ocr:quality") + f"?batch={batch.pk}")
    row = response.context["by_engine"][0]
    assert row["cer"] == pytest.approx(5 / 13) and row["cer_math"] == 0.0
    body = response.content.decode()
    assert "CER math-normalised" in body and "0.385" in body and "5 / 13" in body and "0 / 8" in body
    assert response.context["chart"]["cer_math"] == [0.0]


@pytest.mark.parametrize("value", ["²", "٣", "9" * 25, "\x00", "-1"])
def test_an_odd_batch_parameter_shows_no_detail(reviewer_client, db, value):
    response = reviewer_client.get(reverse("ocr:quality"), {"batch": value})
    assert response.status_code == (400 if "\x00" in value else 200)  # a NUL byte is refused in any field
