"""In a real browser, the whole chain: a class PDF uploaded with its roster and template -> OCR
(tesseract, eager Celery) -> two pages corrected and verified -> the batch assigned from its
page -> the annotator labels with the scan beside the transcript
(OCR word boxes outlined) and flags a passage -> a reviewer corrects the transcript -> the
annotator's step label is still on its text."""
import io
import json
import re

import pytest

from annotation.models import Response, StepLabel
from ocr import synthetic
from ocr.models import Page, TranscriptFlag

from ..conftest import login, screenshot
from ..labelling.helpers import select_text

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PAGES = [["Let x = 2 and y = 3.", "Then x + y = 5."], ["So the answer is 5."]]
# Collects CSP violations from the start of every document (init scripts are not subject to the CSP).
CSP_LISTENER = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => { window.__csp.push(e.violatedDirective + " " + e.sourceFile); });
"""


@pytest.fixture
def class_scan(tmp_path):
    """One student's packet of two pages, both answering 3-17 (the second continues the first)."""
    images = [synthetic.render_page(lines, width=900, font_size=36, seed=number)
              for number, lines in enumerate(PAGES, start=1)]
    buffer = io.BytesIO()
    images[0].save(buffer, "PDF", save_all=True, append_images=images[1:], resolution=100)
    pdf, roster, template = tmp_path / "class.pdf", tmp_path / "roster.csv", tmp_path / "template.json"
    pdf.write_bytes(buffer.getvalue())
    roster.write_text("student_id,name\ns7,Student Seven\n")
    template.write_text(json.dumps({"pages_per_student": 2, "pages": {"1": "3-17", "2": "+"}}))
    return pdf, roster, template


def verify(page, live_server, page_pk, text):
    page.goto(f"{live_server.url}/ocr/pages/{page_pk}/")
    page.wait_for_function("() => document.getElementById('transcript-text').value.length > 0")
    page.fill("#transcript-text", text)
    page.focus("#transcript-text")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("#save-message:has-text('Verified. Response #')")


def test_scans_to_labels_that_survive_a_correction(page, browser, live_server, exam_questions, reviewer, annotator,
                                                   class_scan):
    # Upload the class PDF with its roster and template; OCR runs (the tasks run eagerly).
    pdf, roster, template = class_scan
    login(page, live_server, reviewer.username)
    page.goto(f"{live_server.url}/ocr/")
    form = page.locator("#class-form")
    form.locator("select[name=exam]").select_option(str(exam_questions["exam"].pk))
    form.locator("select[name=engine]").select_option("tesseract")
    form.locator("input[name=name]").fill("Class scans")
    form.locator("input[name=pdf]").set_input_files(str(pdf))
    form.locator("input[name=roster]").set_input_files(str(roster))
    form.locator("input[name=template]").set_input_files(str(template))
    with page.expect_navigation(url=re.compile(r"/ocr/batches/\d+/$"), timeout=180_000):
        form.locator("button[type=submit]").click(no_wait_after=True)
    page.wait_for_selector("#batch-links:has-text('Class PDF: 1 packets of 2 pages')")
    page.wait_for_function("() => /OCR 2 \\/ 2 pages/.test(document.body.innerText)", timeout=180_000)

    # Correct and verify both pages: one response of student s7 to 3-17.
    first, second = Page.objects.order_by("page_number")
    verify(page, live_server, first.pk, "\n".join(PAGES[0]))
    verify(page, live_server, second.pk, "\n".join(PAGES[1]))
    response = Response.objects.get(student_id="s7")
    assert response.status == "ready" and "So the answer is 5." in response.transcript

    # Assign the batch's verified answer from the batch page.
    page.goto(f"{live_server.url}/ocr/batches/{first.batch_id}/")
    labels_form = page.locator("#assign-labels-form")
    labels_form.locator("[name=per_response]").fill("1")
    for box in labels_form.locator("input[name=annotators]").all():
        box.set_checked(box.get_attribute("value") == str(annotator.pk))
    with page.expect_navigation():
        labels_form.locator("button[type=submit]").click()
    assert response.assignments.filter(annotator=annotator).exists()

    # The annotator labels with the scan beside the transcript.
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    expert = context.new_page()
    expert.set_default_timeout(15000)
    expert.add_init_script(CSP_LISTENER)
    try:
        login(expert, live_server, annotator.username)
        expert.goto(f"{live_server.url}/label/")
        expert.keyboard.press("n")
        expert.wait_for_url(re.compile(rf"/label/{response.pk}/"))
        expert.wait_for_function("() => document.getElementById('scan-image').naturalWidth > 0")
        assert "page 1 of 2" in expert.inner_text("#scan-page-label")
        select_text(expert, "answer is 5")
        # Its OCR words are outlined on the second page, which the viewer switched to.
        expert.wait_for_selector("#scan-stage[data-highlighted]:not([data-highlighted='0'])")
        assert "page 2 of 2" in expert.inner_text("#scan-page-label")
        assert expert.locator("#scan-boxes .scan-word").count() >= 2
        screenshot(expert, "scan_word_boxes")
        expert.keyboard.press("e")
        expert.wait_for_selector("#step-form:not([hidden])")
        expert.keyboard.press("1")  # correct
        expert.keyboard.press("Enter")
        expert.wait_for_selector("#step-list li")
        # Zoom and page keys drive the viewer, not the score form.
        expert.keyboard.press("+")
        assert expert.inner_text("#scan-zoom").endswith("%")
        expert.keyboard.press("f")
        expert.keyboard.press("v")
        assert "page 1 of 2" in expert.inner_text("#scan-page-label")
        # The same viewer as the correction screen: Ctrl+wheel zooms, Alt+F fits from a text field.
        fitted = expert.inner_text("#scan-zoom")
        frame = expert.locator("#scan-viewport").bounding_box()
        expert.mouse.move(frame["x"] + frame["width"] / 2, frame["y"] + frame["height"] / 2)
        expert.keyboard.down("Control")
        expert.mouse.wheel(0, -100)
        expert.keyboard.up("Control")
        assert expert.inner_text("#scan-zoom") != fitted
        expert.focus("#comment")
        expert.keyboard.press("Alt+f")
        assert expert.inner_text("#scan-zoom") == fitted and expert.input_value("#comment") == ""
        expert.keyboard.press("Escape")  # leaves the comment field
        screenshot(expert, "scan_beside_label")

        # "Transcript wrong here": back to the correction queue with the note and the span.
        select_text(expert, "x + y = 5")
        expert.keyboard.press("t")
        expert.wait_for_selector("#flag-form:not([hidden])")
        expert.fill("#flag-note", "the scan has a plus sign here, check it")
        expert.keyboard.press("Enter")
        expert.wait_for_selector("#save-status:has-text('Sent back to the correction queue')")
        flag = TranscriptFlag.objects.get()
        assert flag.page_id == first.pk and flag.quote == "x + y = 5"

        expert.keyboard.press("5")  # (1)
        expert.keyboard.press("j")
        expert.keyboard.press("4")  # (2)
        expert.keyboard.press("Control+Enter")
        expert.wait_for_url(re.compile(r"submitted=1"))
        step = StepLabel.objects.get()
        assert response.transcript[step.start:step.end] == "answer is 5"

        # A reviewer corrects the first page (the flag leads the batch); the text before the label moves.
        page.goto(f"{live_server.url}/ocr/batches/{first.batch_id}/")
        assert page.get_attribute("#page-table tbody tr >> nth=0", "data-page") == str(first.pk)
        page.goto(f"{live_server.url}/ocr/pages/{first.pk}/")
        page.wait_for_selector("#transcript-flags mark:has-text('x + y = 5')")
        screenshot(page, "flagged_page_correction")
        verify(page, live_server, first.pk, "First of all, let x = 2 and y = 3.\nThen x + y = 5.")
        response.refresh_from_db()
        step.refresh_from_db()
        assert response.transcript.startswith("First of all")
        assert response.transcript[step.start:step.end] == "answer is 5" and not step.needs_review
        assert not TranscriptFlag.objects.filter(resolved_at__isnull=True).exists()

        # The annotator's label is still on its text.
        expert.goto(f"{live_server.url}/label/{response.pk}/")
        expert.wait_for_selector("#transcript .seg.step")
        assert expert.inner_text("#transcript .seg.step").strip() == "answer is 5"
        assert expert.locator("#review-steps").count() == 0
        assert expert.locator("#transcript-changed").count() == 1
        screenshot(expert, "label_after_correction")
        assert expert.evaluate("window.__csp") == []  # the scan viewer and labelling modules under the CSP
    finally:
        context.close()
