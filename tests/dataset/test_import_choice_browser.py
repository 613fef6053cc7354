"""A browser walk (issue 34): on the demo, import the full release into a new exam asking first;
the page says where its two demo questions are, and one button moves them in, without uploading
the file again; the Import page's recent imports are in words."""
from pathlib import Path

import pytest
from django.core.management import call_command

from annotation.models import Question

from ..conftest import login, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
RELEASE = Path(__file__).resolve().parents[2] / "fixtures" / "realmath_eval_full" / "realmath_eval.json"


def test_asked_where_the_release_goes_then_one_button_moves_it_together(page, live_server, settings, tmp_path):
    settings.IMPORT_ROOT = tmp_path
    call_command("create_demo_users", verbosity=0)
    call_command("load_demo", verbosity=0)
    login(page, live_server, "reviewer", "reviewer-demo-pass")
    page.goto(f"{live_server.url}/import/")
    page.select_option("select[name=format]", "realmath")
    page.set_input_files("input[name=file]", str(RELEASE))
    page.fill("input[name=exam]", "Release")
    assert page.is_checked("input[name=overlap][value=ask]")  # asking first is the default
    page.click("#import-form button[type=submit]")
    page.wait_for_selector("#overlap-choice")
    screenshot(page, "release_import_asked")
    assert "RealMath-Eval sample: 2 questions" in page.inner_text("#overlap-holders")
    assert Question.objects.filter(exam__name="Release").count() == 0
    page.click("#overlap-choice button[value=move]")
    page.wait_for_selector("#placed-questions")
    screenshot(page, "release_import_moved")
    assert Question.objects.filter(exam__name="Release").count() == 14
    assert page.inner_text("#placed-questions").count("moved from “RealMath-Eval sample” into “Release”") == 2
    # The Import page's recent imports, in words with exam names.
    page.goto(f"{live_server.url}/import/")
    screenshot(page, "import_recent_in_words")
    text = page.inner_text("table.grid >> nth=-1")
    assert "questions_created" not in text and "skipped_by_exam" not in text
    assert "into “Release”" in text and "into “RealMath-Eval sample”" in text
