"""The rubric edit page (annotation.views.question_rubric_edit, /questions/<pk>/rubric/): roles, a new version, bad input."""
import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Question

pytestmark = pytest.mark.django_db


def _form(question, **changes):
    data = {"reference_solution": question.reference_solution, "full_score": "10", "note": ""}
    data.update({f"max_{s.pk}": "5" for s in question.sub_questions.all()})
    data.update(changes)
    return data


def test_roles(question, annotator_client):
    url = reverse("annotation:question_rubric_edit", args=[question.pk])
    assert Client().get(url).status_code == 302
    assert annotator_client.get(url).status_code == 403
    assert annotator_client.post(url, _form(question, full_score="12")).status_code == 403
    assert Question.objects.get(pk=question.pk).rubric_version == 1
    page = annotator_client.get(reverse("annotation:question_detail", args=[question.pk]))
    assert page.status_code == 200 and b'id="rubric-versions"' not in page.content


def test_edit_makes_a_new_version_and_the_old_one_stays_readable(question, reviewer_client):
    url = reverse("annotation:question_rubric_edit", args=[question.pk])
    page = reviewer_client.get(url)
    assert page.status_code == 200 and b"x = -2 ------10 points" in page.content
    edited = "(1) x = 2 ------4 points\n(2) x = -2 <b>------10 points"
    response = reviewer_client.post(url, _form(question, reference_solution=edited, note="(1) is worth 4"))
    assert response.status_code == 302
    question.refresh_from_db()
    assert question.rubric_version == 2 and question.reference_solution == edited
    detail = reviewer_client.get(reverse("annotation:question_detail", args=[question.pk])).content.decode()
    assert 'id="rejudge-link"' in detail and "(1) is worth 4" in detail and "<b>------" not in detail
    assert detail.count('id="rubric-versions"') == 1
    title = detail.split("<title>", 1)[1].split("</title>", 1)[0]
    assert "Question R-01" in title and "<" not in title
    old = reviewer_client.get(reverse("annotation:question_rubric_version", args=[question.pk, 1]))
    assert old.status_code == 200 and b"x = 2 ------5 points" in old.content
    new = reviewer_client.get(reverse("annotation:question_rubric_version", args=[question.pk, 2])).content.decode()
    assert "&lt;b&gt;" in new and "<b>------" not in new  # escaped


def test_unchanged_form_keeps_the_version(question, reviewer_client):
    response = reviewer_client.post(reverse("annotation:question_rubric_edit", args=[question.pk]), _form(question),
                                    follow=True)
    assert b"Nothing changed" in response.content
    assert Question.objects.get(pk=question.pk).rubric_version == 1


@pytest.mark.parametrize("changes, message", [
    ({"reference_solution": "(1) x ------11 points"}, b"more than the full score"),
    ({"full_score": "0"}, b"full_score"),
    ({"full_score": "lots"}, b"full_score"),
])
def test_bad_input_is_shown_and_nothing_is_lost(question, reviewer_client, changes, message):
    response = reviewer_client.post(reverse("annotation:question_rubric_edit", args=[question.pk]),
                                    _form(question, **changes))
    assert response.status_code == 200 and b"errorlist" in response.content
    if "reference_solution" in changes:
        assert b"(1) x ------11 points" in response.content  # the typed text is kept
    assert Question.objects.get(pk=question.pk).rubric_version == 1
