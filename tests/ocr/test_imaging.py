"""Reading uploads and preparing pages with Pillow: orientation, modes, flattening, threshold, deskew."""
import io

import numpy as np
import pytest
from PIL import Image

from ocr import imaging, synthetic

from .conftest import jpeg_bytes, png_bytes
from .hostile_files import pdf_of_images


def test_sniff_decides_by_content_not_name():
    assert imaging.sniff(png_bytes(Image.new("L", (40, 40)))) == "png"
    assert imaging.sniff(jpeg_bytes(Image.new("L", (40, 40)))) == "jpeg"
    assert imaging.sniff(b"%PDF-1.7\n") == "pdf"
    assert imaging.sniff(b"II*\x00rest") == "tiff"
    assert imaging.sniff(b"\x00\x00\x00\x18ftypheic") == "heic"
    assert imaging.sniff(b"  <svg onload=x>") == "svg"
    assert imaging.sniff(b"hello") == "text"


def test_exif_orientation_is_applied():
    # Stored landscape with EXIF "rotate 90 CW to view" (6): the page is portrait.
    image = Image.new("L", (200, 100), 255)
    image.paste(0, (0, 0, 20, 20))  # a mark in the stored top-left corner
    exif = Image.Exif()
    exif[0x0112] = 6
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", exif=exif.tobytes())
    page = imaging.read_upload(buffer.getvalue()).pages[0].image
    assert page.size == (100, 200)
    # After rotating 90 degrees clockwise, the stored top-left corner is at the top right.
    assert page.getpixel((95, 5)) < 60 and page.getpixel((5, 5)) > 200


def test_heic_photo_is_read(tmp_path):
    pillow_heif = pytest.importorskip("pillow_heif")
    image = Image.new("RGB", (160, 120), (250, 250, 250))
    heif = pillow_heif.from_pillow(image)
    buffer = io.BytesIO()
    heif.save(buffer, quality=90)
    result = imaging.read_upload(buffer.getvalue())
    assert result.kind == "heic" and result.pages[0].image.size == (160, 120)


def test_transparency_and_16_bit_become_8_bit_pages_on_white():
    rgba = Image.new("RGBA", (50, 50), (0, 0, 0, 0))
    assert imaging.normalise_mode(rgba).getpixel((1, 1)) == (255, 255, 255)
    deep = Image.new("I;16", (50, 50), 65535)
    assert imaging.normalise_mode(deep).mode == "L"
    assert imaging.normalise_mode(Image.new("CMYK", (50, 50))).mode == "RGB"


def test_pdf_pages_are_measured_then_rasterised_one_at_a_time_at_the_configured_dpi():
    pdf = pdf_of_images([Image.new("L", (100, 140), 255), Image.new("L", (100, 140), 0)])
    plans = imaging.read_upload(pdf).pages
    assert [plan.index for plan in plans] == [0, 1] and all(isinstance(p, imaging.PdfPagePlan) for p in plans)
    pages = [imaging.render_pdf_page(pdf, plan.index) for plan in plans]
    # 100 px at 100 dpi is 72 pt; at 200 dpi that is 200 px.
    width, height = pages[0].image.size
    assert width == 200 and abs(height - 280) <= 1
    assert (plans[0].width, plans[0].height) == pages[0].image.size  # the plan is the rendered size
    assert pages[0].checksum != pages[1].checksum


def test_pixel_checksum_sees_pixels_not_encoding():
    image = synthetic.render_page(["解"], width=200)
    png = imaging.read_upload(png_bytes(image)).pages[0]
    tiff = io.BytesIO()
    image.save(tiff, "TIFF")
    assert imaging.read_upload(tiff.getvalue()).pages[0].checksum == png.checksum


def test_flattening_removes_shading_but_keeps_ink():
    image, _ = synthetic.spoiled_page(0, noise=0, specks=0, rotate=0, jpeg_quality=None, shading=0.5)
    flat = np.asarray(imaging.flatten_background(image.convert("L")), dtype=float)
    raw = np.asarray(image.convert("L"), dtype=float)
    paper_raw = np.percentile(raw, 90, axis=0)
    paper_flat = np.percentile(flat, 90, axis=0)
    assert paper_raw.max() - paper_raw.min() > 60  # the lamp's falloff across the page
    assert paper_flat.max() - paper_flat.min() < 15
    assert (flat < 100).sum() > 0.5 * (raw < 100).sum()


def test_sauvola_threshold_gives_black_ink_on_white():
    image = synthetic.render_page(["所以 f(1)=4"], width=500)
    binary = np.asarray(imaging.sauvola_threshold(image))
    assert set(np.unique(binary)) <= {0, 255}
    ink = (binary == 0).mean()
    assert 0.01 < ink < 0.2


@pytest.mark.parametrize("angle", [-3.0, -1.2, 2.5])
def test_deskew_finds_the_rotation(angle):
    image = synthetic.render_page(synthetic.page_lines(3), width=900, rotate=angle)
    found = imaging.estimate_skew(image)
    assert abs(found + angle) <= 0.3


def test_prepared_renditions_share_one_geometry(settings):
    settings.OCR_WEB_MAX_SIDE = 800
    image = synthetic.render_page(synthetic.page_lines(1), width=1200, rotate=2.0)
    prepared = imaging.prepare_page(image)
    assert prepared.gray.size == prepared.binary.size
    assert max(prepared.display.size) <= 800 and max(prepared.thumb.size) <= 240
    assert prepared.work_to_display == pytest.approx(prepared.display.width / prepared.gray.width)
    assert prepared.display.height == pytest.approx(prepared.gray.height * prepared.work_to_display, abs=1)
    assert abs(prepared.skew_degrees + 2.0) <= 0.3


def test_a_gray_reading_engine_gets_no_threshold_and_the_same_geometry(settings):
    """RapidOCR's preparation skips the threshold and rotates by OpenCV: the same page frame
    (within a pixel of Pillow's), deskewed, and nearly the same pixels."""
    settings.OCR_WEB_MAX_SIDE = 800
    image = synthetic.render_page(synthetic.page_lines(1), width=1200, rotate=2.0)
    full, gray_only = imaging.prepare_page(image), imaging.prepare_page(image, reads="gray")
    assert gray_only.binary is None and full.binary is not None
    assert gray_only.skew_degrees == full.skew_degrees
    assert abs(gray_only.gray.width - full.gray.width) <= 1 and abs(gray_only.gray.height - full.gray.height) <= 1
    assert gray_only.work_to_display == pytest.approx(gray_only.display.width / gray_only.gray.width)
    size = (min(full.gray.width, gray_only.gray.width), min(full.gray.height, gray_only.gray.height))
    a = np.asarray(full.gray.crop((0, 0, *size)), dtype=float)
    b = np.asarray(gray_only.gray.crop((0, 0, *size)), dtype=float)
    assert np.abs(a - b).mean() < 3.0


@pytest.mark.parametrize("mode", ["RGB", "L"])
def test_the_screen_rendition_is_the_rotated_page_scaled_down(mode):
    """Scaled first and rotated after (fast), it shows what rotating the full page and then
    scaling it would show: the same frame, the ink in the same places."""
    image = synthetic.render_page(synthetic.page_lines(2), width=1400, rotate=0).convert(mode)
    angle = 2.0
    full = image.rotate(angle, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=(255,) * len(mode))
    expected = imaging.fit_within(full, 700)
    shown = imaging.screen_rendition(image, angle, full.size, 700)

    assert shown.size == expected.size and shown.mode == mode
    difference = np.abs(np.asarray(shown, dtype=float) - np.asarray(expected, dtype=float))
    assert difference.mean() < 3.0, "the ink is where it would be after a full-size rotation"
    assert imaging.screen_rendition(image, 0.0, image.size, 700).size == imaging.fit_within(image, 700).size


def test_blank_page_needs_no_deskew():
    assert imaging.estimate_skew(Image.new("L", (300, 300), 255)) == 0.0
