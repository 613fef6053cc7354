"""A browser walk on a demo database: import the full RealMath-Eval release into a new exam through
the import page (its two demo questions moved in with it), then label a 3-19 answer: (1), (2) and
(3) each hold their own steps and full points, and the captions say what a step is worth."""
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from accounts.services import set_user_language
from annotation.labelling import services
from annotation.models import Question, Response

from ..conftest import login, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
RELEASE = Path(__file__).resolve().parents[2] / "fixtures" / "realmath_eval_full" / "realmath_eval.json"


def test_import_the_release_then_label_a_3_19_answer(page, live_server):
    call_command("create_demo_users", verbosity=0)
    call_command("load_demo", verbosity=0)
    login(page, live_server, "reviewer", "reviewer-demo-pass")
    page.goto(f"{live_server.url}/import/")
    page.select_option("select[name=format]", "realmath")
    page.set_input_files("input[name=file]", str(RELEASE))
    page.fill("input[name=exam]", "RealMath-Eval release")
    page.check("input[name=overlap][value=move]")
    page.click("#import-form button[type=submit]")
    page.wait_for_url("**/import/**")
    page.wait_for_selector("#rubric-warnings")  # the three questions whose data contradict their markers
    screenshot(page, "release_import_report")
    assert Question.objects.filter(exam__name="RealMath-Eval release").count() == 14

    question = Question.objects.get(exam__name="RealMath-Eval release", location="3-19")
    response = Response.objects.filter(question=question).order_by("pk").first()
    annotator = get_user_model().objects.get(username="annotator1")
    services.assign_responses(responses=Response.objects.filter(pk=response.pk), annotators=[annotator],
                              per_response=1, strategy="round_robin")
    page.context.clear_cookies()
    login(page, live_server, "annotator1", "annotator-demo-pass")
    page.goto(f"{live_server.url}/label/{response.pk}/")
    page.wait_for_selector("#group-2")
    heads = [page.inner_text(f"#group-{i} .glabel") for i in range(3)]
    maxima = [page.inner_text(f"#group-{i} .max") for i in range(3)]
    steps = [page.locator(f"#group-{i} .cp").count() for i in range(3)]
    assert (heads, maxima, steps) == (["(1)", "(2)", "(3)"], ["/ 4", "/ 5", "/ 5"], [3, 4, 4])
    captions = page.locator("#group-1 .cp-name").all_inner_texts()
    assert captions[0] == "Step 1: 1 pt, reaching it 5 of 14"  # (2)'s first step adds 1 to the 4 of (1); "1 pt", not "1 pts"
    assert captions[3] == "Step 4: 2 pts, reaching it 9 of 14"
    screenshot(page, "release_label_3_19")

    set_user_language(annotator, "zh-hans")  # the same screen in Chinese
    page.goto(f"{live_server.url}/label/{response.pk}/")
    page.wait_for_selector("#group-2")
    assert [page.inner_text(f"#group-{i} .glabel") for i in range(3)] == ["(1)", "(2)", "(3)"]
    assert [page.inner_text(f"#group-{i} .max") for i in range(3)] == maxima
    assert page.locator("#group-1 .cp-name").all_inner_texts()[:4] == [
        "步骤 1：本步 1 分，做到此步得 5 分（满分 14）", "步骤 2：本步 1 分，做到此步得 6 分（满分 14）",
        "步骤 3：本步 1 分，做到此步得 7 分（满分 14）", "步骤 4：本步 2 分，做到此步得 9 分（满分 14）"]
    screenshot(page, "release_label_3_19_zh")
