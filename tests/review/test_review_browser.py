"""A reviewer in a real browser: metrics plots, the disagreement queue, classifying cases by keyboard."""
import pytest
from django.core.management import call_command

from annotation.models import Response
from grading.models import JudgeSetting, MetaEvaluation
from tests.conftest import DEMO_DIR, login, screenshot
from tests.factories import make_results, make_stored_setting

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_reviewer_classifies_queued_cases_by_keyboard(page, live_server, sample_data, reviewer):
    call_command("import_judge_results", str(DEMO_DIR / "meta_eval_input_examples.json"))
    setting = JudgeSetting.objects.get(kind=JudgeSetting.Kind.EXTERNAL)
    login(page, live_server, reviewer.username)
    page.hover(".menu-group[data-group=review]")
    page.click("text=Judge vs human")
    page.wait_for_selector("#metrics-table")
    page.goto(f"{live_server.url}/grading/review/disagreements/?setting={setting.pk}")
    assert page.inner_text("#queue-total") == "2"
    assert page.locator("#queue-table tbody tr").count() == 2
    screenshot(page, "review_queue")

    page.click("#start-review")
    page.wait_for_selector("#classify-form[data-keys=ready]")
    page.wait_for_selector("#student-answer .katex")  # the student's math is rendered
    assert page.locator("#reference .checkpoint").count() == 4  # rubric checkpoints of 3-08
    assert "Overall Score" in page.inner_text("#judge-panel")
    assert page.inner_text("#delta") == "Δ +2"
    page.keyboard.press("c")
    assert page.locator("input[name=category][value=C]").is_checked()
    page.keyboard.press("b")
    assert page.locator("input[name=category][value=B]").is_checked()
    page.keyboard.press("/")
    page.keyboard.type("The judge credits part (3) although the student only states the result.")
    page.keyboard.press("Escape")
    screenshot(page, "review_case")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("text=Saved category B")
    assert page.inner_text("#delta") == "Δ +3"  # moved on to the next unclassified case
    page.wait_for_selector("#classify-form[data-keys=ready]")  # the new page's keys, not the last one's
    page.keyboard.press("a")
    assert page.locator("input[name=category][value=A]").is_checked()
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("text=Saved category A")

    labels = {m.result.response.student_id[:8]: (m.category, m.direction, m.confirmed_by_id)
              for m in MetaEvaluation.objects.select_related("result__response")}
    assert labels == {"19a84ba4": ("B", "over", reviewer.pk), "3ffe33a0": ("A", "over", reviewer.pk)}
    assert "only states the result" in MetaEvaluation.objects.get(category="B").analysis

    page.goto(f"{live_server.url}/grading/review/disagreements/?setting={setting.pk}")
    assert page.inner_text("#queue-confirmed") == "2 / 2"
    page.goto(f"{live_server.url}/grading/review/categories/")
    page.wait_for_selector("#category-cards")
    assert page.inner_text("#category-cards [data-code=A] .count") == "1"
    assert page.inner_text("#category-cards [data-code=B] .count") == "1"
    screenshot(page, "review_categories")


def test_metrics_page_draws_its_plots(page, live_server, sample_data, reviewer):
    responses = list(Response.objects.order_by("pk"))
    scores = [max(0.0, min(float(r.question.full_score), float(r.gold_score) + ((i * 7) % 5 - 2) * (1.5 if r.source == "human" else 0.5)))
              for i, r in enumerate(responses)]
    setting = make_stored_setting("demo judge")
    make_results(setting, responses, scores)
    login(page, live_server, reviewer.username)
    page.goto(f"{live_server.url}/grading/review/metrics/?setting={setting.pk}")
    page.wait_for_selector("#metrics-table")
    assert page.inner_text("#n-counted") == "64"
    drawn = page.evaluate(
        "() => ['plot-scatter', 'plot-fr', 'plot-delta'].map(id => !!Chart.getChart(document.getElementById(id)))"
    )
    assert drawn == [True, True, True]
    assert page.inner_text("#gap-ratio").endswith("×")
    screenshot(page, "review_metrics")
    with page.expect_download() as download:
        page.click("#csv-link")
    assert download.value.suggested_filename == f"metrics-{setting.pk}.csv"


def test_expert_marks_step_judge_verdicts_by_keyboard(page, live_server, reviewer):
    from annotation.models import Exam, Question, Response, content_hash
    from grading.models import StepJudgeValidation

    exam = Exam.objects.create(name="IneqMath sample")
    statement = "Let $a, b > 0$. Find the largest constant $C$ such that $a^2 + b^2 \\geq C ab$."
    question = Question.objects.create(exam=exam, statement=statement, statement_hash=content_hash(statement),
                                       kind="bound", gold_answer="$C = 2$")
    answer = "By AM-GM, $a^2 + b^2 \\geq 2ab$ with equality at $a = b$.\nThe answer is $C = 2$."
    response = Response.objects.create(question=question, source="synthetic", student_id="model-x_t_0.7_1",
                                       generator_model="model-x", transcript=answer, transcript_hash=content_hash(answer))
    kinds = [JudgeSetting.Kind.INEQ_FINAL_ANSWER, JudgeSetting.Kind.INEQ_TOY_CASE, JudgeSetting.Kind.INEQ_LOGICAL_GAP,
             JudgeSetting.Kind.INEQ_NUMERICAL_APPROXIMATION, JudgeSetting.Kind.INEQ_NUMERICAL_COMPUTATION]
    results = [make_results(make_stored_setting(f"ineq {kind}", kind=kind), [response], [verdict],
                            rationale="The derivation uses AM-GM; equality holds at $a=b$.")[0]
               for kind, verdict in zip(kinds, [1, 1, 0, 1, 1])]
    login(page, live_server, reviewer.username)
    page.goto(f"{live_server.url}/grading/review/validation/")
    with page.expect_navigation():  # waits for load: the shortcuts are a deferred script
        page.click(f"#validation-table a >> text=#{response.pk}")
    page.wait_for_selector("#validation-form")
    page.wait_for_selector("#problem .katex")
    page.keyboard.press("1")
    page.keyboard.press("r")  # final answer right, moves to the toy-case judge
    page.keyboard.press("r")
    page.keyboard.press("w")  # the logical-gap judge was wrong to fail it
    screenshot(page, "review_validation_case")
    page.keyboard.press("Control+s")
    page.wait_for_selector("text=Saved 3 verdict mark(s)")
    marks = dict(StepJudgeValidation.objects.values_list("result_id", "verdict_right"))
    assert marks == {results[0].pk: True, results[1].pk: True, results[2].pk: False}
    page.goto(f"{live_server.url}/grading/review/validation/report/")
    page.wait_for_selector("#accuracy-table")
    assert "model-x" in page.inner_text("#accuracy-table")
    screenshot(page, "review_validation_report")
