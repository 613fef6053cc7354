"""Every page of the menu in Simplified Chinese in a real browser (issue 39), as the admin (who
sees every menu group) and as an annotator: no English interface word outside the short allowed
list of tests/test_i18n_pages.py (product names, metric abbreviations, units), what the scripts
write and what the app wrote into the database included: a class PDF's report, the packet-fix
history, a rubric re-judge's run note, codes such as probe names, kinds and attribution tags.
Wide tables scroll inside their card with a visible cue instead of losing their last columns.
Screenshots (test-artifacts/i18n-menu/) of every page, among them the class PDF's report and the
methods report.
"""
import re

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from accounts.services import set_user_language

from .conftest import SCREENSHOT_DIR
from .test_i18n_pages import Data, english_left, visible_text
from .test_layout_browser import PASSWORDS, _demo_with_cases

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = SCREENSHOT_DIR / "i18n-menu"

# Tables wider than their card: each must sit in a .table-wrap that scrolls and is marked (the cue).
WIDE_TABLES = """() => [...document.querySelectorAll('main table')].filter(t => t.offsetParent).map(t => {
  const wrap = t.closest('.table-wrap');
  const box = wrap || t.parentElement;
  const wide = t.getBoundingClientRect().width > box.clientWidth + 1;
  const style = wrap ? getComputedStyle(wrap) : null;
  const mask = style ? (style.webkitMaskImage || style.maskImage || 'none') : 'none';
  const last = t.querySelector('tr > :last-child');
  const sticky = !!last && getComputedStyle(last).position === 'sticky';  // the last column stays in view
  return {id: t.id || t.className, wide, wrapped: !!wrap, scrolls: !!wrap && wrap.classList.contains('scrolls'),
          overflow: style ? style.overflowX : '', cue: mask !== 'none' || sticky,
          atEnd: !!wrap && wrap.classList.contains('at-end')};
}).filter(t => t.wide)"""


def _app_written(data, users):
    """What the app writes for people: a class PDF's report and fixes, a rubric re-judge's note."""
    from annotation.models import Exam
    from grading.judges.services.lifecycle import REJUDGE_NOTE
    from grading.models import JudgeRun, JudgeSetting
    from ocr import packets
    from tests.ocr.class_scans import class_pdf, pdf_upload, roster, template

    exam = Exam.objects.get(name="RealMath-Eval sample")
    batch = packets.ingest_class_pdf(exam=exam, engine="tesseract", upload=pdf_upload(class_pdf(6)),
                                     roster=roster("s03", "s04"), template=template({"1": None, "2": "3-07", "3": "3-08"}),
                                     user=users["reviewer"], name="班级扫描")
    packets.reassign_packet(batch, student_id="s03", to_student_id="s04", user=users["reviewer"])
    first, fifth = (batch.pages.get(index_in_file=i) for i in (1, 4))
    packets.swap_pages(first, fifth, user=users["reviewer"])
    setting = JudgeSetting.objects.filter(kind="rubric").order_by("pk").first()
    run = JudgeRun.objects.create(setting=setting, note=REJUDGE_NOTE.format(question=19, versions="v1", version=2),
                                  created_by=users["reviewer"], status="done")
    return {"class_batch": batch, "rejudge_run": run}


def _walk(page, live_server, username, text, problems, extra=()):
    user = get_user_model().objects.get(username=username)
    set_user_language(user, "zh-hans")
    page.context.clear_cookies()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORDS[username])
    page.click("form.stack button[type=submit]")
    page.wait_for_url(lambda url: "/accounts/login/" not in url)
    links = page.evaluate("() => [...document.querySelectorAll('.menu-items a')].map(a => a.getAttribute('href'))")
    # The Django admin and the API's Swagger page are third-party interfaces.
    urls = [url for url in dict.fromkeys(links) if not url.startswith(("/admin/", "/api/docs"))]
    assert len(urls) >= (20 if username == "admin" else 4), urls
    for url in [*urls, *extra]:
        page.goto(f"{live_server.url}{url}")
        page.wait_for_load_state("load")
        page.evaluate("() => document.fonts.ready.then(() => true)")
        page.wait_for_timeout(150)  # the scripts' first round (progress, estimates) writes its text
        where = f"{username} {url}"
        html = page.evaluate("() => document.documentElement.outerHTML")
        left = english_left(visible_text(html), text)
        if left:
            problems.append(f"{where}: English {sorted(set(left))[:20]}")
        if 'lang="zh-Hans"' not in html:
            problems.append(f"{where}: not in Chinese")
        scroll, inner = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
        if scroll > inner:
            problems.append(f"{where}: {scroll} px wide in a {inner} px window")
        for table in page.evaluate(WIDE_TABLES):
            if not (table["wrapped"] and table["overflow"] in ("auto", "scroll") and table["scrolls"]
                    and (table["cue"] or table["atEnd"])):
                problems.append(f"{where}: table {table['id']} is cut or scrolls without a cue: {table}")
        SHOTS.mkdir(parents=True, exist_ok=True)
        slug = re.sub(r"[^a-z0-9]+", "-", url.lower()).strip("-") or "home"
        page.screenshot(path=str(SHOTS / f"{username}-{slug}.png"), full_page=True)
    return urls


def test_every_menu_page_in_chinese(browser, live_server, settings, tmp_path):
    settings.EXPORT_ROOT = tmp_path / "exports"
    data = _demo_with_cases()
    users = {u.username: u for u in get_user_model().objects.all()}
    data.update(_app_written(data, users))
    text = Data()
    problems = []
    context = browser.new_context(viewport={"width": 1024, "height": 800}, locale="zh-CN")
    page = context.new_page()
    page.set_default_timeout(20000)
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    batch = data["class_batch"]
    extra = [reverse("ocr:batch_detail", args=[batch.pk]), reverse("ocr:batch_packets", args=[batch.pk]),
             reverse("grading:judge_run_detail", args=[data["rejudge_run"].pk]),
             reverse("studies:probe_run", args=[data["probe_run"].pk])]
    _walk(page, live_server, "admin", text, problems, extra)

    # The app's sentences in Chinese (not their stored English).
    page.goto(f"{live_server.url}{reverse('ocr:batch_detail', args=[batch.pk])}")
    assert "已接收：2 份答卷，每份 3 页（共 6 页），已按名单和模板切分。" in page.inner_text("main")
    page.screenshot(path=str(SHOTS / "class-pdf-report.png"), full_page=True)
    page.goto(f"{live_server.url}{reverse('ocr:batch_packets', args=[batch.pk])}")
    assert "s03 的答卷（3 页）已改归 s04" in page.inner_text("main") or "s03 的答卷（3 页）已与 s04 的互换" in page.inner_text("main")
    page.goto(f"{live_server.url}{reverse('grading:judge_run_detail', args=[data['rejudge_run'].pk])}")
    assert "重新评判题目 #19：评分细则 v1 → v2" in page.inner_text("#run-note")
    page.goto(f"{live_server.url}{reverse('grading:methods_report')}")
    page.wait_for_selector("#report-formatted")
    page.screenshot(path=str(SHOTS / "methods-report.png"), full_page=True)

    _walk(page, live_server, "annotator1", text, problems)
    context.close()
    assert not errors, errors
    assert not problems, "\n".join(problems)
