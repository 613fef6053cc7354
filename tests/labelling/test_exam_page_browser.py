"""In a real browser: an admin opens an exam from the menu, starts the anchoring experiment with a
setting chosen from a list, the shown half of the annotators sees the pre-grade while labelling,
and the exam page shows the progress and the results (English and Chinese)."""
import re

import pytest

from accounts.services import set_user_language
from annotation.labelling import services
from annotation.labelling.experiment import anchor_shown
from annotation.models import Exam, Response
from grading.models import JudgeSetting

from ..conftest import login, make_user, screenshot
from ..factories import make_results
from .helpers import full_label, labelled_setup

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_anchoring_experiment_from_the_exam_page(page, browser, live_server, language):
    question, responses = labelled_setup(2)
    exam = question.exam
    judge = JudgeSetting.objects.create(name="anchor-judge", version=1, kind=JudgeSetting.Kind.EXTERNAL, model="m")
    make_results(judge, responses, [6, 2])
    admin = make_user("adm-browser", "admin")
    set_user_language(admin, language)
    people = [make_user(f"ann-{i}", "annotator") for i in range(4)]
    services.assign_responses(responses=Response.objects.filter(pk__in=[r.pk for r in responses]),
                              annotators=people, per_response=4, strategy="round_robin")

    # A seed that splits these four annotators on the first answer (ids differ from run to run).
    seed = next(n for n in range(1000) if len({anchor_shown(n, responses[0].pk, u.pk) for u in people}) == 2)

    login(page, live_server, admin.username)
    page.locator(".menu-group[data-group=data] .menu-title").click()
    page.locator(".menu-group[data-group=data] a[href='/exams/']").click()
    page.wait_for_url(re.compile(r"/exams/$"))
    page.locator(f"#exam-table a[href='/exams/{exam.pk}/']").click()
    page.wait_for_selector("#exam-questions")
    assert page.locator("#exam-questions [data-count=judged]").inner_text() == "2"
    options = page.locator("#anchoring-form select[name=setting] option").all_inner_texts()
    assert len(options) == 1 and options[0].startswith("anchor-judge")
    page.locator("#anchoring-form input[name=seed]").fill(str(seed))
    with page.expect_navigation():
        page.locator("#anchoring-form button[type=submit]").click()
    state = page.inner_text("#anchoring-state")
    assert "anchor-judge" in state and str(seed) in state
    exam.refresh_from_db()
    assert exam.anchoring and exam.anchoring_seed == seed

    # The shown half sees the pre-grade on the labelling screen, the hidden half does not.
    response = responses[0]
    shown = [u for u in people if anchor_shown(seed, response.pk, u.pk)]
    hidden = [u for u in people if not anchor_shown(seed, response.pk, u.pk)]
    for user, sees in ((shown[0], True), (hidden[0], False)):
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        other = context.new_page()
        login(other, live_server, user.username)
        other.goto(f"{live_server.url}/label/{response.pk}/")
        other.wait_for_selector("#label-form")
        assert (other.locator("#anchor-score").count() == 1) == sees
        context.close()

    for r in responses:
        for i, user in enumerate(people):
            services.save_label(response=r, user=user, data=full_label(3, i % 4), base_version=0, submit=True)
    page.reload()
    page.wait_for_selector("#anchoring-table")
    assert page.locator("#anchoring-table tbody tr").count() == 4
    cells = page.locator("#anchoring-progress tr[data-row=labels] td.num").all_inner_texts()
    assert sum(int(c) for c in cells) == 8
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
    if language == "zh-hans":
        assert page.inner_text("#anchoring h2") == "锚定实验"
        assert "运行中" in page.inner_text("#anchoring-state")
    screenshot(page, f"exam-anchoring-{language}")
    page.set_viewport_size({"width": 800, "height": 900})
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
    screenshot(page, f"exam-anchoring-800-{language}")
    with page.expect_navigation():
        page.locator("#anchoring-stop button").click()
    assert not Exam.objects.get(pk=exam.pk).anchoring
