"""An annotator's labelling queue (annotation.labelling.views.label_queue, /label/): counts, states, flat query count."""
import pytest
from django.urls import reverse

from annotation.labelling import services

from ..factories import make_responses
from .conftest import assign, count_queries
from .helpers import full_label, labelled_setup

pytestmark = pytest.mark.django_db


def test_queue_page_and_its_query_count(annotator_client, annotator):
    question, first = labelled_setup(5)
    assign(first, annotator)
    services.save_label(response=first[0], user=annotator, data=full_label(), base_version=0, submit=True)
    url = reverse("annotation:label_queue")
    page = annotator_client.get(url)
    assert page.status_code == 200 and page.context["counts"] == {"total": 5, "done": 1, "todo": 4}
    assert [a.response_id for a in page.context["rows"]] == [r.pk for r in first[1:]]
    done = annotator_client.get(url, {"state": "done"}).context["rows"]
    assert [a.response_id for a in done] == [first[0].pk]
    assert annotator_client.get(url, {"state": "all"}).context["page"].paginator.count == 5
    small = count_queries(annotator_client, url)
    assign(make_responses(question, 1000, start=100), annotator)
    assert count_queries(annotator_client, url) == small
    assert count_queries(annotator_client, url + "?page=7") == small
    assert count_queries(annotator_client, url + "?state=all&page=20") == small
