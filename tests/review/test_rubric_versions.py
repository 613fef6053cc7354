"""Rubric versions: each edit raises the version by one and keeps the old rubric readable."""
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError

from annotation import selectors, services
from annotation.models import Label, Question, RubricCheckpoint, RubricVersion, StepLabel
from tests.factories import make_checkpoints, make_question, make_responses

pytestmark = pytest.mark.django_db

EDITED = "(1) x = 2 ------4 points\n(2) x = -2 ------10 points"


def rubric_question():
    question = make_question()
    make_checkpoints(question)
    return question


def test_a_new_question_is_version_1_without_snapshots():
    question = rubric_question()
    assert question.rubric_version == 1
    assert selectors.rubric_versions(question) == []


def test_each_edit_increments_and_snapshots_both_versions(reviewer):
    question = rubric_question()
    old_reference = question.reference_solution
    services.edit_rubric(question, reference_solution=EDITED, user=reviewer, note="(1) is worth 4")
    question.refresh_from_db()
    assert question.rubric_version == 2
    kept = {v.version: v for v in selectors.rubric_versions(question)}
    assert set(kept) == {1, 2}
    assert kept[1].reference_solution == old_reference and kept[1].created_by is None
    assert [Decimal(c["cumulative_points"]) for c in kept[1].checkpoints] == [5, 10]
    assert [Decimal(c["cumulative_points"]) for c in kept[2].checkpoints] == [4, 10]
    assert kept[2].created_by == reviewer and kept[2].note == "(1) is worth 4"
    assert [c["sub_question"] for c in kept[2].checkpoints] == ["(1)", "(2)"]

    services.edit_rubric(question, reference_solution=EDITED, full_score=12)
    question.refresh_from_db()
    assert question.rubric_version == 3 and question.full_score == 12
    assert [v.version for v in selectors.rubric_versions(question)] == [3, 2, 1]
    assert selectors.rubric_version(question, 2).full_score == 10  # the old version is unchanged


def test_an_edit_that_changes_nothing_keeps_the_version():
    question = rubric_question()
    same = services.edit_rubric(question, reference_solution=question.reference_solution, full_score="10")
    assert same.rubric_version == 1
    assert RubricVersion.objects.count() == 0


def test_sub_question_maxima_are_part_of_the_rubric():
    question = rubric_question()
    services.edit_rubric(question, reference_solution=question.reference_solution,
                         sub_question_max_points={"(1)": "6", "(2)": 4})
    question.refresh_from_db()
    assert question.rubric_version == 2
    assert {s.label: s.max_points for s in question.sub_questions.all()} == {"(1)": 6, "(2)": 4}
    old = {s["label"]: Decimal(s["max_points"]) for s in selectors.rubric_version(question, 1).sub_questions}
    assert old == {"(1)": 5, "(2)": 5}


def test_checkpoint_ids_survive_an_edit_so_labels_keep_their_marks():
    question = rubric_question()
    first = list(question.checkpoints.order_by("order").values_list("pk", flat=True))
    response = make_responses(question, 1)[0]
    label = Label.objects.create(response=response, sub_scores={"(1)": 5}, total=5, submitted=True,
                                      checkpoint_marks={str(first[0]): "reached"}, is_imported=True)
    step = StepLabel.objects.create(label=label, checkpoint_id=first[0], start=0, end=3)
    services.edit_rubric(question, reference_solution=EDITED + "\n(3) check ------12 points", full_score=12)
    after = list(question.checkpoints.order_by("order").values_list("pk", flat=True))
    assert after[:2] == first[:2] and len(after) == 3
    step.refresh_from_db()
    assert step.checkpoint_id == first[0]
    assert question.sub_questions.filter(label="(3)").exists()  # a new label in the markers is added
    services.edit_rubric(question, reference_solution="(1) x = 2 ------12 points", full_score=12)
    assert RubricCheckpoint.objects.filter(question=question).count() == 1
    assert question.sub_questions.count() == 3  # sub-questions are never removed


@pytest.mark.parametrize("fields, field", [
    ({"reference_solution": "(1) x ------11 points"}, "reference_solution"),
    ({"reference_solution": "x", "full_score": "0"}, "full_score"),
    ({"reference_solution": "x", "full_score": "ten"}, "full_score"),
    ({"reference_solution": "x", "sub_question_max_points": {"(1)": "-1"}}, "max_points (1)"),
    ({"reference_solution": "x", "sub_question_max_points": {"(9)": "1"}}, "sub_questions"),
])
def test_bad_input_names_the_field_and_writes_nothing(fields, field):
    question = rubric_question()
    with pytest.raises(ValidationError) as caught:
        services.edit_rubric(question, **fields)
    assert field in caught.value.message_dict
    question = Question.objects.get(pk=question.pk)
    assert question.rubric_version == 1 and "x = 2" in question.reference_solution
    assert RubricVersion.objects.count() == 0


def test_admin_shows_the_rubric_read_only(admin_client_):
    question = rubric_question()
    page = admin_client_.get(f"/admin/annotation/question/{question.pk}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'name="reference_solution"' not in html and 'name="full_score"' not in html
    assert 'name="checkpoints-0-cumulative_points"' not in html
