"""The adjudication queue (annotation.labelling.views.adjudication_queue, /adjudication/): disagreements by threshold, flat query count."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from .conftest import disagree

pytestmark = pytest.mark.django_db


def test_queue_lists_disagreements_by_threshold(reviewer_client, annotator, annotator2):
    _, (response,) = disagree(annotator, annotator2)
    page = reviewer_client.get(reverse("annotation:adjudication_queue"))
    assert [r.pk for r in page.context["page"]] == [response.pk]
    assert page.context["page"][0].spread == 5
    assert reviewer_client.get(reverse("annotation:adjudication_queue"), {"threshold": "6"}).context["page"].paginator.count == 0
    assert reviewer_client.get(reverse("annotation:adjudication_queue"), {"threshold": "junk"}).context["threshold"] == 2


def test_queue_query_count_is_flat(reviewer_client, annotator, annotator2):
    question, _ = disagree(annotator, annotator2, n=3)
    url = reverse("annotation:adjudication_queue")
    with CaptureQueriesContext(connection) as small:
        reviewer_client.get(url)
    disagree(annotator, annotator2, n=120, question=question)
    with CaptureQueriesContext(connection) as large:
        reviewer_client.get(url + "?page=2")
    assert len(small.captured_queries) == len(large.captured_queries)
