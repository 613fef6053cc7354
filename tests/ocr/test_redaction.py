"""Redaction regions of a class PDF's template: read and checked, and blank in the image every
engine receives (real tesseract on a real page; the vision engine through the real openai client
against the loopback server, the image decoded from what the server received)."""
import base64
import io
import json

import numpy as np
import pytest
from PIL import Image

from ocr import class_templates, packets, redaction, synthetic
from ocr.engines.tesseract import TesseractEngine
from ocr.models import OcrRun, Page

from .class_scans import class_pdf, pdf_upload, roster

pytestmark = pytest.mark.django_db

NAME = "QIAOFENGXYZ"  # written on every page, inside the region
NAME_REGION = [0.0, 0.0, 1.0, 0.33]


def name_page(n):
    """A page whose first line is a student's name and whose next lines are an answer."""
    return synthetic.render_page([f"Name: {NAME} {n}", "a_n = 3n - 1", "d = 3"], width=520, font_size=30, margin=24,
                                 line_gap=20)


def named_pdf(n_pages):
    images = [name_page(i) for i in range(n_pages)]
    buffer = io.BytesIO()
    images[0].save(buffer, "PDF", save_all=True, append_images=images[1:], resolution=100)
    return buffer.getvalue()


def template(pages, redact=None, count=None):
    document = {"pages_per_student": count or len(pages), "pages": pages}
    if redact is not None:
        document["redact"] = redact
    return json.dumps(document).encode()


def ingest(exam, pdf, template_bytes, engine="tesseract", students=("s01",)):
    return packets.ingest_class_pdf(exam=exam, engine=engine, upload=pdf_upload(pdf), roster=roster(*students),
                                    template=template_bytes, name="class 3B")


def assert_uniform(image, region, inset=2):
    """Every pixel inside `region` (page fractions), `inset` pixels in from its edges, has one value."""
    gray = np.asarray(image.convert("L"))
    ((left, top, right, bottom),) = redaction.pixel_boxes(image.size, [region])
    inside = gray[top + inset:bottom - inset + 1, left + inset:right - inset + 1]
    assert inside.size > 100
    assert int(inside.max()) - int(inside.min()) <= 3, f"region not uniform: {inside.min()}..{inside.max()}"
    assert inside.mean() > 245  # the paper's white (redaction.ENGINE_FILL)


# --- the template ------------------------------------------------------------------------------

def test_regions_are_stored_per_page_of_a_packet(exam_questions):
    exam = exam_questions["exam"]
    _, every = class_templates.read_template(template({"1": "3-17", "2": "3-18"}, [[0.5, 0, 1, 0.1]]), exam)
    assert every["redact"] == {"1": [[0.5, 0.0, 1.0, 0.1]], "2": [[0.5, 0.0, 1.0, 0.1]]}
    _, per_page = class_templates.read_template(
        template({"1": None, "2": "3-17", "3": "3-18"}, {"3": [[0, 0.9, 0.25, 1]], "1": [[0, 0, 1, 0.5], [0, 0.6, 1, 1]]}),
        exam)
    assert per_page["redact"] == {"1": [[0.0, 0.0, 1.0, 0.5], [0.0, 0.6, 1.0, 1.0]], "3": [[0.0, 0.9, 0.25, 1.0]]}
    _, none = class_templates.read_template(template({"1": "3-17"}), exam)
    assert "redact" not in none
    # The page at index 4 of the class PDF is page 2 of the second packet of a 3-page template.
    assert redaction.regions_for(per_page, 4) == [] and redaction.regions_for(per_page, 5) == [[0.0, 0.9, 0.25, 1.0]]
    assert redaction.regions_for(per_page, 3) == [[0.0, 0.0, 1.0, 0.5], [0.0, 0.6, 1.0, 1.0]]
    assert redaction.regions_for({}, 0) == []


BAD_REGIONS = [
    ("not a list", "everything", "redact must be a list of regions"),
    ("three numbers", [[0, 0, 1]], "region 1: a region is four numbers"),
    ("x0 not below x1", [[0.5, 0, 0.5, 1]], "x0 must be less than x1"),
    ("y0 above y1", [[0, 0.8, 1, 0.2]], "x0 must be less than x1 and y0 less than y1"),
    ("outside the page", [[0, 0, 1.5, 1]], "every value must lie between 0 and 1"),
    ("negative", [[-0.1, 0, 1, 1]], "every value must lie between 0 and 1"),
    ("a string", [[0, 0, "1", 1]], "\"1\" is not a number"),
    ("a boolean", [[0, 0, True, 1]], "true is not a number"),
    ("NaN", [[0, 0, float("nan"), 1]], "NaN is not a number"),
    ("page outside the packet", {"3": [[0, 0, 1, 1]]}, "redact names page \"3\", which is not a page of a 2-page packet"),
    ("page key not a number", {"first": [[0, 0, 1, 1]]}, "redact names page \"first\""),
    ("page's regions not a list", {"1": {"x0": 0}}, "redact, page 1 must be a list of regions"),
    ("too many", [[0, 0, 1, 1]] * 21, "at most 20 regions per page"),
]


@pytest.mark.parametrize("redact, expected", [r[1:] for r in BAD_REGIONS], ids=[r[0] for r in BAD_REGIONS])
def test_bad_regions_are_refused_whole_with_a_clear_message(exam_questions, redact, expected):
    with pytest.raises(packets.ClassScanRefused) as refused:
        ingest(exam_questions["exam"], class_pdf(2), template({"1": "3-17", "2": "3-18"}, redact))
    assert expected in " ".join(refused.value.problems)
    assert not Page.objects.exists()


def test_the_class_upload_form_shows_a_region_problem_and_keeps_nothing(client, reviewer, exam_questions):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    client.force_login(reviewer)
    answer = client.post(reverse("ocr:class_upload"), {
        "exam": exam_questions["exam"].pk, "engine": "tesseract", "name": "3B",
        "pdf": SimpleUploadedFile("class.pdf", class_pdf(2), "application/pdf"),
        "roster": SimpleUploadedFile("ROSTER.csv", roster("s01"), "text/csv"),
        "template": SimpleUploadedFile("TEMPLATE.json", template({"1": "3-17", "2": "3-18"}, [[0.9, 0, 0.1, 1]]),
                                       "application/json"),
    }, follow=True)
    # Refused: the files are kept for a retry (issue 28) and the page names the region's problem.
    assert answer.redirect_chain and "/ocr/class/kept/" in answer.redirect_chain[-1][0]
    assert "TEMPLATE.json: redact, region 1: x0 must be less than x1" in answer.content.decode()
    assert not Page.objects.exists()


# --- what the engines receive ------------------------------------------------------------------

def test_tesseract_reads_the_page_without_the_redacted_name(exam_questions, run_tasks, monkeypatch):
    received = []
    recognise = TesseractEngine.recognise

    def spy(self, image):
        received.append(image.copy())
        return recognise(self, image)

    monkeypatch.setattr(TesseractEngine, "recognise", spy)
    with run_tasks():
        batch = ingest(exam_questions["exam"], named_pdf(2), template({"1": "3-17", "2": "3-18"}, [NAME_REGION]))
    runs = list(OcrRun.objects.filter(page__batch=batch).order_by("page__index_in_file"))
    assert [run.status for run in runs] == ["done", "done"] and len(received) == 2
    for image, run in zip(received, runs):
        assert_uniform(image, NAME_REGION)
        assert NAME not in run.raw_text.replace(" ", "").upper()
        assert "3n" in run.raw_text.replace(" ", ""), [r.raw_text for r in runs]  # the answer below is still read
    # The stored scan is unchanged: the name is still on the master.
    page = Page.objects.get(pk=runs[0].page_id)
    from django.core.files.storage import default_storage

    with default_storage.open(page.master, "rb") as handle:
        master = Image.open(handle)
        master.load()
    ((left, top, right, bottom),) = redaction.pixel_boxes(master.size, [NAME_REGION])
    assert np.asarray(master.convert("L"))[top:bottom, left:right].min() < 100  # ink of the name


def test_a_page_without_regions_is_sent_as_it_is(exam_questions, run_tasks, monkeypatch):
    received = []
    recognise = TesseractEngine.recognise
    monkeypatch.setattr(TesseractEngine, "recognise", lambda self, image: received.append(image) or recognise(self, image))
    with run_tasks():
        ingest(exam_questions["exam"], named_pdf(2), template({"1": "3-17", "2": "3-18"}, {"2": [NAME_REGION]}))
    first, second = received
    gray = np.asarray(first.convert("L"))
    ((left, top, right, bottom),) = redaction.pixel_boxes(first.size, [NAME_REGION])
    assert gray[top:bottom, left:right].min() < 100  # page 1 of the packet has no region: its name is there
    assert_uniform(second, NAME_REGION)


def sent_images(server):
    """The page images the server received, decoded from their data URLs."""
    images = []
    for request in server.requests:
        for message in request.payload.get("messages", []):
            for part in message.get("content") if isinstance(message.get("content"), list) else []:
                if part.get("type") == "image_url":
                    data = part["image_url"]["url"].split(",", 1)[1]
                    images.append(Image.open(io.BytesIO(base64.b64decode(data))))
    return images


def test_the_vision_model_receives_the_page_with_the_region_blank(exam_questions, run_tasks, vision_llm_server):
    with run_tasks():
        batch = ingest(exam_questions["exam"], named_pdf(2), template({"1": "3-17", "2": "3-18"}, [NAME_REGION]),
                       engine="vision")
    assert set(OcrRun.objects.filter(page__batch=batch).values_list("status", flat=True)) == {"done"}
    images = sent_images(vision_llm_server)
    assert len(images) == 2
    for image in images:
        assert_uniform(image, NAME_REGION, inset=16)  # JPEG: blocks on the region's edge ring
        gray = np.asarray(image.convert("L"))
        assert gray[int(0.5 * image.height):, :].min() < 100  # the answer below is sent
    assert all(NAME not in json.dumps(r.payload) for r in vision_llm_server.requests)



# --- what the teacher sees ---------------------------------------------------------------------

@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_batch_and_correction_screens_show_the_regions(page, live_server, reviewer, run_tasks):
    from django.urls import reverse

    from tests.conftest import login, screenshot
    from tests.factories import make_question

    exam = make_question("Question 3-17: find $a_n$.", exam_name="Scan exam", location="3-17").exam
    make_question("Question 3-18: prove $x>0$.", exam_name="Scan exam", location="3-18")
    with run_tasks():
        batch = ingest(exam, named_pdf(2), template({"1": "3-17", "2": "3-18"}, {"1": [NAME_REGION]}))
    login(page, live_server, reviewer.username)
    page.goto(live_server.url + reverse("ocr:batch_detail", args=[batch.pk]))
    page.wait_for_selector("#redact-summary")
    boxes = page.locator(".redact-frame .redact-box")
    assert boxes.count() == 1  # page 1 of the packet has the region, page 2 none
    # The thumbnail is a lazy image: until it has loaded the frame is its 2 px border (seen under load).
    page.locator(".redact-frame img").first.evaluate(
        "img => img.complete && img.naturalHeight > 0 || new Promise(ok => img.addEventListener('load', ok))")
    frame = page.locator(".redact-frame").first.bounding_box()
    box = boxes.first.bounding_box()
    assert abs(box["width"] - frame["width"]) <= 2 and abs(box["height"] - 0.33 * frame["height"]) <= 2
    screenshot(page, "ocr-batch-redaction")
    first = Page.objects.get(batch=batch, index_in_file=0)
    page.goto(live_server.url + reverse("ocr:page_correct", args=[first.pk]))
    page.wait_for_selector("#redact-layer .redact-box")
    image, region = page.locator("#page-img").bounding_box(), page.locator("#redact-layer .redact-box").bounding_box()
    assert abs(region["x"] - image["x"]) <= 2 and abs(region["height"] - 0.33 * image["height"]) <= 3
    screenshot(page, "ocr-correct-redaction")
