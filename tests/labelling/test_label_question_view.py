"""Grading one question across the class (annotation.labelling.views.label_question, /label/question/<pk>/): the first student to grade, then ?by_question= steps."""
import pytest
from django.urls import reverse

from annotation.labelling import selectors, services

from ..factories import make_responses
from .conftest import assign, config_of
from .helpers import full_label, labelled_setup

pytestmark = pytest.mark.django_db


def test_annotator_steps_through_their_students_of_the_question(annotator, annotator_client):
    question, responses = labelled_setup(4)
    mine = responses[:3]
    assign(mine, annotator)
    other = labelled_setup(1, statement="Another question.")[0]
    assign(make_responses(other, 2, start=50), annotator)  # another question: never in this class
    start = annotator_client.get(reverse("annotation:label_question", args=[question.pk]))
    assert start.status_code == 302 and start["Location"] == reverse("annotation:label", args=[mine[0].pk]) + f"?by_question={question.pk}"
    page = annotator_client.get(start["Location"])
    html, config = page.content.decode(), config_of(page)
    assert "student 1 of 3" in html and 'id="prev-link"' not in html
    second = reverse("annotation:label", args=[mine[1].pk]) + f"?by_question={question.pk}"
    assert config["urls"]["next"] == second and f'href="{second}"' in html
    last = annotator_client.get(reverse("annotation:label", args=[mine[2].pk]) + f"?by_question={question.pk}")
    assert "student 3 of 3" in last.content.decode() and config_of(last)["urls"]["next"] is None
    # The unassigned fourth response is not in this annotator's class, and stays forbidden.
    assert responses[3].pk not in list(selectors.class_of_question(annotator, question.pk).values_list("pk", flat=True))
    assert annotator_client.get(reverse("annotation:label", args=[responses[3].pk]) + f"?by_question={question.pk}").status_code == 403


def test_grading_starts_at_the_first_student_not_yet_submitted(annotator, annotator_client):
    question, responses = labelled_setup(3)
    assign(responses, annotator)
    ordered = list(selectors.class_of_question(annotator, question.pk))
    services.save_label(response=ordered[0], user=annotator, data=full_label(), base_version=0, submit=True)
    start = annotator_client.get(reverse("annotation:label_question", args=[question.pk]))
    assert start["Location"].startswith(reverse("annotation:label", args=[ordered[1].pk]))


def test_nothing_assigned_on_that_question_goes_back_to_the_queue(annotator_client):
    question, _ = labelled_setup(2)
    answer = annotator_client.get(reverse("annotation:label_question", args=[question.pk]), follow=True)
    assert answer.redirect_chain[-1][0] == reverse("annotation:label_queue")
    assert "No response to question" in answer.content.decode()
    assert annotator_client.get(reverse("annotation:label_question", args=[999999])).status_code == 404
