"""Chinese wording a teacher reads rightly (issue 39, docs/glossary-zh.md): each case read wrongly
before is checked on its page."""
import pytest
from django.urls import reverse

from accounts.services import set_user_language
from tests.factories import make_question, make_responses, make_setting

from .test_i18n_pages import punctuation_slips, visible_text

pytestmark = pytest.mark.django_db


@pytest.fixture
def chinese_reviewer(reviewer, reviewer_client):
    set_user_language(reviewer, "zh-hans")
    return reviewer_client


def test_home_counters_count_answers(chinese_reviewer):
    make_responses(make_question(), 3)
    page = chinese_reviewer.get(reverse("home")).content.decode()
    assert "份学生作答" in page and "份合成作答" in page  # not "3 学生": they are answers


def test_a_run_says_who_started_it_when_with_chinese_brackets_and_stops(chinese_reviewer, reviewer):
    from grading.models import JudgeRun

    run = JudgeRun.objects.create(setting=make_setting(kind="cas_final_answer"), created_by=reviewer)
    page = chinese_reviewer.get(reverse("grading:judge_run_detail", args=[run.pk])).content.decode()
    assert f"由 {reviewer.username} 于" in page and "开始。" in page and "创建者" not in page
    latency = page[page.index("延迟 p50 毫秒"):][:80]
    assert "（p95" in latency and "</span>）" in latency  # one kind of bracket, not （…)


def test_the_api_token_is_a_令牌(chinese_reviewer):
    page = chinese_reviewer.get(reverse("profile")).content.decode()
    assert "API 令牌" in page
    assert not [chunk for chunk in visible_text(page) if "token" in chunk.lower()]  # the header in <code> is code


def test_a_count_of_cases_is_合计_not_总分(chinese_reviewer):
    page = chinese_reviewer.get(reverse("grading:review_categories")).content.decode()
    assert "总分" not in page


def test_the_punctuation_check_finds_ascii_punctuation_after_chinese():
    assert punctuation_slips("<p>此地址没有内容。<a href='/'>返回首页</a>。</p><p>p = 0.5 (exact): <code>x.</code></p>") == []
    assert punctuation_slips("<p>此地址没有内容。<a href='/'>返回首页</a>.</p>")  # "." after a link's Chinese text
    assert punctuation_slips("<p>导出包含每个标注的 <code>active_seconds</code>.</p>")  # "." after code ending a sentence
    assert punctuation_slips("<p>按 <kbd>t</kbd> （或 <button>标记它</button>).</p>")  # （…) and ")" after Chinese
    assert punctuation_slips("<p><strong>取作预测答案的文字</strong> (结论句): <code>x</code></p>")
    assert "（ closed by ): …（然后 \u2063 判定，\u2063)…" in punctuation_slips("<p>（然后 <kbd>1</kbd> 判定，<kbd>Enter</kbd>)</p>")


def _scanned_answer(reviewer):
    """An answer with a scanned page (the labelling page then offers to flag the transcript)."""
    from ocr.models import Page, ScanBatch, ScanFile

    from .labelling.helpers import labelled_setup

    question, (response, *_) = labelled_setup(1)
    batch = ScanBatch.objects.create(name="b", exam=question.exam, engine="tesseract")
    source = ScanFile.objects.create(batch=batch, original_name="a.png", status="accepted")
    Page.objects.create(batch=batch, source_file=source, checksum="c" * 64, master="m.png", width=10, height=10,
                        response=response, page_number=1)
    return response


def test_chinese_sentences_end_and_brackets_close_in_chinese(chinese_reviewer, reviewer, settings):
    """Issue 39: "（或 标记它).", "取作预测答案的文字 (结论句):", "<a>导入数据集</a>." and the like,
    on the pages and states the walk (tests/test_i18n_pages.py) does not reach: empty lists, the
    labelling page of a scanned answer, the answer check's text taken from a whole solution, 404,
    the locked-out login and a judge setting with a newer version."""
    from django.template.loader import render_to_string
    from django.utils import translation

    from tests.factories import make_stored_setting

    settings.DEBUG = False
    pages = {}
    for name in ("home", "annotation:exam_list", "annotation:question_list", "annotation:label_queue",
                 "annotation:import", "grading:prompt_sets"):
        pages[name] = chinese_reviewer.get(reverse(name)).content.decode()  # before any data: the empty states
    assert "导入数据集</a>。" in pages["annotation:exam_list"] and "开始一次</a>。" in pages["home"]
    pages["404"] = chinese_reviewer.get("/no-such-page/").content.decode()
    assert "返回首页</a>。" in pages["404"]
    response = _scanned_answer(reviewer)
    pages["label"] = chinese_reviewer.get(reverse("annotation:label", args=[response.pk])).content.decode()
    assert "（或<button" in pages["label"] and "标记它</button>）。" in pages["label"]
    assert "<kbd>Enter</kbd>）" in pages["label"]
    pages["response"] = chinese_reviewer.get(reverse("annotation:response_detail", args=[response.pk])).content.decode()
    solution = "We had $y = 12$ on the way.\nFinal Answer: The final answer is $\\frac{3}{4}$. I hope it is correct."
    pages["answer check"] = chinese_reviewer.post(reverse("grading:equivalence"),
                                                  {"pred": solution, "gold": "0.75", "mode": "default"}).content.decode()
    assert "<strong>取作预测答案的文字</strong>（" in pages["answer check"] and "）：" in pages["answer check"]
    old = make_stored_setting("judge-a", version=1)
    make_stored_setting("judge-a", version=2)
    pages["setting"] = chinese_reviewer.get(reverse("grading:judge_setting_detail", args=[old.pk])).content.decode()
    with translation.override("zh-hans"):
        pages["locked out"] = render_to_string("registration/locked_out.html",
                                               {"username": "x", "failure_limit": 5, "cooloff_minutes": 30})
    assert "</code>）。" in pages["locked out"]
    slips = {name: punctuation_slips(html) for name, html in pages.items()}
    assert not any(slips.values()), slips


def test_a_judge_setting_says_who_created_it_when(chinese_reviewer, reviewer):
    from tests.factories import make_stored_setting

    setting = make_stored_setting("judge-a", created_by=reviewer)
    page = chinese_reviewer.get(reverse("grading:judge_setting_detail", args=[setting.pk])).content.decode()
    assert f"由 {reviewer.username} 于 {setting.created:%Y-%m-%d} " in page and "创建者" not in page
