"""`ocr_page` prints what an engine reads; `ingest_scans` uploads a folder as a batch."""
import io
import json

import pytest
from django.core.management import CommandError, call_command

from ocr.models import OcrRun, Page, ScanBatch

from .conftest import png_bytes, small_page


def test_ocr_page_prints_the_text_after_preprocessing(tmp_path):
    image, truth = small_page(4, lines=1)
    path = tmp_path / "page.png"
    path.write_bytes(png_bytes(image))
    out = io.StringIO()
    call_command("ocr_page", str(path), "--engine", "tesseract", stdout=out)
    from ocr.metrics import cer

    assert cer(out.getvalue(), truth) < 0.3
    out = io.StringIO()
    call_command("ocr_page", str(path), "--engine", "tesseract", "--json", stdout=out)
    payload = json.loads(out.getvalue())
    assert payload["engine"] == "tesseract" and payload["tokens"] and payload["seconds"] > 0


def test_ocr_page_refuses_bad_input(tmp_path):
    bad = tmp_path / "x.jpg"
    bad.write_bytes(b"not an image")
    with pytest.raises(CommandError, match="plain text"):
        call_command("ocr_page", str(bad))
    with pytest.raises(CommandError, match="Cannot read"):
        call_command("ocr_page", str(tmp_path / "missing.png"))


@pytest.mark.django_db
def test_ingest_scans_makes_a_batch_and_reports_each_file(tmp_path, exam_questions, reviewer,
                                                          django_capture_on_commit_callbacks):
    (tmp_path / "s01_3-17_1.png").write_bytes(png_bytes(small_page(0)[0]))
    (tmp_path / "s02_3-18_1.png").write_bytes(png_bytes(small_page(1)[0]))
    (tmp_path / "broken_3-17_1.jpg").write_bytes(b"\xff\xd8\xff\xe0 truncated")
    (tmp_path / "readme.txt").write_text("not a scan")
    out = io.StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("ingest_scans", str(tmp_path), "--exam", "Scan exam", "--engine", "tesseract",
                     "--user", reviewer.username, "--name", "folder", stdout=out)
    text = out.getvalue()
    batch = ScanBatch.objects.get(name="folder")
    assert batch.created_by == reviewer
    assert Page.objects.filter(batch=batch).count() == 2
    assert "refused   broken_3-17_1.jpg: Refused: The JPEG file is truncated or corrupt" in text
    assert "readme.txt" not in text
    assert "2 new page(s) queued for tesseract" in text
    assert OcrRun.objects.filter(page__batch=batch, status="done").count() == 2
    out = io.StringIO()
    call_command("ingest_scans", str(tmp_path), "--exam", "Scan exam", "--wait", stdout=out)
    assert "duplicate" in out.getvalue() and "OCR 0/0 (0 failed)" in out.getvalue()


@pytest.mark.django_db
def test_ingest_scans_checks_its_arguments(tmp_path, exam_questions):
    with pytest.raises(CommandError, match="No exam"):
        call_command("ingest_scans", str(tmp_path), "--exam", "Nope")
    for odd in ("²", "9" * 25):  # "²".isdigit() is True; int("²") raised
        with pytest.raises(CommandError, match="No exam"):
            call_command("ingest_scans", str(tmp_path), "--exam", odd)
    with pytest.raises(CommandError, match="No scan files"):
        call_command("ingest_scans", str(tmp_path), "--exam", "Scan exam")
    with pytest.raises(CommandError, match="not a directory"):
        call_command("ingest_scans", str(tmp_path / "missing"), "--exam", "Scan exam")
