import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import Label, Response
from tests.factories import make_imported_gold, make_question, make_responses

pytestmark = pytest.mark.django_db


def count_queries(client, url):
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url)
    assert response.status_code == 200
    return len(ctx.captured_queries)


def test_response_list_query_count_is_flat(reviewer_client):
    question = make_question()
    make_responses(question, 10, gold=3)
    small = count_queries(reviewer_client, reverse("annotation:response_list"))
    make_responses(question, 990, gold=4, start=10, source="synthetic")
    large = count_queries(reviewer_client, reverse("annotation:response_list"))
    filtered = count_queries(reviewer_client, reverse("annotation:response_list") + "?source=synthetic&page=3")
    assert small == large == filtered


def test_response_page_query_count_is_flat(reviewer_client):
    question = make_question()
    first = make_responses(question, 10, gold=3)
    make_imported_gold(first)
    small = count_queries(reviewer_client, reverse("annotation:response_detail", args=[first[0].pk]))
    more = make_responses(question, 990, start=10)
    make_imported_gold(more)
    large = count_queries(reviewer_client, reverse("annotation:response_detail", args=[more[-1].pk]))
    assert small == large


def test_response_list_filters(reviewer_client, sample_data):
    url = reverse("annotation:response_list")
    assert reviewer_client.get(url).context["page"].paginator.count == 64
    assert reviewer_client.get(url + "?source=human").context["page"].paginator.count == 32
    assert reviewer_client.get(url + "?level=high").context["page"].paginator.count == 32
    high_scores = reviewer_client.get(url + "?score_min=8").context["page"].paginator.count
    assert high_scores == Response.objects.filter(gold_score__gte=8).count() > 0
    assert reviewer_client.get(url + "?score_min=abc").status_code == 200  # bad filter input is ignored


def test_response_list_paginates(reviewer_client):
    question = make_question()
    make_responses(question, 120)
    page = reviewer_client.get(reverse("annotation:response_list") + "?page=3")
    assert len(page.context["page"].object_list) == 20
    assert reviewer_client.get(reverse("annotation:response_list") + "?page=999").status_code == 200


def test_blind_annotator_sees_no_gold_or_labels(annotator_client, annotator):
    question = make_question(blind=True)
    response = make_responses(question, 1, gold=7)[0]
    make_imported_gold([response], total=7)
    page = annotator_client.get(reverse("annotation:response_detail", args=[response.pk])).content.decode()
    assert 'id="blind-note"' in page and 'id="labels"' not in page
    listing = annotator_client.get(reverse("annotation:response_list")).content.decode()
    assert "<th>Gold</th>" not in listing
    Label.objects.create(response=response, annotator=annotator, total=5, submitted=True)
    page = annotator_client.get(reverse("annotation:response_detail", args=[response.pk])).content.decode()
    assert 'id="labels"' in page


def test_non_blind_exam_shows_labels(annotator_client):
    question = make_question(blind=False, exam_name="Open exam")
    response = make_responses(question, 1, gold=7)[0]
    page = annotator_client.get(reverse("annotation:response_detail", args=[response.pk])).content.decode()
    assert 'id="labels"' in page


def test_student_text_is_escaped(reviewer_client):
    question = make_question()
    response = make_responses(question, 1)[0]
    response.transcript = '<img src=x onerror="alert(1)"> $x$'
    response.save()
    page = reviewer_client.get(reverse("annotation:response_detail", args=[response.pk])).content.decode()
    assert "<img src=x" not in page and "&lt;img src=x" in page


def test_response_list_with_an_id_no_column_can_hold_lists_nothing(reviewer_client):
    question = make_question()
    make_responses(question, 3)
    url = reverse("annotation:response_list")
    assert reviewer_client.get(url, {"question": question.pk}).context["page"].paginator.count == 3
    assert reviewer_client.get(url, {"question": "9" * 30}).context["page"].paginator.count == 0
    assert reviewer_client.get(url, {"question": "abc"}).context["page"].paginator.count == 3
