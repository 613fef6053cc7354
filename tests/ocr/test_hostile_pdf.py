"""A small PDF with huge pages: the upload only measures it; the worker renders one page at a time,
each within OCR_MAX_PIXELS."""
import json
import subprocess
import sys
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from PIL import Image

from ocr import services
from ocr.models import OcrRun, Page, ScanFile

from .hostile_files import pdf_giant_pages

pytestmark = pytest.mark.django_db

MAX_PIXELS = 2_000_000
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def renders(monkeypatch):
    """Every PDFium page render, as (width, height) of the bitmap it made."""
    sizes = []
    real = pdfium.PdfPage.render

    def spy(page, *args, **kwargs):
        bitmap = real(page, *args, **kwargs)
        sizes.append((bitmap.width, bitmap.height))
        return bitmap

    monkeypatch.setattr(pdfium.PdfPage, "render", spy)
    return sizes


@pytest.fixture(autouse=True)
def _small_pixel_limit(settings):
    settings.OCR_MAX_PIXELS = MAX_PIXELS


def _upload(client, exam, name, data):
    return client.post(reverse("ocr:batch_list"), {
        "exam": exam.pk, "engine": "tesseract", "name": "giant",
        "scans": [SimpleUploadedFile(name, data, content_type="application/pdf")],
    })


def test_giant_pdf_is_measured_in_the_request_and_rendered_page_by_page_by_the_worker(
    reviewer_client, exam_questions, renders
):
    data = pdf_giant_pages(20)
    assert len(data) < 16 * 1024

    response = _upload(reviewer_client, exam_questions["exam"], "s07_3-17.pdf", data)

    assert response.status_code == 302
    assert renders == []  # nothing rendered inside the request
    scan_file = ScanFile.objects.get()
    assert scan_file.status == "accepted" and "Accepted: 20 page(s)" in scan_file.message
    assert "rendered at 7 dpi instead of 200" in scan_file.message
    pages = list(Page.objects.order_by("index_in_file"))
    assert len(pages) == 20 and {p.status for p in pages} == {"pending"}
    assert all(p.checksum is None and not p.master and p.width * p.height <= MAX_PIXELS for p in pages)
    assert OcrRun.objects.filter(status="queued").count() == 20
    assert "waiting to be rendered" in reviewer_client.get(reverse("ocr:batch_detail", args=[pages[0].batch_id])).content.decode()

    for page in pages:  # what each page task does first
        services.render_pending_page(page)
    assert len(renders) == 20 and all(w * h <= MAX_PIXELS for w, h in renders)
    for page in Page.objects.all():
        assert page.status == "uploaded" and page.checksum
        with default_storage.open(page.master, "rb") as handle:
            assert Image.open(handle).size == (page.width, page.height)
    assert Page.objects.values("checksum").distinct().count() == 20


def test_page_task_renders_then_reads_the_page_and_a_duplicate_page_is_reported(
    reviewer_client, exam_questions, run_tasks, renders
):
    with run_tasks():
        _upload(reviewer_client, exam_questions["exam"], "s08_3-17.pdf", pdf_giant_pages(2, side=2000))
    first = list(Page.objects.order_by("index_in_file"))
    assert [p.status for p in first] == ["prepared", "prepared"] and len(renders) == 2
    assert OcrRun.objects.filter(status="done").count() == 2
    assert reviewer_client.get(reverse("ocr:page_correct", args=[first[0].pk])).status_code == 200

    with run_tasks():  # the same scan again: only the worker can tell, after rendering
        _upload(reviewer_client, exam_questions["exam"], "s09_3-17.pdf", pdf_giant_pages(2, side=2000))
    again = Page.objects.filter(student_id="s09").order_by("index_in_file")
    assert [p.status for p in again] == ["failed", "failed"]
    assert f"already stored as page #{first[0].pk}" in again[0].prepare_error
    run = OcrRun.objects.get(page=again[0])
    assert run.status == "failed" and "already stored" in run.error
    batch_page = reviewer_client.get(reverse("ocr:batch_detail", args=[again[0].batch_id])).content.decode()
    assert "already stored as page #" in batch_page
    assert reviewer_client.get(reverse("ocr:page_correct", args=[again[0].pk])).status_code == 200


@pytest.mark.parametrize("data, phrase", [
    (pdf_giant_pages(1, side=14400, height=2), "too small to be a page"),
    (pdf_giant_pages(51, side=100), "51 pages"),
])
def test_unreadable_pdfs_are_refused_without_rendering(reviewer_client, exam_questions, renders, data, phrase):
    _upload(reviewer_client, exam_questions["exam"], "s10_3-17.pdf", data)
    scan_file = ScanFile.objects.get()
    assert scan_file.status == "refused" and phrase in scan_file.message, scan_file.message
    assert renders == [] and not Page.objects.exists()


def test_a_page_that_fails_to_render_fails_its_run_with_the_reason(reviewer_client, exam_questions, run_tasks):
    _upload(reviewer_client, exam_questions["exam"], "s11_3-17.pdf", pdf_giant_pages(1, side=600))
    page = Page.objects.get()
    default_storage.delete(page.source_file.stored)
    with default_storage.open(page.source_file.stored, "wb") as handle:
        handle.write(b"%PDF-1.4\n1 0 obj garbage")  # the stored file was damaged since
    run = services.perform_ocr_run(OcrRun.objects.get(page=page).pk)
    page.refresh_from_db()
    assert run.status == "failed" and "could not be opened" in run.error
    assert page.status == "failed" and "could not be opened" in page.prepare_error


MEMORY_SCRIPT = """
import json, os, resource, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
from django.conf import settings
settings.OCR_MAX_PIXELS = {max_pixels}  # the project's settings (every OCR limit), this one lowered
from pathlib import Path
from ocr import imaging

def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

small, data = Path(sys.argv[1]).read_bytes(), Path(sys.argv[2]).read_bytes()
imaging.render_pdf_page(small, 0)  # load PDFium before measuring
base = peak_mb()
result = imaging.read_upload(data)  # what the upload request does
upload = peak_mb() - base
sizes = []
for plan in result.pages:  # what the page tasks do, one after another
    page = imaging.render_pdf_page(data, plan.index)
    imaging.encode_png(page.image)
    sizes.append(page.image.size)
    del page
print(json.dumps({{"upload_mb": upload, "worker_mb": peak_mb() - base, "sizes": sizes}}))
"""


def test_peak_memory_stays_within_one_page(tmp_path):
    """In a fresh process: the upload path stays near nothing; the worker path near one page's pixels."""
    max_pixels = 4_000_000
    (tmp_path / "small.pdf").write_bytes(pdf_giant_pages(1, side=100))
    (tmp_path / "giant.pdf").write_bytes(pdf_giant_pages(20))
    command = [sys.executable, "-c", MEMORY_SCRIPT.format(max_pixels=max_pixels),
               str(tmp_path / "small.pdf"), str(tmp_path / "giant.pdf")]
    out = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    figures = json.loads(out.stdout)
    page_mb = max_pixels * 4 / 2**20  # one RGB page in Pillow (4 bytes a pixel): about 15 MB
    assert figures["upload_mb"] < 10, figures  # rendering the 20 pages here would hold 20 x 15 MB
    assert figures["worker_mb"] < 4 * page_mb, figures
    assert len(figures["sizes"]) == 20 and all(w * h <= max_pixels for w, h in figures["sizes"])
