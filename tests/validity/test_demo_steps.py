"""The demo's step-report judge and the demo experts' made-up checkpoint marks and step labels
(issue 37): stored as the labelling screen stores them, on the steps the judge numbers, named as
made up, and added once."""
import pytest
from django.core.management import call_command

from annotation.labelling.rules import propose, rubric_groups
from annotation.models import Label, StepLabel
from annotation.steps import split_steps
from grading import demo
from grading.models import JudgeSetting
from validity import demo as validity_demo
from validity.report import Parameters, for_selection
from validity.selectors import Selection

pytestmark = pytest.mark.django_db


@pytest.fixture
def loaded(db):
    call_command("create_demo_users", verbosity=0)
    call_command("load_demo", verbosity=0)


def test_demo_experts_marks_and_steps_follow_their_points_on_the_judges_steps(loaded):
    labels = Label.objects.filter(annotator__username__in=validity_demo.DEMO_EXPERTS).select_related(
        "response__question").prefetch_related("step_labels", "response__question__checkpoints",
                                              "response__question__sub_questions")
    assert labels.count() == 144
    for label in labels:
        question, response = label.response.question, label.response
        assert set(label.checkpoint_marks) == {str(c.pk) for c in question.checkpoints.all()}
        assert set(label.checkpoint_marks.values()) <= set(Label.Mark.values)
        for group in rubric_groups(question):  # the marks propose the points the expert gave
            proposal = propose(group, label.checkpoint_marks)
            assert proposal is not None
        assert label.transcript_hash == response.transcript_hash
        steps = {(s.start, s.end) for s in split_steps(response.transcript)}
        given = list(label.step_labels.all())
        assert given and all((s.start, s.end) in steps for s in given)
        assert all(s.quote == response.transcript[s.start:s.end] and "made up" in s.comment for s in given)
        wrong = [s for s in given if s.verdict != StepLabel.Verdict.CORRECT]
        assert len(wrong) == (0 if label.total >= question.full_score else 1)


def test_the_step_report_judge_is_checked_against_them_and_a_second_load_adds_nothing(loaded):
    setting = JudgeSetting.objects.get(name=demo.STEP_REPORT_SETTING)
    assert setting.step_report and "made-up" in setting.name and setting.runs.get().status == "done"
    report, _ = for_selection(Selection(setting), Parameters())
    steps, checkpoints = report["step_report"]["first_wrong_step"], report["step_report"]["checkpoints"]
    assert report["step_report"]["answers"] == 64 and steps["erroneous"] + steps["correct"] == 48
    assert steps["left_out"] == {"unreadable": 0, "steps_changed": 0}
    assert len(checkpoints["table"]) == 20 and checkpoints["with_kappa"] == 8
    before = (StepLabel.objects.count(), sorted(Label.objects.values_list("pk", "checkpoint_marks")))
    call_command("load_demo", verbosity=0)
    assert (StepLabel.objects.count(), sorted(Label.objects.values_list("pk", "checkpoint_marks"))) == before
