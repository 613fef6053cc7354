"""In a real browser: upload a page, wait for OCR, correct a word, verify; the response and history change."""
import re

import pytest

from annotation.models import Response
from ocr import synthetic
from ocr.models import Page, Transcript

from ..conftest import login, screenshot
from .conftest import png_bytes

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LINES = ["所以 f(1)=4，故答案为 4。", "椭圆的离心率 e=c/a=1/2"]


@pytest.fixture
def scan_file(tmp_path):
    image = synthetic.render_page(LINES, width=900, font_size=34, rotate=1.5, noise=6, seed=3)
    path = tmp_path / "s42_3-17_1.png"
    path.write_bytes(png_bytes(image))
    return path


def upload_and_open_page(page, live_server, exam_questions, scan_file):
    page.goto(f"{live_server.url}/ocr/")
    page.select_option("select[name=exam]", str(exam_questions["exam"].pk))
    page.select_option("select[name=engine]", "rapidocr")
    page.fill("input[name=name]", "Browser batch")
    page.set_input_files("input[name=scans]", str(scan_file))
    screenshot(page, "ocr_upload")
    # Tasks run eagerly in tests: the upload request itself runs the OCR, which takes a while.
    with page.expect_navigation(url=re.compile(r"/ocr/batches/\d+/$"), timeout=180_000):
        page.click("#upload-form button[type=submit]", no_wait_after=True)
    page.wait_for_selector("text=OCR 1 / 1 pages")
    page.wait_for_selector("img.ocr-thumb")
    screenshot(page, "ocr_batch")
    page.click("#page-table a.button:has-text('Correct')")
    page.wait_for_selector("#transcript-text")
    page.wait_for_function("() => document.getElementById('transcript-text').value.includes('答案')")


def test_upload_ocr_correct_a_word_and_verify(page, live_server, exam_questions, reviewer, scan_file, settings):
    settings.OCR_LOW_CONFIDENCE = 0.9999  # mark nearly every character, to exercise the highlights
    login(page, live_server, reviewer.username)
    upload_and_open_page(page, live_server, exam_questions, scan_file)

    # Low-confidence characters are marked in the transcript and their boxes drawn on the image.
    page.wait_for_selector("#backdrop mark")
    page.click("#raw-output .low >> nth=2")
    assert page.is_visible("#box-highlight")
    box = page.eval_on_selector("#box-highlight", "e => [parseFloat(e.style.left), parseFloat(e.style.width)]")
    assert box[0] > 0 and box[1] > 3
    page.focus("#transcript-text")
    page.keyboard.press("Alt+l")
    selected = page.evaluate("(() => { const t = document.getElementById('transcript-text');"
                             " return t.selectionEnd - t.selectionStart; })()")
    assert selected >= 1

    # The page pans by dragging, with a mouse and with a finger on a tablet (pointer events).
    def stage_x():
        return page.eval_on_selector("#stage", "e => new DOMMatrix(getComputedStyle(e).transform).m41")

    frame = page.locator("#viewer").bounding_box()
    cx, cy = frame["x"] + frame["width"] / 2, frame["y"] + frame["height"] / 2
    before = stage_x()
    page.mouse.move(cx, cy)
    page.mouse.down()
    page.mouse.move(cx - 60, cy, steps=4)
    page.mouse.up()
    assert stage_x() == pytest.approx(before - 60, abs=1)
    touch = page.context.new_cdp_session(page)
    for kind, x in (("touchStart", cx), ("touchMove", cx + 40), ("touchMove", cx + 80), ("touchEnd", None)):
        touch.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": [] if x is None else [{"x": x, "y": cy}]})
    assert stage_x() == pytest.approx(before + 20, abs=1)

    # The one scan viewer's keys and gestures (static/js/scan_viewer.js, as on the labelling
    # screen): Alt+F fits from the transcript box, Ctrl+wheel zooms at the pointer, the plain
    # wheel pans an image larger than the frame, f and + work outside a text field.
    def zoom():
        return int(page.inner_text("#zoom-level").rstrip("%"))

    def stage_y():
        return page.eval_on_selector("#stage", "e => new DOMMatrix(getComputedStyle(e).transform).m42")

    page.focus("#transcript-text")
    page.keyboard.press("Alt+f")
    fitted = zoom()
    assert fitted < 150  # showing a low-confidence box had zoomed to 150%
    page.mouse.move(cx, cy)
    page.keyboard.down("Control")
    page.mouse.wheel(0, -100)
    page.keyboard.up("Control")
    assert zoom() == pytest.approx(fitted * 1.1, abs=1)
    for _ in range(4):
        page.keyboard.press("Alt+Equal")
    assert zoom() == pytest.approx(fitted * 1.1 * 1.25 ** 4, abs=2)
    left = stage_x()  # the page is wide: zoomed in, it reaches past the frame's sides
    page.mouse.wheel(120, 0)
    assert stage_x() == pytest.approx(left - 120, abs=1)
    page.focus("#viewer")
    page.keyboard.press("f")
    assert zoom() == fitted
    page.keyboard.press("+")
    assert zoom() == pytest.approx(fitted * 1.25, abs=1)
    page.keyboard.press("f")
    fitted_y = stage_y()
    page.mouse.wheel(0, 120)  # a page that fits does not move under the wheel (the page scrolls on)
    assert zoom() == fitted and stage_y() == fitted_y

    # Alt+P shows the thresholded page. RapidOCR's task made none: the first look makes it.
    assert Page.objects.get().processed == ""
    page.keyboard.press("Alt+p")
    page.wait_for_function("() => { const i = document.getElementById('page-img');"
                           " return i.src.includes('/image/processed/') && i.complete && i.naturalWidth > 0; }")
    assert Page.objects.get().processed
    screenshot(page, "ocr_correct_processed")
    page.keyboard.press("Alt+p")
    page.wait_for_function("() => document.getElementById('page-img').src.includes('/image/web/')")

    # Correct a word by typing over it, and add a formula: the preview renders it with KaTeX.
    page.evaluate("""(() => {
        const t = document.getElementById('transcript-text');
        const at = t.value.indexOf('答案');
        t.focus(); t.setSelectionRange(at, at + 2);
    })()""")
    page.keyboard.type("结果")
    page.keyboard.press("End")
    page.keyboard.type(" $x^2$")
    page.wait_for_selector("#preview .katex")
    page.wait_for_selector("#save-status:has-text('saved · version')")  # autosave
    transcript = Transcript.objects.get()
    assert "结果" in transcript.text and transcript.version == 2
    screenshot(page, "ocr_correct")

    page.keyboard.press("Control+Enter")
    page.wait_for_selector("#save-message:has-text('Verified. Response #')")
    page.wait_for_selector("#transcript-status:has-text('Verified')")
    response = Response.objects.get(student_id="s42")
    assert "故结果为" in response.transcript and "$x^2$" in response.transcript
    assert response.question == exam_questions["3-17"] and response.status == "ready"
    assert Page.objects.get().response == response

    # The history shows the edit; the response page shows the new text.
    page.click("#history-link")
    page.wait_for_selector(".revision")
    assert page.locator(".ocr-diff del", has_text="答案").count() == 1
    assert page.locator(".ocr-diff ins", has_text="结果").count() == 1
    screenshot(page, "ocr_history")
    page.goto(f"{live_server.url}/responses/{response.pk}/")
    page.wait_for_selector("#transcript .katex")
    assert "故结果为" in page.inner_text("#transcript")
    assert page.locator(".ocr-response-scans a", has_text="page 1").count() == 1

    page.hover(".menu-group[data-group=scans]")
    page.click(".menu-group[data-group=scans] >> text=OCR quality")
    page.wait_for_selector("#quality-table")
    assert "rapidocr" in page.inner_text("#quality-table")
    screenshot(page, "ocr_quality")


def test_batch_progress_bar_follows_the_runs(page, live_server, make_batch, reviewer):
    from ocr.models import OcrRun

    from .conftest import distinct_image

    batch, _ = make_batch([(f"s{i}_3-17_1.png", png_bytes(distinct_image(50 + i))) for i in range(2)],
                          engine="vision")  # no endpoint configured here: the runs fail at once
    OcrRun.objects.filter(page__batch=batch).update(status="queued", error="")
    login(page, live_server, reviewer.username)
    page.goto(f"{live_server.url}/ocr/batches/{batch.pk}/")
    assert page.inner_text("#progress-text") == "OCR 0 / 2 pages"
    run = OcrRun.objects.filter(page__batch=batch).first()
    OcrRun.objects.filter(pk=run.pk).update(status="done")
    page.wait_for_selector("#progress-text:has-text('OCR 1 / 2 pages')")
    assert page.get_attribute(".progress", "aria-valuenow") == "50"
    OcrRun.objects.filter(page__batch=batch).exclude(pk=run.pk).update(status="failed", error="no endpoint")
    page.wait_for_selector("text=Retry failed")  # the page reloads itself when the batch is complete
    assert page.inner_text("#progress-text") == "OCR 2 / 2 pages · 1 failed"


def test_a_second_editor_gets_a_clear_stale_message(page, browser, live_server, exam_questions, reviewer, admin_user,
                                                    scan_file):
    login(page, live_server, reviewer.username)
    upload_and_open_page(page, live_server, exam_questions, scan_file)
    other_context = browser.new_context(viewport={"width": 1400, "height": 900})
    other = other_context.new_page()
    try:
        login(other, live_server, admin_user.username)
        other.goto(page.url)
        other.wait_for_function("() => document.getElementById('transcript-text').value.length > 0")

        page.focus("#transcript-text")
        page.keyboard.press("Control+End")
        page.keyboard.type("甲")
        page.keyboard.press("Control+s")
        page.wait_for_selector("#save-status:has-text('saved · version')")

        other.focus("#transcript-text")
        other.keyboard.press("Control+End")
        other.keyboard.type("乙")
        other.keyboard.press("Control+s")
        other.wait_for_selector("#save-message:has-text('Not saved')")
        message = other.inner_text("#save-message")
        assert "rev1 saved version 2" in message and "Your text is still in the editor" in message
        assert other.input_value("#transcript-text").endswith("乙")
        screenshot(other, "ocr_stale_save")
    finally:
        other_context.close()
    transcript = Transcript.objects.get()
    assert transcript.text.endswith("甲") and "乙" not in transcript.text
