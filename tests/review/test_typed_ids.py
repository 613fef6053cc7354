"""Every id a page shows says what it is ("response #69", "result #12", "run #3") and the
disagreement queue links each to its page: a judge-result number is never confused with the
response of the same number."""
import re
from html import unescape

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.urls import reverse

from grading import demo
from grading.models import GenerationRun, JudgeResult, JudgeSetting

pytestmark = pytest.mark.django_db

KINDS = {"response", "result", "run", "question", "page", "record", "export", "batch", "label"}


@pytest.fixture(scope="module")
def demo_db(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        call_command("create_demo_users")
        call_command("load_demo")
    yield
    with django_db_blocker.unblock():
        call_command("flush", "--noinput")


def visible_text(html):
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    return unescape(re.sub(r"<[^>]+>", " ", html))


def untyped_numbers(html):
    """Each '#123' of the visible text whose word just before is not a kind ('response #69')."""
    text, found = visible_text(html), []
    for match in re.finditer(r"#\d+", text):
        word = re.search(r"([A-Za-z-]+)\s+$", text[max(0, match.start() - 40) : match.start()])
        if not word or word.group(1).lower() not in KINDS:
            found.append(text[max(0, match.start() - 20) : match.end()].strip())
    return found


def test_the_disagreement_queue_names_and_links_each_id(demo_db, client):
    client.force_login(get_user_model().objects.get(username="reviewer"))
    setting = JudgeSetting.objects.get(name=demo.RUBRIC_SETTING)
    page = client.get(reverse("grading:review_disagreements"), {"setting": setting.pk})
    assert page.status_code == 200, page
    html = page.content.decode()
    row = JudgeResult.objects.filter(setting=setting).order_by("pk").first()
    body = html.split('id="queue-table"', 1)[1].split("</table>", 1)[0]
    case = reverse("grading:review_case", args=[row.pk])
    assert re.search(rf'href="{case}\?[^"]*">result #{row.pk}</a>', body)
    assert f'href="{reverse("annotation:response_detail", args=[row.response_id])}">response #{row.response_id}</a>' in body
    question = row.response.question_id
    assert f'href="{reverse("annotation:question_detail", args=[question])}">question #{question}</a>' in body
    assert untyped_numbers(html) == []


@pytest.mark.parametrize("name, args", [
    ("grading:review_disagreements", None),
    ("grading:review_validation", None),
    ("grading:judge_run_list", None),
    ("grading:judges_home", None),
    ("grading:judge_generation_list", None),
    ("grading:judge_run_detail", "run"),
    ("grading:judge_generation_detail", "generation"),
    ("grading:judge_result_detail", "result"),
    ("grading:review_case", "result"),
    ("annotation:response_list", None),
    ("annotation:adjudication_queue", None),
    ("annotation:export", None),
    ("annotation:label_queue", None),
])
def test_no_page_shows_a_bare_number(demo_db, client, name, args):
    client.force_login(get_user_model().objects.get(username="reviewer"))
    setting = JudgeSetting.objects.get(name=demo.RUBRIC_SETTING)
    ids = {"run": setting.runs.get().pk, "generation": GenerationRun.objects.get().pk,
           "result": JudgeResult.objects.filter(setting=setting, meta_evaluation__isnull=False).first().pk}
    response = client.get(reverse(name, args=[ids[args]] if args else None))
    assert response.status_code == 200
    assert untyped_numbers(response.content.decode()) == []
