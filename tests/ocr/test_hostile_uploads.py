"""Hostile uploads: each gets a clear message, the rest of the batch goes on, nothing stored is lost."""
import gc
import io
import weakref
from pathlib import Path

import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from PIL import Image

from ocr import imaging
from ocr.models import OcrRun, Page, ScanFile
from ocr.services import Upload, create_batch, ingest_uploads

from .conftest import distinct_image, png_bytes
from .hostile_files import hostile_cases, pdf_of_images

pytestmark = pytest.mark.django_db


@pytest.fixture
def stored_page(make_batch):
    """A page stored before the hostile batch arrives."""
    data = png_bytes(distinct_image(1))
    batch, results = make_batch([("early_3-17_1.png", data)])
    page = Page.objects.get(batch=batch)
    with default_storage.open(page.master, "rb") as handle:
        master = handle.read()
    return {"page": page, "upload": data, "master": master, "file": results[0]}


@pytest.mark.filterwarnings("ignore:Corrupt EXIF data")
def test_every_hostile_upload_is_refused_with_a_clear_message_and_the_batch_goes_on(
    exam_questions, reviewer, stored_page, settings
):
    cases = hostile_cases(stored_page["upload"])
    good = [
        Upload("s01_3-17_1.png", png_bytes(distinct_image(201)), "image/png"),
        Upload("s02_3-17.pdf", pdf_of_images([distinct_image(202, (300, 400)), distinct_image(203, (300, 400))]),
               "application/pdf"),
    ]
    hostile = [Upload(case.name, case.data, case.declared_type) for case in cases]
    refused = [case for case in cases if case.status == "refused"]
    assert len(refused) >= 20

    batch = create_batch(exam=exam_questions["exam"], engine="tesseract", user=reviewer)
    # Good files first, in the middle and last: none of them may be affected by their neighbours.
    uploads = [good[0], *hostile[: len(hostile) // 2], good[1], *hostile[len(hostile) // 2 :]]
    results = ingest_uploads(batch, uploads)

    assert len(results) == len(uploads)
    by_name = {scan_file.original_name: scan_file for scan_file in results}
    for case in cases:
        scan_file = by_name[case.name]
        assert scan_file.status == case.status, (case.name, scan_file.message)
        assert case.phrase.lower() in scan_file.message.lower(), (case.name, scan_file.message)
        assert scan_file.message.strip(), case.name
        if case.status == "refused":
            assert scan_file.message.startswith("Refused:"), scan_file.message
            assert not scan_file.pages.exists()
            assert scan_file.stored == ""
    assert by_name["s01_3-17_1.png"].status == "accepted"
    assert by_name["s02_3-17.pdf"].status == "accepted"
    assert by_name["s02_3-17.pdf"].pages.count() == 2
    accepted_awkward = [case for case in cases if case.status == "accepted"]
    assert Page.objects.filter(batch=batch).count() == 3 + len(accepted_awkward)
    # Every new page got its OCR run queued.
    assert OcrRun.objects.filter(page__batch=batch).count() == Page.objects.filter(batch=batch).count()

    # What was stored before is untouched.
    before = stored_page["page"]
    page = Page.objects.get(pk=before.pk)
    assert (page.checksum, page.master, page.batch_id) == (before.checksum, before.master, before.batch_id)
    with default_storage.open(page.master, "rb") as handle:
        assert handle.read() == stored_page["master"]
    assert ScanFile.objects.get(pk=stored_page["file"].pk).status == "accepted"

    # A hostile file name never reaches the storage path.
    traversal = by_name["../../../etc/passwd_3-18_6.png"]
    stored_paths = [traversal.stored, *traversal.pages.values_list("master", flat=True)]
    for name in stored_paths:
        assert ".." not in name and name.startswith("ocr/")
        assert Path(default_storage.path(name)).resolve().is_relative_to(Path(settings.MEDIA_ROOT).resolve())
    assert traversal.pages.get().student_id == "passwd"


def test_oversized_file_is_refused_without_being_read(make_batch, settings):
    settings.OCR_MAX_UPLOAD_BYTES = 2000
    small = png_bytes(distinct_image(5))
    large = png_bytes(distinct_image(6, (900, 900))) + b"\x00" * 4000
    batch, results = make_batch([("ok_3-17_1.png", small), ("big_3-17_2.png", large)])
    assert [r.status for r in results] == ["accepted", "refused"]
    assert "limit per file" in results[1].message


def test_hostile_files_through_the_upload_page_keep_the_good_ones(reviewer_client, exam_questions):
    files = [
        SimpleUploadedFile("s05_3-17_1.png", png_bytes(distinct_image(301)), content_type="image/png"),
        SimpleUploadedFile("evil_3-17_2.jpg", b"<svg onload=alert(1)></svg>", content_type="image/jpeg"),
        SimpleUploadedFile("zero_3-17_3.jpg", b"", content_type="image/jpeg"),
    ]
    response = reviewer_client.post(
        reverse("ocr:batch_list"),
        {"exam": exam_questions["exam"].pk, "engine": "tesseract", "name": "mixed", "scans": files},
        follow=True,
    )
    assert response.status_code == 200
    body = response.content.decode()
    assert "1 of 3 file(s) accepted" in body
    assert "evil_3-17_2.jpg: Refused" in body
    assert "zero_3-17_3.jpg: Refused: The file is empty" in body
    assert "&lt;svg" not in body and "<svg onload" not in body
    assert Page.objects.filter(student_id="s05").count() == 1


class Source:
    """A file object that counts reads; `broken` makes reading fail like a vanished temp file."""

    def __init__(self, data, broken=False):
        self.data, self.broken, self.reads = data, broken, 0
        self.size = len(data)

    def read(self):
        self.reads += 1
        if self.broken:
            raise OSError("temporary upload file vanished")
        return self.data


def test_files_are_read_one_at_a_time_and_a_failing_read_stops_only_that_file(exam_questions, reviewer):
    sources = [Source(png_bytes(distinct_image(401))), Source(b"", broken=True), Source(png_bytes(distinct_image(402)))]
    uploads = [Upload(f"s{i}_3-17_1.png", declared_type="image/png", source=s) for i, s in enumerate(sources)]
    batch = create_batch(exam=exam_questions["exam"], engine="tesseract", user=reviewer)
    results = ingest_uploads(batch, uploads)
    assert [r.status for r in results] == ["accepted", "refused", "accepted"]
    assert "unexpected error" in results[1].message and "OSError" in results[1].message
    assert [s.reads for s in sources] == [1, 1, 1]
    assert all(upload.data is None for upload in uploads)  # nothing kept in memory after its turn


def _tiff(images):
    buffer = io.BytesIO()
    images[0].save(buffer, "TIFF", save_all=True, append_images=images[1:], compression="tiff_adobe_deflate")
    return buffer.getvalue()


def test_tiff_frames_are_decoded_one_at_a_time(make_batch, monkeypatch):
    alive, real = [], imaging._decode_frame

    def tracked(image, kind):
        gc.collect()
        assert [ref for ref in alive if ref() is not None] == []  # the previous frame was let go
        decoded = real(image, kind)
        alive.append(weakref.ref(decoded.image))
        return decoded

    monkeypatch.setattr(imaging, "_decode_frame", tracked)
    batch, results = make_batch([("s20_3-17.tiff", _tiff([distinct_image(800 + i, (200, 150)) for i in range(5)]))])
    assert results[0].status == "accepted" and Page.objects.filter(batch=batch).count() == 5 and len(alive) == 5


def test_tiff_with_a_corrupt_late_frame_is_refused_whole_and_nothing_is_kept(make_batch, settings):
    data = _tiff([distinct_image(900 + i, (200, 150)) for i in range(3)])
    frame = Image.open(io.BytesIO(data))
    frame.seek(2)
    start, length = frame.tag_v2[273][0], frame.tag_v2[279][0]
    broken = data[:start] + bytes(length) + data[start + length:]
    batch, results = make_batch([("s21_3-17.tiff", broken)])
    assert results[0].status == "refused" and "truncated or corrupt" in results[0].message
    assert not Page.objects.filter(batch=batch).exists()
    assert [path for path in Path(settings.MEDIA_ROOT).rglob("*") if path.is_file()] == []  # frames 1-2 removed


def test_tiff_with_the_same_frame_twice_keeps_it_once(make_batch):
    first, second = distinct_image(950, (200, 150)), distinct_image(951, (200, 150))
    batch, results = make_batch([("s22_3-17.tiff", _tiff([first, first, second]))])
    assert results[0].status == "accepted" and Page.objects.filter(batch=batch).count() == 2
    assert "Skipped page 2: the same image as page 1 of this file." in results[0].message
