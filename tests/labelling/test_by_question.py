"""Grading one question across the class: the label page with ?by_question= steps through the
responses to that question by student, only over those assigned (reviewers: all), blind as ever."""
import pytest
from django.urls import reverse

from annotation.labelling import selectors, services
from annotation.models import Response

from ..factories import make_responses
from .helpers import full_label, labelled_setup
from .test_label_page import config_of

pytestmark = pytest.mark.django_db


def assign(responses, *users):
    services.assign_responses(
        responses=Response.objects.filter(pk__in=[r.pk for r in responses]), annotators=list(users),
        per_response=1, strategy="round_robin",
    )


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


def test_reviewer_grades_every_response_of_the_question(reviewer_client, reviewer):
    question, responses = labelled_setup(3)
    assert selectors.class_of_question(reviewer, question.pk).count() == 3
    page = reviewer_client.get(reverse("annotation:label", args=[responses[1].pk]) + f"?by_question={question.pk}")
    assert "student 2 of 3" in page.content.decode()


def test_nothing_assigned_on_that_question_goes_back_to_the_queue(annotator_client):
    question, _ = labelled_setup(2)
    answer = annotator_client.get(reverse("annotation:label_question", args=[question.pk]), follow=True)
    assert answer.redirect_chain[-1][0] == reverse("annotation:label_queue")
    assert "No response to question" in answer.content.decode()
    assert annotator_client.get(reverse("annotation:label_question", args=[999999])).status_code == 404


def test_a_by_question_for_another_question_is_ignored(annotator, annotator_client):
    question, responses = labelled_setup(2)
    assign(responses, annotator)
    page = annotator_client.get(reverse("annotation:label", args=[responses[0].pk]) + "?by_question=999")
    assert 'id="class-position"' not in page.content.decode() and config_of(page)["urls"]["next"] is None


def test_students_come_in_natural_order_and_previous_keeps_its_place(annotator, annotator_client):
    """Student 2 follows student 1, not student 10; the first student has a disabled Previous in
    the same place as the others' Previous."""
    question, responses = labelled_setup(3)
    for response, student in zip(responses, ["student 10", "student 2", "student 1"]):
        Response.objects.filter(pk=response.pk).update(student_id=student)
    assign(responses, annotator)
    ordered = selectors.class_ids(annotator, question.pk)
    assert ordered == [responses[2].pk, responses[1].pk, responses[0].pk]
    assert selectors.first_to_grade(annotator, question.pk) == responses[2].pk
    first = annotator_client.get(reverse("annotation:label", args=[responses[2].pk]) + f"?by_question={question.pk}")
    html = first.content.decode()
    assert "student 1 of 3" in html and 'id="prev-none" disabled' in html
    nav = html[html.index('id="label-nav"'):]
    assert nav.index('id="prev-none"') < nav.index('id="next-student"')
    second = annotator_client.get(reverse("annotation:label", args=[responses[1].pk]) + f"?by_question={question.pk}")
    nav = second.content.decode()[second.content.decode().index('id="label-nav"'):]
    assert nav.index('id="prev-link"') < nav.index('id="next-student"')
