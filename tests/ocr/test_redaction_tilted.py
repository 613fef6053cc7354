"""A class PDF scanned a few degrees off: its template's regions still cover the name (issue 40,
item 1). Real class PDF (made here), real deskew, real tesseract (chi_sim+eng).

The deskewed page is larger than the form (a tilted page rotated back onto a canvas that holds it
whole), with the form upright in its middle; a region applied at the same fractions of that
canvas fell beside the name line ("姓名：张伟" reached /ocr/pages/8/'s transcript)."""
import io

import numpy as np
import pytest
from PIL import Image

from ocr import redaction, synthetic
from ocr.engines.tesseract import TesseractEngine
from ocr.models import OcrRun, Page

from .test_redaction import ingest, template

pytestmark = pytest.mark.django_db

NAME = "张伟"
# An A4 page at 200 dpi (1654 px wide, about 2,300 high): the name line first, the answer below.
LINES = [f"姓名：{NAME}    学号：s01    高二3班", "解：设公差为d，则 a_n = 3n - 1", "所以 d = 3，a_10 = 29",
         *synthetic.EXAM_LINES, *synthetic.EXAM_LINES[:8]]
FONT, GAP, MARGIN, WIDTH = 40, 36, 80, 1654


def form():
    """The upright form (mode L) and the region that covers its name line, tightly (page fractions)."""
    page = synthetic.render_page(LINES, width=WIDTH, font_size=FONT, margin=MARGIN, line_gap=GAP)
    top = MARGIN - 8
    bottom = top + FONT + 20
    return page, [0.0, top / page.height, 1.0, bottom / page.height]


def tilted_pdf(degrees, copies=2):
    """A scan of the form `degrees` off: the page rotated inside the scanner's frame (same size,
    corners cut, as a sheet fed askew), saved as a class PDF of `copies` pages."""
    page, _ = form()
    scans = [page.rotate(degrees, resample=Image.Resampling.BICUBIC, expand=False, fillcolor=250) for _ in range(copies)]
    scans = [scan.point(lambda v, i=i: min(255, v + i)) for i, scan in enumerate(scans)]  # distinct pixels
    buffer = io.BytesIO()
    scans[0].save(buffer, "PDF", save_all=True, append_images=scans[1:], resolution=150)
    return buffer.getvalue()


def _read(exam, degrees, region, run_tasks, monkeypatch):
    received = []
    recognise = TesseractEngine.recognise
    monkeypatch.setattr(TesseractEngine, "recognise",
                        lambda self, image: received.append(image.copy()) or recognise(self, image))
    with run_tasks():
        batch = ingest(exam, tilted_pdf(degrees), template({"1": "3-17", "2": "3-18"}, [region]))
    runs = list(OcrRun.objects.filter(page__batch=batch).order_by("page__index_in_file"))
    assert [run.status for run in runs] == ["done", "done"]
    return runs, received


def _compact(text):
    return "".join(text.split())


@pytest.mark.parametrize("degrees", [3.0, -3.0])
def test_a_tilted_page_keeps_its_name_out_of_the_transcript(exam_questions, run_tasks, monkeypatch, degrees):
    _, region = form()
    runs, received = _read(exam_questions["exam"], degrees, region, run_tasks, monkeypatch)
    for run, image in zip(runs, received):
        page = run.page
        assert abs(abs(page.skew_degrees) - abs(degrees)) < 0.6, page.skew_degrees  # the scan was deskewed
        text = _compact(run.raw_text)
        assert NAME not in text and "张" not in text and "伟" not in text, run.raw_text
        assert "3n" in text or "29" in text, run.raw_text  # the answer is still read
        # The form's name line, found in the middle of the larger deskewed image, is blank there.
        (box,) = redaction.on_canvas([region], _form_size(image, page.skew_degrees), image.size)
        ((left, top, right, bottom),) = redaction.pixel_boxes(image.size, [box])
        inside = np.asarray(image.convert("L"))[top + 2:bottom - 1, left + 2:right - 1]
        assert int(inside.min()) >= 250, inside.min()


def test_the_screens_hatch_the_region_where_the_engine_blanks_it(exam_questions, run_tasks, monkeypatch):
    _, region = form()
    runs, received = _read(exam_questions["exam"], 3.0, region, run_tasks, monkeypatch)
    page = Page.objects.get(pk=runs[0].page_id)
    hatched = page.screen_redaction_regions
    assert region in hatched and len(hatched) == 2  # at the template's fractions, and on the form
    blanked = redaction.deskewed_regions([region], _form_size(received[0], page.skew_degrees), page.skew_degrees,
                                         received[0].size)
    assert np.allclose(np.array(hatched), np.array(blanked), atol=0.003)


def test_an_upright_page_is_blanked_exactly_where_the_template_says(exam_questions, run_tasks, monkeypatch):
    _, region = form()
    runs, _ = _read(exam_questions["exam"], 0.0, region, run_tasks, monkeypatch)
    for run in runs:
        assert run.page.skew_degrees == 0 and run.page.screen_redaction_regions == [region]
        assert NAME not in _compact(run.raw_text) and "3n" in _compact(run.raw_text)


def _form_size(image, angle):
    """The form's size in the engine's image (the page before the deskew rotation, at that scale)."""
    cos, sin = abs(np.cos(np.radians(angle))), abs(np.sin(np.radians(angle)))
    width, height = image.size
    det = cos * cos - sin * sin
    return (width * cos - height * sin) / det, (height * cos - width * sin) / det
