"""A browser walk on the demo (issue 37): a reviewer opens the Validity view of the scripted
step-report judge, reads the first-wrong-step table and the per-checkpoint κ table against the
demo experts' made-up step labels and checkpoint marks, and the setting form's step-report option;
in English and Chinese (screenshots under test-artifacts/)."""
import re

import pytest
from django.core.management import call_command

from grading import demo
from grading.models import JudgeSetting

from ..conftest import login, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LATIN_WORD = re.compile(r"[A-Za-z]{3,}")
NAMES = {"Cohen", "Krippendorff", "JSON"}  # names of methods and formats stay as they are


def _to_chinese(page):
    page.wait_for_load_state("load")  # the menu's script posts the choice (before it runs, the link opens a confirm page)
    page.click("text=简体中文")
    page.wait_for_selector("html[lang=zh-Hans]")


def _rows(page, table):
    return [[cell.strip() for cell in row.locator("td").all_inner_texts()] for row in page.locator(f"{table} tbody tr").all()]


def test_step_report_tables_and_form_on_the_demo(page, live_server):
    call_command("create_demo_users", verbosity=0)
    call_command("load_demo", verbosity=0)
    setting = JudgeSetting.objects.get(name=demo.STEP_REPORT_SETTING)
    login(page, live_server, "reviewer", "reviewer-demo-pass")
    page.goto(f"{live_server.url}/validity/?setting={setting.pk}")
    page.wait_for_selector("#step-report-first-table")
    screenshot(page, "validity_step_report_en")
    scope = page.inner_text("#step-report-scope")
    assert "64 answers with the judge's step report (0 unreadable" in scope
    first = _rows(page, "#step-report-first-table")
    assert first[0][0] == "all answers" and [r[0] for r in first[1:3]] == ["human answers", "synthetic answers"]
    assert all(re.fullmatch(r"\d+", r[1]) and re.fullmatch(r"\d+", r[4]) for r in first)
    assert int(first[0][1]) + int(first[0][4]) == 48  # the demo experts labelled steps on 48 answers
    assert all(re.fullmatch(r"[\d.]+%|—", cell) for r in first for cell in (r[2], r[3], r[5]))
    kappas = _rows(page, "#checkpoint-kappa")
    # 2 questions x 4 checkpoints x (all, and each source the experts labelled: question 1 synthetic only)
    assert len(kappas) == 4 * 2 + 4 * 3
    assert {r[7] for r in kappas} - {"—"}, "some checkpoint has a κ"
    assert all(re.fullmatch(r"-?[\d.]+|—", r[7]) for r in kappas)
    assert "No expert has marked" not in page.inner_text("#validity-agreement")

    _to_chinese(page)
    page.wait_for_selector("#checkpoint-kappa")
    screenshot(page, "validity_step_report_zh")
    section = page.inner_text("#validity-agreement")
    start = section.index(page.inner_text("#validity-agreement h3 >> nth=0"))
    heads = " ".join(page.locator("#validity-agreement th").all_inner_texts())
    assert not set(LATIN_WORD.findall(heads)) - NAMES, heads  # besides names: n, κ and F1 only
    left = [w for w in LATIN_WORD.findall(section[start:]) if w not in NAMES]
    assert not left, left
    assert _rows(page, "#step-report-first-table")[0][1:] == first[0][1:]  # the same figures in Chinese

    # The setting form's option, in Chinese then English.
    page.goto(f"{live_server.url}/grading/judges/settings/{setting.pk}/edit/")
    page.wait_for_selector("#step-report-row")
    assert page.is_checked("#step-report-row input[type=checkbox]")
    row = page.inner_text("#step-report-row")
    assert not set(LATIN_WORD.findall(row)) - NAMES, row
    screenshot(page, "judge_setting_step_report_zh")
    page.goto(f"{live_server.url}/grading/judges/settings/{setting.pk}/")
    assert not LATIN_WORD.findall(page.inner_text("#config-step-report"))
    page.wait_for_load_state("load")
    page.click("text=English")
    page.wait_for_selector("html[lang=en]")
    page.goto(f"{live_server.url}/grading/judges/settings/{setting.pk}/edit/")
    page.wait_for_selector("#step-report-row")
    assert "Ask for the first wrong step and each checkpoint reached" in page.inner_text("#step-report-row")
    screenshot(page, "judge_setting_step_report_en")
