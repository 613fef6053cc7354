"""A case under review (grading.review.views.disagreement_review, /grading/review/disagreements/<pk>/): shown side by side, categories saved."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from grading.models import JudgeResult, MetaEvaluation

from .conftest import _grow

pytestmark = pytest.mark.django_db


def test_annotator_cannot_open_or_save_a_case(annotator_client, cases):
    url = reverse("grading:review_case", args=[cases["results"][0].pk])
    assert annotator_client.get(url).status_code == 403
    assert annotator_client.post(url, {"category": "A"}).status_code == 403
    assert not MetaEvaluation.objects.exists()


def test_review_screen_shows_everything_side_by_side(reviewer_client, cases):
    result = cases["results"][0]
    page = reviewer_client.get(reverse("grading:review_case", args=[result.pk]), {"setting": cases["config"].pk})
    html = page.content.decode()
    for anchor in ('id="problem"', 'id="reference"', 'id="student-answer"', 'id="gold-panel"', 'id="judge-panel"',
                   'id="shortcuts"', "Error severity &amp; follow-through", "Insight recognition"):
        assert anchor in html
    assert "The student reaches $f(a)=1/2$." in html and "(1) x = 2 ------5 points" in html
    assert page.context["delta"] == 3.0 and page.context["direction"] == "over"


def test_saving_a_category_and_going_to_the_next_open_case(reviewer_client, reviewer, cases):
    first, second = cases["results"][0], cases["results"][1]
    url = reverse("grading:review_case", args=[first.pk])
    response = reviewer_client.post(f"{url}?setting={cases['config'].pk}",
                                    {"category": "b", "analysis": "Gold deducts for the skipped step.", "version": "0",
                                     "then": "next"})
    assert response.status_code == 302 and f"/disagreements/{second.pk}/" in response["Location"]
    meta = MetaEvaluation.objects.get(result=first)
    assert (meta.category, meta.direction, meta.proposed_by, meta.confirmed_by) == ("B", "over", "person", reviewer)
    assert (meta.judge_score, meta.gold_score, meta.version) == (8.0, 5.0, 1)
    assert meta.history.count() == 1


def test_a_stale_save_is_refused_and_loses_nothing(reviewer_client, reviewer, cases):
    result = cases["results"][0]
    url = reverse("grading:review_case", args=[result.pk])
    reviewer_client.post(url, {"category": "A", "version": "0", "then": "stay"})
    response = reviewer_client.post(url, {"category": "C", "analysis": "my text", "version": "0"})
    assert response.status_code == 409
    html = response.content.decode()
    assert "meanwhile" in html and "my text" in html
    assert MetaEvaluation.objects.get(result=result).category == "A"


def test_bad_category_is_refused(reviewer_client, cases):
    url = reverse("grading:review_case", args=[cases["results"][0].pk])
    response = reviewer_client.post(url, {"category": "Z", "version": "0"})
    assert response.status_code == 200 and "Choose one of" in response.content.decode()
    assert not MetaEvaluation.objects.filter(category__gt="").exists()


def test_student_text_is_escaped(reviewer_client, cases):
    result = cases["results"][0]
    response = result.response
    response.transcript = "<script>alert(1)</script> $x$"
    response.save()
    html = reviewer_client.get(reverse("grading:review_case", args=[result.pk])).content.decode()
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_review_screen_query_count_is_flat(reviewer_client):
    small, large = _grow(5, "small"), _grow(300, "large")
    counts = []
    for setting in (small, large):
        result = JudgeResult.objects.filter(setting=setting).order_by("pk")[1]
        with CaptureQueriesContext(connection) as queries:
            assert reviewer_client.get(reverse("grading:review_case", args=[result.pk]), {"setting": setting.pk}).status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1], counts


def test_history_names_the_source_and_the_system_in_words(reviewer_client, reviewer, cases):
    """Issue 39: the history shows "Imported label" / "导入的标注", not the code "import", and a
    version written without a user is "system" / "系统" in the reader's language."""
    from accounts.services import set_user_language

    result = cases["results"][0]
    MetaEvaluation.objects.create(result=result, category="B", proposed_by=MetaEvaluation.Source.IMPORT, version=1,
                                  analysis="Gold deducts.")
    url = reverse("grading:review_case", args=[result.pk])
    html = reviewer_client.get(url).content.decode()
    history = html[html.index("<details><summary"):]
    assert "· system · B (Imported label, v1): Gold deducts." in history and "(import," not in history
    set_user_language(reviewer, "zh-hans")
    history = reviewer_client.get(url).content.decode()
    history = history[history.index("<details><summary"):]
    assert "· 系统 · B （导入的标注，v1）：Gold deducts." in history and "system" not in history


def test_a_step_shows_its_checkpoint_worth_and_what_reaching_it_earns(reviewer_client, reviewer, cases):
    """Issue 39: a step's checkpoint was shown as "checkpoint 10 pts", the cumulative figure as if
    it were the step's worth; it says both, as the labelling screen's captions do."""
    from accounts.services import set_user_language
    from annotation.models import Label, StepLabel
    from tests.factories import make_checkpoints

    result = cases["results"][0]
    second = make_checkpoints(cases["question"])[1]  # (2) x = -2 ------10 points: worth 5, 10 on reaching it
    StepLabel.objects.create(label=Label.objects.get(response=result.response), checkpoint=second, start=0, end=3,
                             verdict="correct")
    url = reverse("grading:review_case", args=[result.pk])
    html = reviewer_client.get(url).content.decode()
    assert "· checkpoint: 5 pts for this step, 10 pts on reaching it" in html and "checkpoint 10 pts" not in html
    set_user_language(reviewer, "zh-hans")
    html = reviewer_client.get(url).content.decode()
    assert "· 得分点：本步 5 分，做到此步共 10 分" in html and "得分点 10 分" not in html
