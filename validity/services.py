"""What the Validity view writes: random draws of answers for experts to label, recorded with their
seed (`GoldDraw`), and the assignments that ask for those labels."""
import random

from django.db import transaction

from accounts.selectors import active_annotators
from annotation.labelling.services import assign_responses
from annotation.models import Assignment, Response

from .models import GoldDraw


class DrawError(ValueError):
    """Nothing to draw from, or no annotator to give the labels to."""


def _assign(setting, selection, purpose, response_ids, *, seed, per_answer, user):
    annotators = list(active_annotators())
    if not annotators:
        raise DrawError("annotators")
    if not response_ids:
        raise DrawError("empty")
    with transaction.atomic():
        draw = GoldDraw.objects.create(setting=setting, purpose=purpose, selection=selection.as_dict(), seed=seed,
                                       response_ids=sorted(response_ids), labels_per_answer=per_answer, created_by=user)
        result = assign_responses(responses=Response.objects.filter(pk__in=response_ids), annotators=annotators,
                                  per_response=min(per_answer, len(annotators)),
                                  strategy=Assignment.Strategy.LEAST_LOADED, assigned_by=user)
    return draw, result


def draw_golds(selection, rows, n, *, seed, user=None):
    """Send `n` answers without a gold, drawn at random (seeded), to the experts for golds."""
    pool = sorted(r.response_id for r in rows if r.gold is None)
    if not pool:
        raise DrawError("empty")
    picked = random.Random(seed).sample(pool, min(int(n), len(pool)))
    return _assign(selection.setting, selection, GoldDraw.Purpose.GOLDS, picked, seed=seed, per_answer=1, user=user)


def assign_for_alt_test(selection, rows, *, seed, target=50, user=None):
    """Ask for labels up to three experts on `target` answers for the Alternative Annotator Test
    (the authors recommend 50): answers with two expert labels first, then one, then none, each
    group drawn at random (seeded)."""
    rng = random.Random(seed)
    complete = sum(1 for r in rows if len(r.experts) >= 3)
    wanted = max(0, target - complete)
    two = sorted(r.response_id for r in rows if len(r.experts) == 2)
    one = sorted(r.response_id for r in rows if len(r.experts) == 1)
    fresh = sorted(r.response_id for r in rows if not r.experts)
    picked = []
    for pool in (two, one, fresh):  # the answers nearest to three labels first, at random within each
        take = min(wanted - len(picked), len(pool))
        picked += rng.sample(pool, take) if take > 0 else []
    return _assign(selection.setting, selection, GoldDraw.Purpose.AAT, picked, seed=seed, per_answer=3, user=user)


def assign_deferred(selection, response_ids, *, seed, user=None):
    """Send the answers the judge may not grade alone to the experts (one label each)."""
    return _assign(selection.setting, selection, GoldDraw.Purpose.DEFERRED, list(response_ids), seed=seed,
                   per_answer=1, user=user)
