"""Chinese wording a teacher reads rightly (issue 39, docs/glossary-zh.md): each case read wrongly
before is checked on its page."""
import pytest
from django.urls import reverse

from accounts.services import set_user_language
from tests.factories import make_question, make_responses, make_setting

from .test_i18n_pages import visible_text

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
