"""Scripted data of known behaviour for the Validity view: questions with answers, a judge setting
with results, expert labels by three (or more) annotators."""
import random
from decimal import Decimal

import pytest

from accounts.services import create_user_with_role
from annotation.models import Label, Response
from grading.models import JudgeResult

from ..factories import make_question, make_responses, make_stored_setting


def scripted(*, questions=6, per_question=12, experts=3, bias=0.0, noise=0.3, gold_share=1.0, seed=1,
             spread=True, name="scripted-judge"):
    """Answers whose gold is known; a judge = gold + bias + noise (spread grows with its error);
    `experts` annotators each label every answer with gold ± 0.5."""
    rng = random.Random(seed)
    setting = make_stored_setting(name=name)
    users = [create_user_with_role(f"expert{k}", "pw-expert-12345", "annotator") for k in range(experts)]
    results, labels = [], []
    for q in range(questions):
        question = make_question(f"Question {q} of the validity data", exam_name="Validity exam", full_score=10)
        responses = make_responses(question, per_question, start=q * per_question)
        for response in responses:
            gold = rng.randint(0, 10)
            has_gold = rng.random() < gold_share
            response.gold_score = Decimal(gold) if has_gold else None
            response.gold_status = "agreed" if has_gold else "none"
            error = bias + rng.gauss(0, noise)
            results.append(JudgeResult(setting=setting, response=response, cache_key=f"v-{response.pk}", status="ok",
                                       score=max(0.0, min(10.0, gold + error)),
                                       spread=abs(error) + rng.random() * 0.1 if spread else None))
            for user in users:
                labels.append(Label(response=response, annotator=user, submitted=True,
                                    total=Decimal(str(max(0, min(10, gold + rng.choice([-0.5, 0, 0, 0.5]))))),
                                    sub_scores={}))
        Response.objects.bulk_update(responses, ["gold_score", "gold_status"])
    JudgeResult.objects.bulk_create(results)
    Label.objects.bulk_create(labels)
    return setting


@pytest.fixture
def validity_data(db):
    return scripted()
