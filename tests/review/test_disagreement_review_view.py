"""Review pages: roles, what they show, saving a category, CSV, flat query counts."""
import csv
import io

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from grading.models import JudgeResult, MetaEvaluation
from tests.factories import (
    make_imported_gold,
    make_question,
    make_responses,
    make_results,
    make_stored_setting,
    set_gold,
)

pytestmark = pytest.mark.django_db

PAGES = [
    ("grading:review_metrics", []),
    ("grading:review_metrics_csv", []),
    ("grading:review_disagreements", []),
    ("grading:review_categories", []),
    ("grading:review_validation", []),
    ("grading:review_validation_report", []),
]


@pytest.fixture
def cases():
    """Gold 5 everywhere; judge 8, 3, 5, 6 (human) and 4 (synthetic): |Δ| ≥ 2 for 8 and 3."""
    question = make_question("Show that $x^2 \\geq 0$.", location="3-07")
    human = make_responses(question, 4, source="human")
    synthetic = make_responses(question, 1, source="synthetic", start=50)
    set_gold(human + synthetic, [5] * 5)
    make_imported_gold(human + synthetic, total=5)
    config = make_stored_setting("rubric-judge")
    results = make_results(config, human + synthetic, [8, 3, 5, 6, 4], rationale="The student reaches $f(a)=1/2$.")
    return {"config": config, "results": results, "question": question}


@pytest.mark.parametrize("name, args", PAGES)
def test_anonymous_is_sent_to_login(client, name, args):
    response = client.get(reverse(name, args=args))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


@pytest.mark.parametrize("name, args", PAGES)
def test_annotators_are_refused(annotator_client, cases, name, args):
    assert annotator_client.get(reverse(name, args=args)).status_code == 403


def test_annotator_cannot_open_or_save_a_case(annotator_client, cases):
    url = reverse("grading:review_case", args=[cases["results"][0].pk])
    assert annotator_client.get(url).status_code == 403
    assert annotator_client.post(url, {"category": "A"}).status_code == 403
    assert not MetaEvaluation.objects.exists()


@pytest.mark.parametrize("name, args", PAGES)
def test_reviewers_and_admins_may(reviewer_client, cases, name, args):
    assert reviewer_client.get(reverse(name, args=args)).status_code == 200


def test_admin_may(admin_client_, cases):
    assert admin_client_.get(reverse("grading:review_disagreements")).status_code == 200


def test_metrics_page_shows_figures_and_left_out(reviewer_client, cases):
    extra = make_responses(cases["question"], 2, source="human", start=90)
    make_results(cases["config"], extra[:1], [None], status=JudgeResult.Status.INVALID)
    make_results(cases["config"], extra[1:], [4])  # no gold
    page = reviewer_client.get(reverse("grading:review_metrics"), {"setting": cases["config"].pk})
    html = page.content.decode()
    assert page.context["report"]["n_counted"] == 5
    # deltas 3, -2, 0, 1, -1 -> MSE 15/5 = 3
    assert page.context["report"]["overall"]["mse"] == pytest.approx(3.0)
    assert "1</strong> judge output unreadable" in html and "1</strong> no gold score" in html
    assert 'id="plot-scatter"' in html and 'id="metrics-plots"' in html


def test_metrics_csv(reviewer_client, cases):
    response = reviewer_client.get(reverse("grading:review_metrics_csv"), {"setting": cases["config"].pk})
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    header, first = rows[0], rows[1]
    assert first[header.index("group")] == "all" and float(first[header.index("mse")]) == pytest.approx(3.0)
    assert float(first[header.index("fr_2")]) == pytest.approx(2 / 5)


def test_unknown_setting_is_404(reviewer_client, cases):
    assert reviewer_client.get(reverse("grading:review_metrics"), {"setting": "99999"}).status_code == 404
    assert reviewer_client.get(reverse("grading:review_disagreements"), {"run": "x"}).status_code == 404


def test_queue_lists_exactly_the_disagreements(reviewer_client, cases):
    url = reverse("grading:review_disagreements")
    page = reviewer_client.get(url, {"setting": cases["config"].pk})
    assert sorted(r.score for r in page.context["page"]) == [3.0, 8.0]
    page = reviewer_client.get(url, {"setting": cases["config"].pk, "threshold": "1"})
    assert sorted(r.score for r in page.context["page"]) == [3.0, 4.0, 6.0, 8.0]
    page = reviewer_client.get(url, {"setting": cases["config"].pk, "threshold": "-3"})
    assert page.context["threshold"] == 2 and len(page.context["page"]) == 2


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


def test_category_page_counts(reviewer_client, reviewer, cases):
    from grading.review import services as review_services

    review_services.confirm_meta_evaluation(cases["results"][0], user=reviewer, category="A")
    review_services.confirm_meta_evaluation(cases["results"][1], user=reviewer, category="C")
    page = reviewer_client.get(reverse("grading:review_categories"))
    summary = page.context["summary"]
    assert summary["counts"] == [1, 0, 1, 0, 0] and summary["total"] == 2
    assert [row["counts"] for row in summary["by_direction"]] == [[1, 0, 0, 0, 0], [0, 0, 1, 0, 0]]
    assert 'data-category-group="by_judge"' in page.content.decode()


def _grow(n, name):
    question = make_question(f"Growing {name}", location="G-01")
    responses = make_responses(question, n, source="human", start=10_000) + make_responses(
        question, n, source="synthetic", start=20_000
    )
    set_gold(responses, [i % 9 for i in range(2 * n)])
    config = make_stored_setting(name)
    make_results(config, responses, [(i * 5) % 9 for i in range(2 * n)])
    return config


@pytest.mark.parametrize("name", ["grading:review_metrics", "grading:review_disagreements"])
def test_page_query_count_is_flat(reviewer_client, name):
    small, large = _grow(5, "small"), _grow(300, "large")
    counts = []
    for config in (small, large):
        with CaptureQueriesContext(connection) as queries:
            assert reviewer_client.get(reverse(name), {"setting": config.pk}).status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1], counts


def test_review_screen_query_count_is_flat(reviewer_client):
    small, large = _grow(5, "small"), _grow(300, "large")
    counts = []
    for config in (small, large):
        result = JudgeResult.objects.filter(setting=config).order_by("pk")[1]
        with CaptureQueriesContext(connection) as queries:
            assert reviewer_client.get(reverse("grading:review_case", args=[result.pk]), {"setting": config.pk}).status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1], counts


def test_odd_input_never_fails(reviewer_client, cases):
    big = "9" * 30
    assert reviewer_client.get(reverse("grading:review_metrics"), {"setting": big}).status_code == 404
    assert reviewer_client.get(reverse("grading:review_disagreements"), {"question": big, "exam": "x"}).status_code == 200
    assert reviewer_client.get(reverse("grading:review_categories"), {"setting": big}).status_code == 200
    url = reverse("grading:review_case", args=[cases["results"][0].pk])
    response = reviewer_client.post(url, {"category": "A", "version": "abc"})
    assert response.status_code == 200 and "whole number" in response.content.decode()
    response = reviewer_client.post(reverse("grading:review_meta_eval_run_start"), {"endpoint": "abc", "setting": cases["config"].pk})
    assert response.status_code == 302


def test_propose_categories_without_a_model_says_why(reviewer_client, cases):
    """The button is never silent: no `required` attribute stops the form in the browser without a
    word; the server says what is missing, and the field keeps the last model used."""
    from grading.models import LlmEndpoint

    endpoint = LlmEndpoint.objects.create(name="local", base_url="http://127.0.0.1:9/v1", api_key_env="")
    page = reviewer_client.get(reverse("grading:review_disagreements"), {"setting": cases["config"].pk})
    form = page.content.decode().split('id="prelabel"', 1)[1]
    assert 'name="model"' in form and " required" not in form.split("</form>", 1)[0]
    response = reviewer_client.post(
        reverse("grading:review_meta_eval_run_start"),
        {"endpoint": endpoint.pk, "setting": cases["config"].pk, "threshold": "2", "model": ""}, follow=True,
    )
    assert "Name the model the meta-evaluator should use." in response.content.decode()
