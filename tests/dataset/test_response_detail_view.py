"""An answer's page (annotation.views.response_detail, /responses/<pk>/): blind exams, escaping, flat query count."""
import pytest
from django.urls import reverse

from annotation.models import Label
from tests.factories import make_imported_gold, make_question, make_responses

from .conftest import count_queries

pytestmark = pytest.mark.django_db


def test_response_page_query_count_is_flat(reviewer_client):
    question = make_question()
    first = make_responses(question, 10, gold=3)
    make_imported_gold(first)
    small = count_queries(reviewer_client, reverse("annotation:response_detail", args=[first[0].pk]))
    more = make_responses(question, 990, start=10)
    make_imported_gold(more)
    large = count_queries(reviewer_client, reverse("annotation:response_detail", args=[more[-1].pk]))
    assert small == large


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
