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


def test_student_ids_with_non_ascii_digits_keep_the_class_pages_working(annotator, annotator_client):
    """Issue 40, item 5: "s1²" (a superscript digit, accepted from a release import or a scan's
    file name) made every class-grading page of its question answer 500 ("²".isdigit(), then
    int("²")). Only ASCII digits compare as numbers now (no int(): a run of any length is
    ordered); "²" and "٣" sort as text."""
    question, responses = labelled_setup(6)
    ids = ["s10", "s1²", "s2", "s٣", "S1", "s" + "9" * 190]
    for response, student in zip(responses, ids):
        response.student_id = student
        response.save(update_fields=["student_id"])
    assign(responses, annotator)
    start = annotator_client.get(reverse("annotation:label_question", args=[question.pk]))
    assert start.status_code == 302
    page = annotator_client.get(start["Location"])
    assert page.status_code == 200 and "student 1 of 6" in page.content.decode()
    order = [dict(zip([r.pk for r in responses], ids))[pk] for pk in selectors.class_ids(annotator, question.pk)]
    assert order == ["S1", "s1²", "s2", "s10", "s" + "9" * 190, "s٣"]
    for response in responses:
        step = annotator_client.get(reverse("annotation:label", args=[response.pk]) + f"?by_question={question.pk}")
        assert step.status_code == 200


def test_a_superscript_student_id_from_a_release_import_keeps_its_question_gradable(tmp_path, annotator,
                                                                                    annotator_client, reviewer_client):
    """The issue's path: "s1²" accepted by the release import, then the question's class pages."""
    import json

    from django.core.management import call_command

    from annotation.models import Response
    from tests.conftest import REALMATH_HUMAN

    records = json.loads(REALMATH_HUMAN.read_text())[:4]
    records[1]["student_id"] = "s1²"
    records[2]["student_id"] = "s١٢"  # Arabic-Indic digits
    path = tmp_path / "release.json"
    path.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    call_command("import_realmath", str(path), "--overlap", "keep")
    odd = Response.objects.get(student_id="s1²")
    question = odd.question
    assign(list(Response.objects.filter(question=question)), annotator)
    start = annotator_client.get(reverse("annotation:label_question", args=[question.pk]))
    assert start.status_code == 302
    assert annotator_client.get(start["Location"]).status_code == 200
    assert annotator_client.get(reverse("annotation:label", args=[odd.pk]) + f"?by_question={question.pk}").status_code == 200
