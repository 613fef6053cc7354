"""In a real browser: a class PDF refused for a label of another exam keeps its three files; the
page names the exam that holds the labels and imports into it with one click, nothing chosen again
(English and Chinese)."""
import re

import pytest

from accounts.services import set_user_language
from ocr.models import PendingClassUpload, ScanBatch
from tests.factories import make_question

from ..conftest import login, screenshot
from .class_scans import class_pdf, roster, template

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_refused_class_pdf_is_imported_into_the_suggested_exam(page, live_server, exam_questions, reviewer,
                                                                 tmp_path, language):
    make_question("Release 7-01: $e^{x} - \\frac{3}{2}x^{2}$.", exam_name="Release exam", location="7-01")
    release = make_question("Release 7-02: $\\ln x$.", exam_name="Release exam", location="7-02").exam
    set_user_language(reviewer, language)
    files = {"pdf": tmp_path / "class.pdf", "roster": tmp_path / "ROSTER.csv", "template": tmp_path / "TEMPLATE.json"}
    files["pdf"].write_bytes(class_pdf(4))
    files["roster"].write_bytes(roster("s01", "s02"))
    files["template"].write_bytes(template({"1": "7-01", "2": "7-02"}))
    login(page, live_server, reviewer.username)
    page.goto(f"{live_server.url}/ocr/")
    form = page.locator("#class-form")
    form.locator("select[name=exam]").select_option(str(exam_questions["exam"].pk))
    form.locator("select[name=engine]").select_option("tesseract")
    form.locator("input[name=name]").fill("Class 3B")
    for name, path in files.items():
        form.locator(f"input[name={name}]").set_input_files(str(path))
    with page.expect_navigation(url=re.compile(r"/ocr/class/kept/\d+/$")):
        form.locator("button[type=submit]").click()
    errors = page.inner_text("#class-errors")
    assert "7-01" in errors and "Scan exam" in errors
    kept = page.inner_text("#kept-list")
    assert "class.pdf" in kept and "ROSTER.csv" in kept and "TEMPLATE.json" in kept
    button = page.locator(f"#exam-suggestions button[data-exam='{release.pk}']")
    if language == "en":
        assert button.inner_text() == "Import into exam “Release exam”"
    else:
        assert page.inner_text("h1") == "全班 PDF 尚未导入"
        assert button.inner_text() == "导入到考试“Release exam”"
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
    screenshot(page, f"class-pending-{language}")
    # The batch list says the files are waiting, with a way back.
    page.goto(f"{live_server.url}/ocr/")
    assert page.locator("#pending-uploads a").count() == 1
    page.locator("#pending-uploads a").click()
    with page.expect_navigation(url=re.compile(r"/ocr/batches/\d+/$")):
        page.locator(f"#exam-suggestions button[data-exam='{release.pk}']").click()
    batch = ScanBatch.objects.get()
    assert batch.exam == release and batch.name == "Class 3B" and batch.pages.count() == 4
    assert not PendingClassUpload.objects.exists()
    screenshot(page, f"class-pending-taken-{language}")
