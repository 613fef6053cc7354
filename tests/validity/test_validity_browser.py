"""A browser walk on the demo: a reviewer opens the Validity view of the scripted judge from the
review menu, reads the four answers, asks for the missing third labels; in English and Chinese."""
import pytest
from django.core.management import call_command

from annotation.models import Assignment
from validity.models import GoldDraw

from ..conftest import login, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_validity_walk_on_the_demo(page, live_server):
    call_command("create_demo_users", verbosity=0)
    call_command("load_demo", verbosity=0)
    login(page, live_server, "reviewer", "reviewer-demo-pass")
    page.goto(f"{live_server.url}/grading/review/metrics/")
    page.click("nav.review-tabs >> text=Validity")
    page.wait_for_selector("#validity-aat")
    page.select_option("select[name=setting]", label="Scripted demo judge (made-up scores) v1")
    page.click("#validity-form button[type=submit]")
    page.wait_for_selector("#aat-table")
    assert page.locator("#aat-table tbody tr").count() == 3  # the three demo experts, each left out in turn
    assert "Fewer than the 50 answers" in page.inner_text("#validity-aat")
    assert page.is_visible("#ppi-reason")  # every demo answer has a gold: said, not estimated
    page.click("summary")
    page.fill("input[name=budget]", "20")
    page.click("#validity-form button[type=submit]")
    page.wait_for_selector("#ppi-table")
    assert page.is_visible("#ppi-simulated") and page.is_visible("#deferral-verdict")
    screenshot(page, "validity_en")
    page.click("#assign-aat")
    page.wait_for_selector(".messages")
    draw = GoldDraw.objects.get(purpose="aat")
    assert len(draw.response_ids) == 2 and Assignment.objects.filter(response_id__in=draw.response_ids).count() == 4
    assert "seed 0" in page.inner_text(".messages")
    page.wait_for_load_state("load")  # the menu's script posts the choice (before it runs, the link opens a confirm page)
    page.click("text=简体中文")
    page.wait_for_selector("html[lang=zh-Hans]")
    page.wait_for_selector("#validity-aat")
    screenshot(page, "validity_zh")
    assert "这个评判模型能在这里替代专家吗" in page.inner_text("#validity-aat h2")
