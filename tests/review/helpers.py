"""Builders for review tests: judge settings and results in bulk."""
from decimal import Decimal

from grading.models import JudgeConfig, JudgeResult


def make_setting(name="judge-a", kind=JudgeConfig.Kind.EXTERNAL, version=1, **fields):
    return JudgeConfig.objects.create(name=name, version=version, kind=kind, model=fields.pop("model", "m"), **fields)


def make_results(config, responses, scores, *, status=JudgeResult.Status.OK, key_prefix="k", **fields):
    """One result per (response, score); score None keeps the result without a score."""
    rows = [
        JudgeResult(
            config=config, response=response, cache_key=f"{key_prefix}-{response.pk}", status=status,
            score=None if score is None else float(score), rationale=fields.get("rationale", f"rationale {i}"),
            **{k: v for k, v in fields.items() if k != "rationale"},
        )
        for i, (response, score) in enumerate(zip(responses, scores))
    ]
    return JudgeResult.objects.bulk_create(rows)


def set_gold(responses, golds):
    for response, gold in zip(responses, golds):
        response.gold_score = None if gold is None else Decimal(str(gold))
        response.gold_status = "imported" if gold is not None else "none"
    type(responses[0]).objects.bulk_update(responses, ["gold_score", "gold_status"])
