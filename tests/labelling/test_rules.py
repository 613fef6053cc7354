"""The rules of a label: rubric groups, proposals from checkpoint marks, validation."""
from decimal import Decimal

import pytest

from annotation.labelling.rules import LabelInvalid, clean_label, propose, rubric_groups
from annotation.models import Question

from .helpers import checkpoint_ids, rubric_question

pytestmark = pytest.mark.django_db
TRANSCRIPT = "(1) a=1 so b=2, c=3.\n(2) f'(x)=2x, minimum 0."


def test_groups_carry_points_relative_to_their_sub_question():
    question = rubric_question()
    groups = rubric_groups(question)
    assert [g.label for g in groups] == ["(1)", "(2)"]
    assert [c.points for c in groups[0].checkpoints] == [2, 3]
    # (2) starts after 3 cumulative points: 5 and 7 cumulative are 2 and 4 within (2).
    assert [c.points for c in groups[1].checkpoints] == [2, 4]
    assert [c.cumulative for c in groups[1].checkpoints] == [5, 7]


def test_markers_restarting_per_sub_question_are_taken_as_they_are():
    question = rubric_question()
    # 2, 3 | 1, 4: counted over the question they reach 4, per sub-question they add up to the full 7.
    question.checkpoints.filter(cumulative_points=5).update(cumulative_points=1)
    question.checkpoints.filter(cumulative_points=7).update(cumulative_points=4)
    groups = rubric_groups(Question.objects.get(pk=question.pk))
    assert [c.points for c in groups[1].checkpoints] == [1, 4]
    assert [(c.worth, c.out_of) for c in groups[1].checkpoints] == [(1, 4), (3, 4)]  # of the sub-question's 4


def test_a_dip_in_cumulative_markers_is_not_a_restart():
    """2, 3 | 1, 7 reach the full 7 counted over the question: the dip is a step worth nothing."""
    question = rubric_question()
    question.checkpoints.filter(cumulative_points=5).update(cumulative_points=1)
    groups = rubric_groups(Question.objects.get(pk=question.pk))
    assert [c.points for c in groups[1].checkpoints] == [0, 4]
    assert [c.worth for c in groups[1].checkpoints] == [0, 4]


def test_step_worth_and_what_reaching_it_gives():
    """Step 2 of (2): worth 2 (7 - 5), reaching it gives 7 of the full 7, not "7 points for this step"."""
    groups = rubric_groups(rubric_question())
    assert [(c.worth, c.reached, c.out_of) for g in groups for c in g.checkpoints] == [
        (2, 2, 7), (1, 3, 7), (2, 5, 7), (2, 7, 7)]


def test_highest_reached_checkpoint_proposes_its_cumulative_points():
    question = rubric_question()
    c1, c2, c3, c4 = (str(i) for i in checkpoint_ids(question))
    g1, g2 = rubric_groups(question)
    assert propose(g1, {}) is None
    assert (propose(g1, {c1: "reached", c2: "reached"}).low, propose(g1, {c1: "reached", c2: "reached"}).high) == (3, 3)
    proposal = propose(g2, {c3: "reached", c4: "partly"})
    assert (proposal.low, proposal.high, proposal.high_open) == (2, 4, True)
    assert proposal.admits(Decimal(2)) and proposal.admits(Decimal("3.5")) and not proposal.admits(Decimal(4))
    gap = propose(g2, {c3: "not_reached", c4: "reached"})  # later step right after a missed one
    assert (gap.low, gap.high) == (0, 4)


def test_valid_label_is_cleaned():
    question = rubric_question()
    c1, c2, *_ = checkpoint_ids(question)
    clean = clean_label(
        question, TRANSCRIPT,
        {
            "sub_scores": {"(1)": 3, "(2)": "2.5"}, "checkpoint_marks": {str(c1): "reached", str(c2): "reached"},
            "step_labels": [{"start": 4, "end": 7, "quote": "a=1", "verdict": "correct", "sub_question": "(1)"}],
        },
        submitting=True,
    )
    assert clean.total == Decimal("5.5")
    assert clean.sub_scores_json() == {"(1)": 3, "(2)": 2.5}
    assert clean.step_labels[0]["quote"] == "a=1"
    assert clean.overrides == []


@pytest.mark.parametrize(
    "data, field, message",
    [
        ({"sub_scores": {"(1)": 4, "(2)": 0}}, "sub_scores", "(1): at most 3 points"),
        ({"sub_scores": {"(1)": -1, "(2)": 0}}, "sub_scores", "cannot be negative"),
        ({"sub_scores": {"(1)": "lots", "(2)": 0}}, "sub_scores", "not a number"),
        ({"sub_scores": {"(1)": "1.234", "(2)": 0}}, "sub_scores", "at most 2 decimals"),
        ({"sub_scores": {"(1)": 1, "(2)": 0, "(9)": 1}}, "sub_scores", "Unknown sub-question(s): (9)"),
        ({"sub_scores": {"(1)": 1}}, "sub_scores", "(2): give the points before submitting"),
        ({"sub_scores": {"(1)": 1, "(2)": 1}, "total": 3}, "total", "not the sum"),
        ({"sub_scores": {"(1)": 1, "(2)": 1}, "checkpoint_marks": {"999999": "reached"}}, "checkpoint_marks", "not in this"),
        ({"sub_scores": {"(1)": 1, "(2)": 1}, "step_labels": [{"start": 5, "end": 500, "verdict": "correct"}]},
         "step_labels", "outside the transcript"),
        ({"sub_scores": {"(1)": 1, "(2)": 1}, "step_labels": [{"start": 0, "end": 3, "quote": "xyz", "verdict": "correct"}]},
         "step_labels", "no longer in the corrected transcript"),
        ({"sub_scores": {"(1)": 1, "(2)": 1}, "step_labels": [{"start": 0, "end": 3, "verdict": "great"}]},
         "step_labels", "verdict must be one of"),
        ("not an object", "label", "Expected an object"),
    ],
)
def test_invalid_labels_are_refused_with_a_clear_message(data, field, message):
    question = rubric_question()
    with pytest.raises(LabelInvalid) as exc:
        clean_label(question, TRANSCRIPT, data, submitting=True)
    assert any(message in m for m in exc.value.errors[field]), exc.value.errors


def test_saving_allows_blanks_but_not_out_of_range_points():
    question = rubric_question()
    assert clean_label(question, TRANSCRIPT, {"sub_scores": {"(1)": 2}}, submitting=False).total == 2
    assert clean_label(question, TRANSCRIPT, {}, submitting=False).total is None


def test_override_of_the_proposal_needs_a_reason_to_submit():
    question = rubric_question()
    c1, c2, c3, c4 = (str(i) for i in checkpoint_ids(question))
    marks = {c1: "reached", c2: "reached", c3: "reached", c4: "not_reached"}
    data = {"sub_scores": {"(1)": 3, "(2)": 4}, "checkpoint_marks": marks}  # (2) proposes 2, given 4
    with pytest.raises(LabelInvalid) as exc:
        clean_label(question, TRANSCRIPT, data, submitting=True)
    assert "(2)" in exc.value.errors["override_reason"][0]
    assert clean_label(question, TRANSCRIPT, data, submitting=False).overrides == ["(2)"]
    clean = clean_label(question, TRANSCRIPT, {**data, "override_reason": "Different valid method."}, submitting=True)
    assert clean.total == 7


def test_question_without_sub_questions_takes_the_total(db):
    question = rubric_question()
    question.sub_questions.all().delete()
    question = Question.objects.get(pk=question.pk)
    assert clean_label(question, TRANSCRIPT, {"total": 6}, submitting=True).total == 6
    with pytest.raises(LabelInvalid) as exc:
        clean_label(question, TRANSCRIPT, {"total": 8}, submitting=True)
    assert "between 0 and the full score 7" in exc.value.errors["total"][0]
