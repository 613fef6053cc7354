"""At 800 px wide: the correction screen shows the transcript on the first screen, the batch
table keeps its "Correct" buttons in view, and fix-packet thumbnails are large enough to check."""
import pytest

from ocr.models import Page

from ..conftest import login, screenshot
from .conftest import distinct_image, jpeg_bytes, png_bytes

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


def test_fix_packet_thumbnails_are_large_enough_to_check_a_swap(browser, live_server, make_batch, reviewer):
    """A 200-dpi A4 scan: its thumbnail is shown at its own size (240 px tall, not squeezed to the
    90 x 110 px of the batch table), and stays within the screen at 800 px."""
    from ocr.synthetic import full_page

    batch, _ = make_batch([(f"s{i}_3-17_1.jpg", jpeg_bytes(full_page(i)[0])) for i in range(2)], engine="vision")
    assert Page.objects.filter(batch=batch).exclude(thumb="").count() == 2
    for width in (1280, 800):
        context = browser.new_context(viewport={"width": width, "height": 800})
        page = context.new_page()
        page.set_default_timeout(15000)
        login(page, live_server, reviewer.username)
        page.goto(f"{live_server.url}/ocr/batches/{batch.pk}/packets/")
        thumbs = page.locator(".packet-page img.ocr-thumb")
        assert thumbs.count() == 2
        for index in range(2):
            thumb = thumbs.nth(index)
            thumb.scroll_into_view_if_needed()
            page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=thumb.element_handle())
            natural = thumb.evaluate("img => [img.naturalWidth, img.naturalHeight]")
            box = thumb.bounding_box()
            assert box is not None, width
            assert max(natural) >= 200 and natural[1] > natural[0], natural  # a portrait page, scaled for a thumbnail
            assert box["height"] >= 200 and box["width"] >= 150, (width, box, natural)
            assert box["width"] >= natural[0], (width, box, natural)  # not squeezed below its own size (+ border)
            assert box["x"] >= 0 and box["x"] + box["width"] <= width, (width, box)
        assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
        screenshot(page, f"ocr_packets_{width}")
        context.close()
