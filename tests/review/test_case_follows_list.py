"""The disagreement case screen follows the list it was opened from: its filters and order give
the case number, previous and next, and they survive a save and the pre-label form."""
import pytest
from django.urls import reverse

from grading.models import LlmEndpoint, MetaEvalProposal, MetaEvaluation
from grading.review import selectors
from tests.factories import make_question, make_responses, make_results, make_stored_setting, set_gold

pytestmark = pytest.mark.django_db


@pytest.fixture
def queue():
    """Gold 5; judge 7, 0, 9, 3, 10 (|Δ| 2, 5, 4, 2, 5): by |Δ| the order is r1, r4, r2, r0, r3."""
    question = make_question("Show that $x^2 \\geq 0$.", location="3-07")
    responses = make_responses(question, 5)
    set_gold(responses, [5] * 5)
    setting = make_stored_setting("rubric-judge")
    results = make_results(setting, responses, [7, 0, 9, 3, 10])
    return setting, results


def ids(results, *indexes):
    return [results[i].pk for i in indexes]


def test_neighbours_follow_the_largest_delta_order(queue):
    setting, results = queue
    scope = selectors.Scope(setting=setting)
    q = selectors.disagreement_queue(scope, 2, {"order": "delta"})
    listed = [r.pk for r in selectors.queue_page_rows(q, order="delta")]
    assert listed == ids(results, 1, 4, 2, 0, 3)
    for position, pk in enumerate(listed, start=1):
        around = selectors.neighbours(q, pk, "delta")
        assert around["position"] == position
        assert around["previous"] == (listed[position - 2] if position > 1 else None)
        assert around["next"] == (listed[position] if position < len(listed) else None)
    assert selectors.neighbours(q, listed[0], "id")["position"] == 2  # by id, r1 is second


def test_case_screen_numbers_cases_as_the_list_shows_them(reviewer_client, queue):
    setting, results = queue
    first = results[1]
    page = reviewer_client.get(reverse("grading:review_case", args=[first.pk]),
                               {"setting": setting.pk, "order": "delta"})
    assert page.context["around"]["position"] == 1 and page.context["stats"]["total"] == 5
    assert page.context["around"]["next"] == results[4].pk
    assert "order=delta" in page.context["query"]


def test_save_and_next_walks_in_the_list_order_and_keeps_it(reviewer_client, queue):
    setting, results = queue
    walked = []
    pk = results[1].pk
    for _ in range(5):
        walked.append(pk)
        response = reviewer_client.post(
            f"{reverse('grading:review_case', args=[pk])}?setting={setting.pk}&order=delta&state=todo",
            {"category": "a", "version": "0", "then": "next"},
        )
        assert response.status_code == 302
        assert "order=delta" in response["Location"] and "state=todo" in response["Location"]
        pk = int(response["Location"].split("/disagreements/")[1].split("/")[0])
    assert walked == ids(results, 1, 4, 2, 0, 3)
    assert MetaEvaluation.objects.filter(category="A").count() == 5


def test_prelabel_form_sends_the_list_back_as_it_was(reviewer_client, queue):
    setting, _ = queue
    LlmEndpoint.objects.create(name="local", base_url="http://127.0.0.1:9/v1", api_key_env="REALMATH_LLM_KEY_TEST")
    page = reviewer_client.get(reverse("grading:review_disagreements"),
                               {"setting": setting.pk, "order": "delta", "state": "todo"})
    html = page.content.decode()
    assert '<input type="hidden" name="order" value="delta">' in html
    assert '<input type="hidden" name="state" value="todo">' in html
    response = reviewer_client.post(reverse("grading:review_meta_eval_run_start"),
                                    {"setting": setting.pk, "threshold": "2", "order": "delta", "state": "todo"})
    assert response.status_code == 302
    assert "order=delta" in response["Location"] and "state=todo" in response["Location"]


def test_category_column_shows_llm_proposals_and_the_reviewer_is_named(reviewer_client, reviewer, queue):
    setting, results = queue
    proposed = MetaEvaluation.objects.create(result=results[0])
    MetaEvalProposal.objects.create(meta_evaluation=proposed, status=MetaEvalProposal.Status.OK, category="D",
                                    model="scripted")
    MetaEvaluation.objects.create(result=results[1], category="B", confirmed_by=reviewer)
    html = reviewer_client.get(reverse("grading:review_disagreements"), {"setting": setting.pk}).content.decode()
    assert 'class="cat cat-D proposed"' in html and "LLM proposal</span>" in html
    assert f'<td class="small classified-by">{reviewer.username}' in html
    assert "A person" not in html
