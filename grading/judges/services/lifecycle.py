"""A judge run's life on grading/runs/engine.py: start (the selection fixed, one item per response),
re-judge a question after a rubric edit, enqueue, cancel, resume; `JUDGE_RUNS`, its engine.
The chunks themselves are grading.judges.services.chunks; a batch run's poll chain is
grading.judges.services.batches (started here: `schedule_batch_poll`)."""
from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext

from ...models import JudgeBatchLine, JudgeResult, JudgeRun, JudgeRunItem, JudgeSetting
from ...runs import claims, engine
from ...runs.engine import RunEngine
from .. import selectors, tasks
from ..kinds import get_kind
from . import cost
from .selection import selected_ids
from .settings import RunRefused, check_batch_endpoint, check_endpoint_usable

OPEN_ITEM_STATES = (JudgeRunItem.State.PENDING, JudgeRunItem.State.ERROR)


def start_judge_run(
    setting: JudgeSetting, *, params=None, response_ids: Iterable[int] | None = None, user=None,
    chunk_size: int | None = None, note: str = "", enqueue: bool = True, mode: str = JudgeRun.Mode.LIVE,
    batch_retry: str = JudgeRun.BatchRetry.LIVE,
) -> JudgeRun:
    """Fix the selection, create the run and queue it (after the transaction commits).

    With ``enqueue=False`` nothing is sent to Celery: call `run_inline` to do the work here.
    ``mode="batch"`` sends the calls through the endpoint's Batch API (services.batches); the
    endpoint is asked first whether it serves one, and the run is refused, saying so, if not.
    """
    if setting.kind == JudgeSetting.Kind.EXTERNAL:
        raise RunRefused(gettext("Imported (external) settings cannot be run."))
    if mode not in JudgeRun.Mode.values or batch_retry not in JudgeRun.BatchRetry.values:
        raise RunRefused(gettext("Unknown run mode %(mode)s or retry %(retry)s.") % {"mode": mode, "retry": batch_retry})
    kind = get_kind(setting.kind)
    if kind.uses_llm:
        if setting.endpoint is None or not setting.model:
            raise RunRefused(gettext("Setting %(config)s needs an endpoint and a model.") % {"config": setting})
        check_endpoint_usable(setting.endpoint)
    if mode == JudgeRun.Mode.BATCH:
        if not kind.uses_llm:
            raise RunRefused(gettext("Setting %(config)s calls no LLM: there is nothing to send as a batch; "
                                     "run it live.") % {"config": setting})
        check_batch_endpoint(setting.endpoint)
    ids = selected_ids(setting, params=params, response_ids=response_ids)
    chunk_size = chunk_size or _default_chunk_size(setting)
    with transaction.atomic():
        run = JudgeRun.objects.create(
            setting=setting, selection=clean_params(params), n_items=len(ids), chunk_size=chunk_size,
            created_by=user, note=note[:300], mode=mode, batch_retry=batch_retry,
            batch_token=uuid.uuid4().hex if mode == JudgeRun.Mode.BATCH else "",
        )
        JudgeRunItem.objects.bulk_create((JudgeRunItem(run=run, response_id=pk) for pk in ids), batch_size=500)
        if enqueue:
            JUDGE_RUNS.enqueue_on_commit(run)
    # The estimate the run page compares with what was spent. Made once the run is queued, so
    # that its first calls do not wait for it (about 0.1 s per 200 answers); the run's own
    # results are left out of it, so it is the estimate as of the start.
    run.estimate = cost.stored_estimate(setting, ids, run=run)
    JudgeRun.objects.filter(pk=run.pk).update(estimate=run.estimate)
    return run


REJUDGE_NOTE = "Re-judge of question {question}: rubric {versions} -> v{version}"


def rejudge_question(question, *, setting_ids: Iterable[int] | None = None, user=None, enqueue: bool = True):
    """Judge again, with each setting version that judged `question` against an older rubric
    version (or those of them in `setting_ids`), only the responses of that question it judged
    so. One run per setting on the ordinary run machinery; the rubric version is in the cache
    key, so the calls are really made. Old results are kept: the new ones are newer, so they
    become the current results. Returns (runs, [(setting, why it was refused)])."""
    wanted = None if setting_ids is None else {int(pk) for pk in setting_ids}
    made, refused = [], []
    for entry in selectors.stale_settings(question):
        setting = entry["setting"]
        if wanted is not None and setting.pk not in wanted:
            continue
        versions = ", ".join(f"v{v}" for v in entry["versions"])
        # Stored in English, as a run's note is (the API, exports); pages show it in the reader's
        # language (selectors.run_note_text, which reads this form back).
        note = REJUDGE_NOTE.format(question=question.pk, versions=versions, version=question.rubric_version)
        try:
            made.append(start_judge_run(
                setting, response_ids=entry["response_ids"], user=user, note=note, enqueue=enqueue,
            ))
        except RunRefused as exc:
            refused.append((setting, " ".join(exc.messages)))
    return made, refused


def _default_chunk_size(setting):
    """Several rounds of the endpoint's concurrency per task: few broker round trips, and a
    chunk streams its calls, so one slow answer does not hold up the rest."""
    if setting.endpoint is None:
        return 32
    return max(16, min(256, 4 * setting.endpoint.max_concurrency))


def clean_params(params) -> dict:
    if not params:
        return {}
    getter = params.get
    return {key: getter(key) for key in params if getter(key) not in (None, "") and key != "page"}


def schedule_batch_poll(run_id: int, delay: float = 0.0, *, after: str | None = None) -> str | None:
    """Start a batch run's poll chain (`tasks.poll_judge_batches`) in `delay` seconds: the run
    names the task due next (``batch_chain``), so a poll with another id stops and a run has one
    chain. With `after`, only if the chain is still that one (a poll handing on to the next).
    Returns the new chain id, None when another chain took over. Eager Celery (tests, inline
    runs) queues nothing: `services.batches.run_batch_inline` polls in the caller's process."""
    from celery import current_app  # imported here: as grading.runs.engine, no Celery at import

    chain = uuid.uuid4().hex
    due = timezone.now() + timedelta(seconds=max(0.0, delay))
    rows = JudgeRun.objects.filter(pk=run_id)
    if after is not None:
        rows = rows.filter(batch_chain=after)
    if not rows.update(batch_chain=chain, batch_next_poll=due, batch_poll_delay=max(0.0, delay)):
        return None
    if not current_app.conf.task_always_eager:
        tasks.poll_judge_batches_task.apply_async(args=[run_id, chain], countdown=max(0.0, delay), task_id=chain)
    return chain


def _dispatch(run, epoch) -> bool:
    """`RunEngine.dispatch`: a batch run's open work goes to its poll chain, not to chunks."""
    if not run.is_batch:
        return False
    schedule_batch_poll(run.pk)
    return True


def _reopen(run) -> None:
    """`on_resume`: failed items are open again; a batch run's failed lines go into a next batch."""
    engine.reopen_failed_items(run)
    if run.is_batch:
        run.batch_lines.filter(state=JudgeBatchLine.State.FAILED).update(state=JudgeBatchLine.State.QUEUED, part=None)


def _last_activity(run):
    """The run's last answer; for a batch run also its last look at the provider and the next one
    due (in the future while its poll chain lives), so a batch that takes hours is not taken over."""
    last = JudgeResult.objects.filter(run=run).aggregate(last=Max("finished"))["last"]
    if not run.is_batch:
        return last
    polled = run.batch_parts.aggregate(last=Max("polled"))["last"]
    return max(filter(None, (last, polled, run.batch_next_poll)), default=None)


JUDGE_RUNS = RunEngine(
    run_model=JudgeRun,
    chunk_task=tasks.run_judge_chunk_task,
    open_ids=lambda run: list(
        run.items.filter(state__in=OPEN_ITEM_STATES).order_by("id").values_list("pk", flat=True)
    ),
    nothing_left=lambda run_id: not JudgeRunItem.objects.filter(run_id=run_id, state=JudgeRunItem.State.PENDING).exists(),
    on_resume=_reopen,
    name="grading.judges.services.JUDGE_RUNS",
    last_activity=_last_activity,
    endpoint_of=lambda run: run.setting.endpoint,
    dispatch=_dispatch,
)


def enqueue_judge_run(run_id: int, epoch: int) -> int:
    """Send every open item of a run to the workers, in chunks tagged with `epoch`."""
    return JUDGE_RUNS.enqueue(run_id, epoch)


def cancel_judge_run(run: JudgeRun) -> JudgeRun:
    """Stop a run: workers finish the calls in flight and take no new work. A batch run's poll
    chain looks at once: it cancels the provider's batches and keeps what they had answered."""
    run = JUDGE_RUNS.cancel(run)
    if run.is_batch:
        schedule_batch_poll(run.pk)
    return run


def resume_judge_run(run: JudgeRun, *, enqueue: bool = True) -> JudgeRun:
    """Queue again every item without a finished result (pending, failed, or lost with a worker)."""
    return JUDGE_RUNS.resume(run, enqueue=enqueue)


def may_take_over(claim_owner: str, claimed_at: datetime | None, **kwargs) -> bool:
    """`grading.runs.claims.may_take_over` for judge results, which runs share: a claim of another
    run counts only while that run is live in that epoch."""
    return claims.may_take_over(claim_owner, claimed_at, other_run_live=JUDGE_RUNS.is_live, **kwargs)
