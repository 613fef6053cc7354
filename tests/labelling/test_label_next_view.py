"""The next answer to label (annotation.labelling.views.label_next, /label/next/): POST hands one out and redirects to it."""
import pytest
from django.urls import reverse

from annotation.labelling import services

from .conftest import assign
from .helpers import full_label, labelled_setup

pytestmark = pytest.mark.django_db


def test_next_hands_out_and_redirects(annotator_client, annotator):
    _, (first, second) = labelled_setup(2)
    assign([first, second], annotator)
    answer = annotator_client.post(reverse("annotation:label_next"))
    assert answer.status_code == 302 and answer["Location"] == reverse("annotation:label", args=[first.pk])
    services.save_label(response=first, user=annotator, data=full_label(), base_version=0, submit=True)
    answer = annotator_client.post(reverse("annotation:label_next"))
    assert answer["Location"] == reverse("annotation:label", args=[second.pk])
    services.save_label(response=second, user=annotator, data=full_label(), base_version=0, submit=True)
    answer = annotator_client.post(reverse("annotation:label_next"), follow=True)
    assert "Nothing left" in answer.content.decode()
    assert annotator_client.get(reverse("annotation:label_next")).status_code == 405
