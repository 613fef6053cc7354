"""At 800 px wide: the correction screen shows the transcript on the first screen, the batch
table keeps its "Correct" buttons in view, and fix-packet thumbnails are large enough to check."""
import pytest

from ocr.models import Page

from ..conftest import login, screenshot
from .conftest import distinct_image, png_bytes

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_correction_screen_and_batch_table_at_800px(browser, live_server, make_batch, reviewer):
    context = browser.new_context(viewport={"width": 800, "height": 800})
    page = context.new_page()
    page.set_default_timeout(15000)
    batch, _ = make_batch([(f"s{i}_3-17_1.png", png_bytes(distinct_image(60 + i))) for i in range(2)],
                          engine="vision")
    login(page, live_server, reviewer.username)
    page.goto(f"{live_server.url}/ocr/batches/{batch.pk}/")
    button = page.locator("#page-table a.button:text-is('Correct')").first
    box = button.bounding_box()
    assert box is not None and box["x"] + box["width"] <= 800, box
    screenshot(page, "ocr_batch_800")
    first = Page.objects.filter(batch=batch).order_by("pk").first()
    page.goto(f"{live_server.url}/ocr/pages/{first.pk}/")
    editor = page.locator("#transcript-text").bounding_box()
    assert editor is not None and editor["y"] < 800, editor  # starts on the first screen
    screenshot(page, "ocr_correct_800")
    context.close()
