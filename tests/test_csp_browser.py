"""Every main page, as each role, in Chromium under the Content Security Policy: no CSP
violation, no console error, no page error, and the page's own script did its work."""
import re
import time

import pytest
from django.core.management import call_command

from grading.judges.services import create_judge_setting, run_inline, start_judge_run
from grading.models import JudgeResult, JudgeSetting
from ocr.services import Upload, create_batch, ingest_uploads
from tests.conftest import DEMO_DIR, INEQMATH_SAMPLE, login, screenshot
from tests.factories import make_question
from tests.labelling.test_reviewer_pages_browser import label_sample
from tests.ocr.conftest import distinct_image, png_bytes

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Collects violations from the start of every document (Playwright's init scripts are not
# subject to the page's CSP).
LISTEN = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__csp.push(e.violatedDirective + " " + (e.blockedURI || "inline") + " " + e.sourceFile + ":" + e.lineNumber);
});
"""

EVERYONE = ["/", "/questions/", "/responses/", "/grading/equivalence/", "/api/docs/", "/accounts/password/",
            "/api/", "/api/responses/"]  # the last two: DRF's browsable API (config/api_renderers.py)
ANNOTATOR = ["/label/"]
REVIEWER = [
    "/import/", "/assign/", "/agreement/?metric=kappa", "/agreement/?metric=mad", "/adjudication/", "/export/",
    "/ocr/", "/ocr/quality/", "/grading/judges/", "/grading/judges/runs/", "/grading/judges/runs/new/",
    "/grading/judges/generation/", "/grading/judges/generation/new/", "/grading/review/metrics/",
    "/grading/review/disagreements/", "/grading/review/categories/", "/grading/review/validation/",
    "/grading/review/validation/report/", "/grading/report/", "/grading/report/?format=latex",
]
ADMIN = [
    "/admin/", "/admin/axes/accessattempt/", "/admin/auth/user/", "/grading/judges/settings/new/",
    "/grading/judges/endpoints/new/",
]
# Detail pages reached by following the first link of this shape on an earlier page.
DETAIL_LINKS = [
    r"^/questions/\d+/$", r"^/responses/\d+/$", r"^/label/\d+/$", r"^/adjudication/\d+/$", r"^/ocr/batches/\d+/$",
    r"^/ocr/pages/\d+/$", r"^/grading/judges/settings/\d+/$", r"^/grading/judges/runs/\d+/$",
    r"^/grading/judges/results/\d+/$", r"^/grading/review/disagreements/\d+/",
    r"^/grading/review/validation/\d+/",
]
ADMIN_DETAIL_LINKS = [r"^/admin/auth/user/\d+/change/$"]
# What a page's own script visibly does, so a blocked script cannot pass unseen.
SCRIPT_DID_WORK = {
    "/api/docs/": ".swagger-ui .opblock",
    "/agreement/?metric=kappa": "#matrix td.cell[style*=background]",
}


def timed(name, timings, func, *args, **kwargs):
    start = time.monotonic()
    result = func(*args, **kwargs)
    timings[name] = round(time.monotonic() - start, 1)
    return result


@pytest.fixture
def site(sample_data, annotator, annotator2, reviewer, admin_user):
    """The RealMath-Eval and IneqMath samples with labels and a conflict, the released judge
    outputs and meta-evaluation labels, a finished CAS judge run, and an OCR batch of one page.
    Returns detail pages that no list links to directly."""
    t = {}
    timed("labels", t, label_sample, annotator, annotator2)
    timed("judge results", t, call_command, "import_judge_results", str(DEMO_DIR / "meta_eval_input_examples.json"),
          setting="released-judge")
    timed("meta labels", t, call_command, "import_meta_eval_labels", str(DEMO_DIR / "meta_eval_labels_examples.json"))
    timed("ineqmath", t, call_command, "import_ineqmath", str(INEQMATH_SAMPLE))
    setting = create_judge_setting(name="cas", kind=JudgeSetting.Kind.CAS_FINAL_ANSWER, endpoint=None, model="")
    run = start_judge_run(setting, enqueue=False)
    timed("cas run", t, run_inline, run)
    question = make_question("Question 3-17: find $a_n$.", exam_name="Scan exam", location="3-17")
    batch = create_batch(exam=question.exam, engine="tesseract", user=reviewer)
    timed("ocr", t, ingest_uploads, batch, [Upload("s001_3-17_1.png", png_bytes(distinct_image(1)))])
    print("setup seconds", t)
    result = JudgeResult.objects.filter(run=run).first()
    released = JudgeSetting.objects.get(name="released-judge")
    return [f"/grading/judges/results/{result.pk}/", f"/grading/review/disagreements/?setting={released.pk}"]


class Walk:
    def __init__(self, page, base):
        self.page, self.base, self.problems, self.seen = page, base, [], set()
        page.add_init_script(LISTEN)
        page.on("console", self.on_console)
        page.on("pageerror", self.on_page_error)

    def on_console(self, message):
        if message.type == "error":
            self.problems.append(f"{self.page.url}: console: {message.text}")

    def on_page_error(self, error):
        self.problems.append(f"{self.page.url}: page error: {error}")

    def visit(self, path):
        response = self.page.goto(self.base + path)
        assert response.status == 200, (path, response.status)
        self.page.wait_for_load_state("load")
        for pattern, selector in SCRIPT_DID_WORK.items():
            if re.fullmatch(pattern, path):
                self.page.wait_for_selector(selector)
        if not path.startswith(("/admin/", "/api/")) or path == "/api/docs/":  # pages of ours load KaTeX and app.js
            assert self.page.evaluate("typeof window.katex.render + typeof window.RealMath.renderMath") == "functionfunction"
        self.page.wait_for_timeout(50)  # let late violations be reported
        for violation in self.page.evaluate("window.__csp || []"):
            self.problems.append(f"{path}: CSP: {violation}")
        self.seen.add(path)
        return [
            href for href in self.page.eval_on_selector_all("a[href]", "as => as.map(a => a.getAttribute('href'))")
            if href.startswith("/")
        ]

    def visit_all(self, paths):
        links = []
        for path in paths:
            links += self.visit(path)
        for pattern in DETAIL_LINKS + ADMIN_DETAIL_LINKS:
            match = next((href for href in links if re.match(pattern, href)), None)
            if match and match not in self.seen:
                links += self.visit(match)


def test_main_pages_pass_the_csp_without_console_errors(page, live_server, site, annotator, reviewer, admin_user):
    """One walk per role, in one test: the data is made once."""
    seen = {}
    for role, user in (("annotator", annotator), ("reviewer", reviewer), ("admin", admin_user)):
        page.context.clear_cookies()
        login(page, live_server, user.username)
        walk = Walk(page, live_server.url)
        paths = EVERYONE + {"annotator": ANNOTATOR, "reviewer": REVIEWER + site, "admin": REVIEWER + site + ADMIN}[role]
        walk.visit_all(paths)
        assert not walk.problems, "\n".join(walk.problems)
        check_moved_behaviour(page, walk, role)
        screenshot(page, f"csp_walk_{role}")
        assert not walk.problems, "\n".join(walk.problems)
        seen[role] = sorted(walk.seen)
        page.remove_listener("console", walk.on_console)
        page.remove_listener("pageerror", walk.on_page_error)

    assert len(seen["annotator"]) >= 10, seen["annotator"]
    for role in ("reviewer", "admin"):
        missing = [p for p in DETAIL_LINKS if not any(re.match(p, path) for path in seen[role])]
        assert not missing, (role, missing)
    assert set(seen["admin"]) >= set(ADMIN)
    assert any(re.match(ADMIN_DETAIL_LINKS[0], path) for path in seen["admin"]), seen["admin"]


def check_moved_behaviour(page, walk, role):
    """Behaviour that moved from inline script into static files still works."""
    walk.visit("/grading/equivalence/")
    page.click(".eq-example >> nth=0")
    page.wait_for_selector("#eq-label")
    if role == "annotator":
        return
    walk.visit("/grading/review/validation/report/")
    name, value = page.evaluate(
        "() => { for (const s of document.querySelectorAll('select[data-autosubmit]')) {"
        " const o = [...s.options].find(o => !o.selected); if (o) return [s.name, o.value]; } }"
    )
    with page.expect_navigation():  # data-autosubmit submits the filter form
        page.select_option(f"select[data-autosubmit][name={name}]", value)
    assert f"{name}=" in page.url
