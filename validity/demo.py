"""The demo's part for the Validity view: three demo experts' labels on the sample's answers, so the
Alternative Annotator Test can run on the demo, with checkpoint marks and step labels on them, so
the step-report judge's first wrong step and checkpoints can be checked against them. Made-up
labels (the gold plus a small seeded disagreement; marks and steps that follow each expert's own
points, with a seeded slip), by inactive users named for what they are; idempotent."""
import random
from decimal import Decimal

from django.contrib.auth import get_user_model

from accounts.services import create_user_with_role
from annotation.demo import REALMATH_EXAM
from annotation.models import Exam, Label, Response, RubricCheckpoint, StepLabel
from annotation.quote_anchors import quote_selector
from annotation.steps import split_steps

DEMO_EXPERTS = ("demo-expert-1", "demo-expert-2", "demo-expert-3")
DISAGREEMENT = (-1, -0.5, 0, 0, 0, 0.5, 1)


def load_demo():
    """validity's part of `manage.py load_demo` (`demo_section` on its AppConfig, read by
    annotation.demo): the demo experts' labels on the RealMath sample; the lines to print."""
    exam = Exam.objects.filter(name=REALMATH_EXAM).first()
    lines = [load_demo_experts(exam), load_demo_steps()] if exam is not None else []
    return [line for line in lines if line]


def load_demo_experts(exam):
    """Label the answers of `exam` that have a gold and are not the demo annotators' work by three
    demo experts (48 of the sample's 64: just under the 50 the test's authors recommend, so the page
    shows its note and its button to ask for more); return a line saying so."""
    users = []
    for name in DEMO_EXPERTS:
        user = get_user_model().objects.filter(username=name).first()
        if user is None:
            user = create_user_with_role(name, None, "annotator")
            user.set_unusable_password()
        user.is_active = False  # they never log in and are never given work; their labels stay
        user.save(update_fields=["password", "is_active"])
        users.append(user)
    if Label.objects.filter(annotator__in=users).exists():
        return ""
    rng = random.Random(20261204)
    labels = []
    responses = (Response.objects.filter(question__exam=exam, gold_score__isnull=False, assignments__isnull=True)
                 .select_related("question"))
    for response in responses.order_by("pk"):
        full = response.question.full_score
        for user in users:
            points = min(full, max(Decimal(0), response.gold_score + Decimal(str(rng.choice(DISAGREEMENT)))))
            labels.append(Label(response=response, annotator=user, total=points, sub_scores={}, submitted=True,
                                comment="demo expert label (made up: the gold plus a small seeded disagreement)"))
    Label.objects.bulk_create(labels)
    return f"Demo experts: {len(users)} made-up expert labels on each of {len(labels) // len(users)} answers " \
           "(for the Validity view's Alternative Annotator Test)."


STEP_COMMENT = "demo expert step label (made up: placed from the expert's own points, with a seeded slip)"
WRONG_VERDICTS = (StepLabel.Verdict.CALCULATION, StepLabel.Verdict.LOGICAL_GAP, StepLabel.Verdict.MISSING_STEP,
                  StepLabel.Verdict.UNJUSTIFIED)


def load_demo_steps():
    """Give the demo experts' labels made-up checkpoint marks and step labels, as the labelling
    screen stores them (marks {checkpoint id: reached | partly | not_reached}; step labels on spans
    of the transcript with their quote), for the Validity view's check of a rubric judge's step
    report. Marks follow the expert's own total on the cumulative checkpoints (reached up to it,
    partly the one it falls inside), so they propose the points the expert gave. Step labels are
    on the steps of the one step splitter (annotation.steps), the steps the judge numbers: the
    first wrong step as far into the answer as the expert's points fall short of full marks (one
    step earlier or later now and then: a seeded slip), a correct step before it; at full marks
    the last step, correct. Labels that have step labels already are left alone; return a line."""
    labels = list(Label.objects.filter(annotator__username__in=DEMO_EXPERTS, step_labels__isnull=True)
                  .select_related("response__question", "annotator").order_by("pk"))
    if not labels:
        return ""
    checkpoints = {}
    for checkpoint in RubricCheckpoint.objects.filter(
            question_id__in={label.response.question_id for label in labels}).order_by("question_id", "order", "id"):
        checkpoints.setdefault(checkpoint.question_id, []).append(checkpoint)
    steps_of, step_labels, marked = {}, [], []
    for label in labels:
        response = label.response
        rng = random.Random(f"demo-steps:{response.pk}:{label.annotator.username}")
        label.checkpoint_marks = _marks(checkpoints.get(response.question_id, ()), label.total)
        label.transcript_hash = response.transcript_hash
        marked.append(label)
        if response.pk not in steps_of:
            steps_of[response.pk] = split_steps(response.transcript or "")
        step_labels += _step_labels(label, response, steps_of[response.pk], rng)
    Label.objects.bulk_update(marked, ["checkpoint_marks", "transcript_hash"])
    StepLabel.objects.bulk_create(step_labels)
    return (f"Demo experts: made-up checkpoint marks and {len(step_labels)} step labels on their {len(marked)} labels "
            "(for the Validity view's check of the step-report judge).")


def _marks(checkpoints, total):
    """Reached up to the expert's total, partly the checkpoint it falls inside, the rest not reached."""
    marks, before = {}, Decimal(0)
    for checkpoint in checkpoints:
        points = checkpoint.cumulative_points
        if points <= total:
            marks[str(checkpoint.pk)] = Label.Mark.REACHED.value
        elif total > before:
            marks[str(checkpoint.pk)] = Label.Mark.PARTLY.value
        else:
            marks[str(checkpoint.pk)] = Label.Mark.NOT_REACHED.value
        before = max(before, points)
    return marks


def _step_labels(label, response, steps, rng):
    if not steps:
        return []
    full, transcript = response.question.full_score, response.transcript

    def step_label(index, verdict):
        step = steps[index]
        return StepLabel(label=label, start=step.start, end=step.end, verdict=verdict, comment=STEP_COMMENT,
                         **quote_selector(transcript, step.start, step.end))

    if label.total >= full:
        return [step_label(len(steps) - 1, StepLabel.Verdict.CORRECT)]
    first = min(len(steps) - 1, int(len(steps) * label.total / full))
    slip = rng.choice((-1, 0, 0, 0, 0, 1))
    first = max(0, min(len(steps) - 1, first + slip))
    made = [step_label(first, rng.choice(WRONG_VERDICTS))]
    if first > 0:
        made.insert(0, step_label(rng.randrange(first), StepLabel.Verdict.CORRECT))
    return made
