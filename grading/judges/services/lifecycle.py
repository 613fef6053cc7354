"""A judge run's life on grading/runs.py: start (the selection fixed, one item per response),
re-judge a question after a rubric edit, enqueue, cancel, resume; `JUDGE_RUNS`, its engine.
The chunks themselves are grading.judges.services.chunks."""
from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from django.db import transaction
from django.db.models import Max
from django.utils.translation import gettext

from ... import runs
from ...models import JudgeResult, JudgeRun, JudgeRunItem, JudgeSetting
from ...runs import RunEngine
from .. import selectors, tasks
from ..kinds import get_kind
from . import cost
from .selection import selected_ids
from .settings import RunRefused, check_endpoint_usable

OPEN_ITEM_STATES = (JudgeRunItem.State.PENDING, JudgeRunItem.State.ERROR)


def start_judge_run(
    config: JudgeSetting, *, params=None, response_ids: Iterable[int] | None = None, user=None,
    chunk_size: int | None = None, note: str = "", enqueue: bool = True,
) -> JudgeRun:
    """Fix the selection, create the run and queue it (after the transaction commits).

    With ``enqueue=False`` nothing is sent to Celery: call `run_inline` to do the work here.
    """
    if config.kind == JudgeSetting.Kind.EXTERNAL:
        raise RunRefused(gettext("Imported (external) settings cannot be run."))
    kind = get_kind(config.kind)
    if kind.uses_llm:
        if config.endpoint is None or not config.model:
            raise RunRefused(gettext("Setting %(config)s needs an endpoint and a model.") % {"config": config})
        check_endpoint_usable(config.endpoint)
    ids = selected_ids(config, params=params, response_ids=response_ids)
    chunk_size = chunk_size or _default_chunk_size(config)
    with transaction.atomic():
        run = JudgeRun.objects.create(
            setting=config, selection=clean_params(params), n_items=len(ids), chunk_size=chunk_size,
            created_by=user, note=note[:300],
        )
        JudgeRunItem.objects.bulk_create((JudgeRunItem(run=run, response_id=pk) for pk in ids), batch_size=500)
        if enqueue:
            JUDGE_RUNS.enqueue_on_commit(run)
    # The estimate the run page compares with what was spent. Made once the run is queued, so
    # that its first calls do not wait for it (about 0.1 s per 200 answers); the run's own
    # results are left out of it, so it is the estimate as of the start.
    run.estimate = cost.stored_estimate(config, ids, run=run)
    JudgeRun.objects.filter(pk=run.pk).update(estimate=run.estimate)
    return run


def rejudge_question(question, *, config_ids: Iterable[int] | None = None, user=None, enqueue: bool = True):
    """Judge again, with each setting version that judged `question` against an older rubric
    version (or those of them in `config_ids`), only the responses of that question it judged
    so. One run per setting on the ordinary run machinery; the rubric version is in the cache
    key, so the calls are really made. Old results are kept: the new ones are newer, so they
    become the current results. Returns (runs, [(config, why it was refused)])."""
    wanted = None if config_ids is None else {int(pk) for pk in config_ids}
    made, refused = [], []
    for entry in selectors.stale_settings(question):
        config = entry["config"]
        if wanted is not None and config.pk not in wanted:
            continue
        versions = ", ".join(f"v{v}" for v in entry["versions"])
        note = f"Re-judge of question {question.pk}: rubric {versions} -> v{question.rubric_version}"
        try:
            made.append(start_judge_run(
                config, response_ids=entry["response_ids"], user=user, note=note, enqueue=enqueue,
            ))
        except RunRefused as exc:
            refused.append((config, " ".join(exc.messages)))
    return made, refused


def _default_chunk_size(config):
    """Several rounds of the endpoint's concurrency per task: few broker round trips, and a
    chunk streams its calls, so one slow answer does not hold up the rest."""
    if config.endpoint is None:
        return 32
    return max(16, min(256, 4 * config.endpoint.max_concurrency))


def clean_params(params) -> dict:
    if not params:
        return {}
    getter = params.get
    return {key: getter(key) for key in params if getter(key) not in (None, "") and key != "page"}


JUDGE_RUNS = RunEngine(
    run_model=JudgeRun,
    chunk_task=tasks.run_judge_chunk,
    open_ids=lambda run: list(
        run.items.filter(state__in=OPEN_ITEM_STATES).order_by("id").values_list("pk", flat=True)
    ),
    nothing_left=lambda run_id: not JudgeRunItem.objects.filter(run_id=run_id, state=JudgeRunItem.State.PENDING).exists(),
    on_resume=runs.reopen_failed_items,
    name="grading.judges.services.JUDGE_RUNS",
    last_activity=lambda run: JudgeResult.objects.filter(run=run).aggregate(last=Max("finished"))["last"],
    endpoint_of=lambda run: run.setting.endpoint,
)


def enqueue_judge_run(run_id: int, epoch: int) -> int:
    """Send every open item of a run to the workers, in chunks tagged with `epoch`."""
    return JUDGE_RUNS.enqueue(run_id, epoch)


def cancel_judge_run(run: JudgeRun) -> JudgeRun:
    """Stop a run: workers finish the calls in flight and take no new work."""
    return JUDGE_RUNS.cancel(run)


def resume_judge_run(run: JudgeRun, *, enqueue: bool = True) -> JudgeRun:
    """Queue again every item without a finished result (pending, failed, or lost with a worker)."""
    return JUDGE_RUNS.resume(run, enqueue=enqueue)


def may_take_over(claim_owner: str, claimed_at: datetime | None, **kwargs) -> bool:
    """`grading.runs.may_take_over` for judge results, which runs share: a claim of another
    run counts only while that run is live in that epoch."""
    return runs.may_take_over(claim_owner, claimed_at, other_run_live=JUDGE_RUNS.is_live, **kwargs)
