"""Issue 34: a reviewer reads the methods report with every study in it (style ablation, OCR
attribution, anchoring, rubric re-judging, error geometry with the run chosen), a prompt-set replay
named as such and an answer check's accuracy, in English and then in Chinese."""
import pytest

from accounts.services import set_user_language
from annotation.labelling.experiment import anchor_shown
from annotation.models import Label, Question, content_hash
from grading.models import JudgeSetting, PromptSet
from studies import style
from studies.models import DerivedAnswer, ProbeItem, ProbeRun
from tests.conftest import login, make_user, screenshot
from tests.factories import make_question, make_responses, make_results, make_stored_setting, set_gold
from tests.studies.helpers import lexical_geometry_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _studies():
    questions = [make_question(f"Browser problem {q}.", exam_name="Browser exam", location=f"B-{q}",
                               gold_answer="x = 2") for q in range(5)]
    answers = []
    for q, question in enumerate(questions):
        answers += make_responses(question, 4, source="human" if q % 2 else "synthetic", start=100 * q)
    set_gold(answers, [i % 5 + 2 for i in range(len(answers))])
    rts = make_stored_setting("browser-rts", kind="rubric", model="m")
    make_results(rts, answers, [i % 4 + 2 for i in range(len(answers))], rubric_version=1)
    make_results(rts, answers[:4], [3, 3, 4, 4], rubric_version=2, key_prefix="edited")
    Question.objects.filter(pk=questions[0].pk).update(rubric_version=2)
    vf = PromptSet.objects.create(name="vf", file_name="VF_realmath_eval.json")
    make_results(make_stored_setting("browser-replay-vf", kind="replay", prompt_set=vf, model="m"), answers,
                 [i % 5 + 1 for i in range(len(answers))])
    make_results(make_stored_setting("browser-cas", kind=JudgeSetting.Kind.CAS_FINAL_ANSWER), answers,
                 [i % 3 != 0 for i in range(len(answers))])
    run = ProbeRun.objects.create(setting=rts, probes=[style.PROBE], status="done")
    for i, answer in enumerate(answers):
        derived = DerivedAnswer.objects.create(response=answer, probe=style.PROBE, text="x", change={},
                                               source_hash=content_hash(answer.transcript))
        ProbeItem.objects.create(run=run, derived=derived, probe=style.PROBE, state="ok", original_score=3,
                                 derived_score=3 + i % 3)
    experts = [make_user(f"browser-expert-{i}", "annotator") for i in range(2)]
    for answer in answers:
        for expert in experts:
            shown = anchor_shown(3, answer.pk, expert.pk)
            Label.objects.create(response=answer, annotator=expert, total=4 if shown else 2 + answer.pk % 3,
                                 submitted=True, anchoring={"shown": shown, "score": 4, "setting": "browser-rts", "seed": 3})
    return lexical_geometry_run("older"), lexical_geometry_run("newer")


def test_the_report_with_every_study_in_english_and_chinese(page, live_server, reviewer):
    older, newer = _studies()
    login(page, live_server, reviewer.username)
    page.goto(f"{live_server.url}/grading/report/")
    page.wait_for_selector("#report-formatted")
    text = page.inner_text("#report-formatted")
    for heading in ("Final answers against the gold answer", "Style ablation", "OCR-vs-judge attribution",
                    "Anchoring experiment", "Rubric re-judging", "Error geometry and step surprisal"):
        assert page.locator("#report-formatted h3", has_text=heading).count() == 1, heading
    assert "prompt set vf (VF_realmath_eval.json)" in text and "OCR attribution: not run." in text
    assert f"Error geometry: run {newer.pk}, the newest analysed run." in text
    with page.expect_navigation():  # data-autosubmit
        page.select_option("select[name=geometry]", str(older.pk))
    page.wait_for_selector("#report-formatted")
    assert f"Error geometry: run {older.pk}, chosen for this report." in page.inner_text("#report-formatted")
    assert f"geometry={older.pk}" in page.get_attribute("#download-json", "href")
    screenshot(page, "methods_report_studies")

    set_user_language(reviewer, "zh-hans")
    page.goto(f"{live_server.url}/grading/report/?geometry={older.pk}")
    page.wait_for_selector("#report-formatted")
    chinese = page.inner_text("#report-formatted")
    for heading in ("最终答案与标准答案对比", "风格消融", "OCR 与评判归因", "锚定实验", "评分细则重新评判"):
        assert heading in chinese, heading
    assert "OCR 归因：未运行。" in chinese and f"错误几何：运行 {older.pk}，为本报告选定。" in chinese
    assert "not run" not in chinese and "Style ablation" not in chinese
    assert "错误几何运行" in page.inner_text("#report-filters")
    screenshot(page, "methods_report_studies_zh")
