"""What a judge run works on: the answers a setting judges for a selection (its hold-outs left
out), in the order a run takes them, and which results are final (answered from the cache)."""
from __future__ import annotations

from collections.abc import Iterable

from django.utils.translation import gettext

from annotation.models import Response
from annotation.selectors import filter_responses

from ...models import JudgeResult, JudgeSetting
from .. import strategies
from .settings import RunRefused

FINAL_RESULT = (JudgeResult.Status.OK, JudgeResult.Status.INVALID)


def selected_ids(setting: JudgeSetting, *, params=None, response_ids: Iterable[int] | None = None) -> list[int]:
    """The ids of the answers a run of `setting` over this selection would judge (response-list
    filters `params`, and/or given ids); RunRefused when none matches."""
    queryset = Response.objects.all()
    if response_ids is not None:
        queryset = queryset.filter(pk__in=list(response_ids))
    queryset = filter_responses(queryset, params or {}).order_by("question_id", "id")
    holdout = strategies.holdout_ids(setting)  # few-shot examples / prompt-set hold-outs: never judged
    if holdout:
        queryset = queryset.exclude(pk__in=holdout)
    ids = list(queryset.values_list("pk", flat=True))
    if not ids:
        raise RunRefused(gettext("No response matches this selection."))
    return ids
