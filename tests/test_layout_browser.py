"""Every page, as each role, at 800 px (a small laptop window, a tablet) and at 1280 px: nothing
wider than the window, no console error, math rendered where the page has math, and the menu
showing each role only what it can use. Screenshots land in test-artifacts/layout/.

The data is the demo (`load_demo`: samples, scripted judges), plus two differing labels (an
adjudication case), an export job and an OCR batch with one page.
"""
import io
from urllib.parse import urlparse

import pytest
from django.core.management import call_command
from django.urls import reverse

from .conftest import SCREENSHOT_DIR

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = ((800, 900), (1280, 800))
PASSWORDS = {"admin": "admin-demo-pass", "reviewer": "reviewer-demo-pass", "annotator1": "annotator-demo-pass"}
MENU_GROUPS = {
    "annotator1": {"Data", "Labelling", "Judges"},
    "reviewer": {"Data", "Labelling", "Scans", "Judges", "Review"},
    "admin": {"Data", "Labelling", "Scans", "Judges", "Review", "Admin"},
}


def _demo_with_cases():
    """The demo, two differing submitted labels of one answer, an export job and an OCR batch."""
    from django.contrib.auth import get_user_model

    from annotation.export.services import create_export_job
    from annotation.labelling import services
    from annotation.models import Assignment, Exam
    from ocr import synthetic
    from ocr.services import Upload, create_batch, ingest_uploads

    call_command("create_demo_users")
    call_command("load_demo")
    users = {u.username: u for u in get_user_model().objects.all()}
    assignment = Assignment.objects.filter(annotator=users["annotator1"]).order_by("response_id").first()
    response = assignment.response
    labels = [s.label for s in response.question.sub_questions.all()]
    for name, points in (("annotator1", 0), ("annotator2", 4)):
        scores = {label: 0 for label in labels}
        scores[labels[-1]] = points
        services.save_label(response=response, user=users[name], data={"sub_scores": scores, "override_reason": "demo"},
                            base_version=0, submit=True)
    job = create_export_job(users["reviewer"], "jsonl", {})
    probe_run = _probe_run()
    image = synthetic.render_page(["x = 2"], width=400, font_size=30, margin=24, line_gap=20)
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    exam = Exam.objects.get(name="RealMath-Eval sample")
    batch = create_batch(exam=exam, engine="tesseract", user=users["reviewer"], name="Layout scans")
    ingest_uploads(batch, [Upload("student1_3-07_1.png", buffer.getvalue())])
    pending = _kept_class_upload(users["reviewer"], exam)
    return {"response": response, "job": job, "batch": batch, "annotator_response": assignment.response,
            "probe_run": probe_run, "pending_upload": pending}


def _kept_class_upload(user, exam):
    """A refused class PDF kept for its uploader's retry (ocr.class_uploads): a label of no exam."""
    import json

    from django.core.files.uploadedfile import SimpleUploadedFile

    from ocr import class_uploads
    from ocr.services import Upload

    template = json.dumps({"pages_per_student": 1, "pages": {"1": "9-99"}}).encode()
    return class_uploads.keep_refused_upload(
        user=user, problems=["TEMPLATE.json: page 1 names question “9-99”, which exam does not have."], exam=exam,
        engine="tesseract", pdf=Upload("class.pdf", b"%PDF-1.4 kept"),
        roster=SimpleUploadedFile("ROSTER.csv", b"student_id\ns01\n"), template=SimpleUploadedFile("TEMPLATE.json", template),
    )


def _probe_run():
    """Two probes of the demo's scripted judge over a few answers (studies)."""
    from grading.models import JudgeSetting
    from llm import scripted
    from studies import services

    rubric = JudgeSetting.objects.get(name="Scripted demo judge (made-up scores)")
    run = services.start_probe_run(rubric, probe_names=["drop-final-answer", "notation-swap"], limit=4, enqueue=False)
    return services.run_inline(run, complete=scripted.complete)


def _pages(role, data):
    """(url, expects math) for every page `role` may open."""
    from annotation.models import Question
    from grading.models import GenerationRun, JudgeResult, JudgeRun, JudgeSetting, LlmEndpoint
    from ocr.models import Page as ScanPage

    question = Question.objects.filter(kind="bound").order_by("pk").first()  # its statement has TeX
    response = data["response"]
    pages = [
        (reverse("home"), False),
        (reverse("annotation:question_list"), False),
        (reverse("annotation:question_detail", args=[question.pk]), True),
        (reverse("annotation:exam_list"), False),
        (reverse("annotation:exam_detail", args=[question.exam_id]), True),
        (reverse("annotation:response_list"), False),
        (reverse("annotation:response_detail", args=[response.pk]), True),
        (reverse("annotation:label_queue"), False),
        (reverse("grading:equivalence"), False),
        (reverse("password_change"), False),
    ]
    if role == "annotator1":
        pages.append((reverse("annotation:label", args=[data["annotator_response"].pk]), True))
        return pages
    rubric = JudgeSetting.objects.get(name="Scripted demo judge (made-up scores)")
    run = JudgeRun.objects.filter(setting=rubric).first()
    result = JudgeResult.objects.filter(setting=rubric).order_by("pk").first()
    queue_case = JudgeResult.objects.filter(setting=rubric, meta_evaluation__isnull=False).order_by("pk").first()
    step_result = JudgeResult.objects.filter(setting__kind="ineq_toy_case").first()
    page = ScanPage.objects.filter(batch=data["batch"]).first()
    pages += [
        (reverse("annotation:label", args=[response.pk]), True),
        (reverse("annotation:label_history", args=[response.pk]), False),
        (reverse("annotation:assign"), False),
        (reverse("annotation:agreement"), False),
        (reverse("annotation:adjudication_queue"), False),
        (reverse("annotation:adjudicate", args=[response.pk]), True),
        (reverse("annotation:import"), False),
        (reverse("annotation:export"), False),
        (reverse("annotation:export_job", args=[data["job"].pk]), False),
        (reverse("ocr:batch_list"), False),
        (reverse("ocr:batch_detail", args=[data["batch"].pk]), False),
        *([(reverse("ocr:class_pending", args=[data["pending_upload"].pk]), False)] if role == "reviewer" else []),
        (reverse("ocr:page_correct", args=[page.pk]), False),
        (reverse("ocr:quality"), False),
        (reverse("grading:judges_home"), False),
        (reverse("grading:judge_setting_detail", args=[rubric.pk]), False),
        (reverse("grading:judge_run_list"), False),
        (reverse("grading:judge_run_start"), False),
        (reverse("grading:judge_run_detail", args=[run.pk]), False),
        (reverse("grading:judge_result_detail", args=[result.pk]), False),
        (reverse("grading:judge_generation_list"), False),
        (reverse("grading:judge_generation_detail", args=[GenerationRun.objects.first().pk]), False),
        (reverse("grading:review_metrics"), False),
        (reverse("grading:review_disagreements"), False),
        (reverse("grading:review_case", args=[queue_case.pk]), True),
        (reverse("grading:review_categories"), False),
        (reverse("grading:review_validation"), False),
        (reverse("grading:review_validation_report"), False),
        (reverse("grading:review_validation_case", args=[step_result.response_id]), True),
        (reverse("grading:methods_report"), False),
        (reverse("studies:probes"), False),
        (reverse("studies:probe_run", args=[data["probe_run"].pk]), False),
        (reverse("studies:probe_item", args=[data["probe_run"].items.order_by("pk").first().pk]), True),
        (reverse("grading:prompt_sets"), False),
        (reverse("studies:style"), False),
        (reverse("api-docs"), False),
    ]
    if role == "admin":
        pages += [
            (reverse("grading:judge_setting_create"), False),
            (reverse("grading:judge_setting_edit", args=[rubric.pk]), False),
            (reverse("grading:judge_endpoint_create"), False),
            (reverse("grading:judge_endpoint_edit", args=[LlmEndpoint.objects.first().pk]), False),
            (reverse("grading:judge_generation_start"), False),
        ]
    return pages


def _slug(url):
    return urlparse(url).path.strip("/").replace("/", "_") or "home"


@pytest.mark.parametrize("role", list(PASSWORDS))  # one test a role: the suite's workers share them out
def test_every_page_fits_each_width_for_each_role(browser, live_server, role):
    data = _demo_with_cases()
    problems = []
    password = PASSWORDS[role]
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.set_default_timeout(20000)
    errors = []
    # A failed request is reported with its URL by the response handler, not by its console line.
    page.on("console", lambda msg, errors=errors: msg.type == "error" and "Failed to load resource" not in msg.text
            and errors.append(msg.text))
    page.on("response", lambda r, errors=errors: r.status >= 400 and errors.append(f"{r.status} {r.url}"))
    page.on("pageerror", lambda exc, errors=errors: errors.append(str(exc)))
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", role)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/accounts/login/" not in url)
    groups = set(page.locator(".menu-group > .menu-title").all_inner_texts())
    if groups != MENU_GROUPS[role]:
        problems.append(f"{role}: menu groups {sorted(groups)}")
    for url, has_math in _pages(role, data):
        for width, height in WIDTHS:
            page.set_viewport_size({"width": width, "height": height})
            errors.clear()
            answer = page.goto(f"{live_server.url}{url}")
            page.wait_for_load_state("load")
            page.evaluate("() => document.fonts.ready.then(() => true)")
            where = f"{role} {url} at {width}px"
            if answer is None or answer.status != 200:
                problems.append(f"{where}: status {answer and answer.status}")
                continue
            scroll, inner = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
            if scroll > inner:
                wide = page.evaluate(_WIDEST)
                problems.append(f"{where}: {scroll} px wide ({wide})")
            if has_math and page.locator(".katex").count() == 0:
                problems.append(f"{where}: no rendered math")
            if errors:
                problems.append(f"{where}: console {errors[:2]}")
            (SCREENSHOT_DIR / "layout").mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENSHOT_DIR / "layout" / f"{role}-{width}-{_slug(url)}.png"))
    if role == "reviewer":
        problems += _tablet_correction_screen(page, live_server, data)
    context.close()
    assert not problems, "\n".join(problems)


def _tablet_correction_screen(page, live_server, data):
    """The OCR correction screen on a tablet in landscape: the scan and the text side by side."""
    from ocr.models import Page

    page.set_viewport_size({"width": 1024, "height": 768})
    scan = Page.objects.filter(batch=data["batch"]).first()
    page.goto(f"{live_server.url}{reverse('ocr:page_correct', args=[scan.pk])}")
    page.wait_for_load_state("load")
    scroll, inner = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    image, text = page.locator(".ocr-image-panel").bounding_box(), page.locator(".ocr-text-panel").bounding_box()
    page.screenshot(path=str(SCREENSHOT_DIR / "layout" / "reviewer-1024-ocr-correction.png"))
    problems = [] if scroll <= inner else [f"correction screen at 1024 px: {scroll} px wide"]
    if not (text["x"] > image["x"] and text["y"] < 768 and image["y"] < 768):
        problems.append(f"correction screen at 1024 px: scan {image} and text {text} are not side by side")
    return problems


# The element that sticks out furthest, to say where an overflow comes from.
_WIDEST = """() => {
  let worst = null, right = window.innerWidth;
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    if (r.right > right + 0.5 && el.offsetParent !== null) { right = r.right; worst = el; }
  }
  if (!worst) return '';
  return worst.tagName.toLowerCase() + (worst.id ? '#' + worst.id : '') +
    (worst.className && typeof worst.className === 'string' ? '.' + worst.className.split(' ').join('.') : '') +
    ' right=' + Math.round(right);
}"""
