"""A label's history (annotation.labelling.views.label_history, /label/<pk>/history/): versions and refused attempts, hidden in blind mode."""
import pytest
from django.urls import reverse

from annotation.labelling import services
from annotation.models import Label

from .conftest import assign
from .helpers import full_label, labelled_setup

pytestmark = pytest.mark.django_db


def test_history_page_shows_versions_and_refused_attempts(annotator_client, annotator, reviewer):
    _, (response, *_) = labelled_setup(1)
    assign([response], annotator)
    services.save_label(response=response, user=annotator, data=full_label(1, 1), base_version=0)
    label = Label.objects.get()
    services.save_label(response=response, user=reviewer, data=full_label(2, 2), base_version=1, label=label)
    with pytest.raises(services.LabelConflict):
        services.save_label(response=response, user=annotator, data=full_label(3, 3), base_version=1)
    html = annotator_client.get(reverse("annotation:label_history", args=[response.pk])).content.decode()
    assert "Refused: stale version" in html and "outcome-conflict" in html and "outcome-saved" in html
    assert "rev1" in html and "Version 2" in html and "sub_scores" in html


def test_history_of_someone_else_is_hidden_in_blind_mode(annotator_client, annotator2):
    _, (response, *_) = labelled_setup(1, blind=True)
    assign([response], annotator2)
    services.save_label(response=response, user=annotator2, data=full_label(), base_version=0)
    assert annotator_client.get(reverse("annotation:label_history", args=[response.pk])).status_code == 403
