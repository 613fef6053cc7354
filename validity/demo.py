"""The demo's part for the Validity view: three demo experts' labels on the sample's answers, so the
Alternative Annotator Test can run on the demo. Made-up labels (the gold plus a small seeded
disagreement), by inactive users named for what they are; idempotent."""
import random
from decimal import Decimal

from django.contrib.auth import get_user_model

from accounts.services import create_user_with_role
from annotation.demo import REALMATH_EXAM
from annotation.models import Exam, Label, Response

DEMO_EXPERTS = ("demo-expert-1", "demo-expert-2", "demo-expert-3")
DISAGREEMENT = (-1, -0.5, 0, 0, 0, 0.5, 1)


def load_demo():
    """validity's part of `manage.py load_demo` (`demo_section` on its AppConfig, read by
    annotation.demo): the demo experts' labels on the RealMath sample; the lines to print."""
    exam = Exam.objects.filter(name=REALMATH_EXAM).first()
    line = load_demo_experts(exam) if exam is not None else ""
    return [line] if line else []


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
