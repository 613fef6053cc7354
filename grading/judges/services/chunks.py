"""The chunks of a judge run: claims, calls, recording (the body of the Celery chunk task).

How a run stays correct with many workers, redeliveries and kills (SQLite and PostgreSQL):

- A run's selection is fixed when it starts: one JudgeRunItem per response. Items are sent to
  Celery in chunks, each chunk task tagged with the run's *epoch*.
- A result row is keyed by (setting version, response, cache key) under a unique constraint,
  and is created the moment a worker claims the work (status running, ``claim_owner`` =
  run:epoch:task). So no two rows can exist for the same work, whatever happens.
- Before calling, a worker reuses a finished result with the same key (same response, or a
  response with the same content: copied without a call). A re-run of an unchanged setting
  therefore makes no call at all.
- A claim is taken over when it belongs to an older epoch or another run (the run was resumed
  or is a rerun), to a previous delivery of the same task (the worker died and the broker
  redelivered), or when its lease ran out. A worker writes its answer only where it still owns
  the claim (compare-and-swap on ``claim_owner``); a late writer changes nothing.
- Cancel sets the status; chunk tasks stop taking new work and give back what they had not
  started. Resume raises the epoch (queued tasks of older epochs then do nothing) and queues
  every item that has no finished result, including those a killed worker had claimed.

LLM calls run in threads inside a chunk task (up to the endpoint's concurrency); only the
task's main thread touches the database. In a worker, a chunk task returns once every item of
its chunk has *started*: its last calls finish and are recorded by a thread of the same process
(`TAILS`) while the process takes the next chunk, so a run boundary is not a moment with no
call in flight. A worker process that stops waits for those calls first (`finish_tails`).
"""
from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, wait
from dataclasses import dataclass
from decimal import Decimal

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

import llm
from egress import purposes

from ...models import JudgeResult, JudgeRun, JudgeRunItem, LlmEndpoint
from ...runs.claims import lease_for, owner_tag
from ...runs.engine import CANCEL_CHECK_SECONDS, ChunkReport, is_cancelled_call
from .. import strategies
from ..kinds import JudgeInput, JudgeSpec, Outcome, get_kind
from .cache_keys import input_cache_key, judge_input
from .lifecycle import JUDGE_RUNS, OPEN_ITEM_STATES, may_take_over
from .selection import FINAL_RESULT
from .settings import endpoint_spec, judge_spec

CAS_THREADS = 4
# How long a stopping worker process waits for handed-over calls (their claims are otherwise
# left to a resume): a call takes at most its endpoint's timeout times its attempts.
TAIL_SHUTDOWN_SECONDS = 600

logger = logging.getLogger(__name__)


def run_inline(run: JudgeRun, *, complete: Callable | None = None) -> JudgeRun:
    """Do a run's open work in this process, chunk after chunk (no Celery worker needed).

    `complete` stands in for the LLM client's ``complete`` (the demo's scripted model). A batch
    run is polled here until its batches are back (services.batches.run_batch_inline)."""
    if run.is_batch:
        from .batches import run_batch_inline  # cycle: the batch path records through this module

        return run_batch_inline(run)
    return JUDGE_RUNS.run_inline(run, process_judge_chunk, complete=complete)


@dataclass
class Job:
    item: JudgeRunItem
    result: JudgeResult
    judge_input: JudgeInput


def process_judge_chunk(run_id: int, epoch: int, item_ids: list[int], task_id: str | None = None,
                        complete: Callable | None = None, hand_over_tail: bool = False) -> ChunkReport:
    """Judge the given items of a run (the body of the Celery chunk task).

    With `hand_over_tail` (a worker), return once every item has started; the calls still in
    flight are recorded by `TAILS` (they are not counted in the report's ``recorded``).
    """
    task_id = str(task_id or uuid.uuid4().hex)
    report = ChunkReport()
    run = JUDGE_RUNS.live_run(run_id, epoch, select_related=["setting__endpoint"])
    if run is None:
        report.skipped = len(item_ids)
        return report
    setting = run.setting
    kind, spec = get_kind(setting.kind), judge_spec(setting)
    owner = owner_tag(run.pk, epoch, task_id)
    lease = lease_for(setting.endpoint, setting.samples, setting.parse_retries)
    # Questions prefetched, not joined: a chunk's answers share a few questions, and a join
    # would build (and decode the texts of) one question per answer, the chunk's largest start-up cost.
    items = list(
        JudgeRunItem.objects.filter(run=run, pk__in=item_ids, state__in=OPEN_ITEM_STATES)
        .select_related("response")
        .prefetch_related("response__question__sub_questions")
        .order_by("id")
    )
    deferred, handed_over = _stream(run, epoch, kind, spec, items, owner, task_id, lease, report, complete,
                                    hand_over_tail)
    for item, key in deferred:
        _wait_for_other_owner(run, epoch, item, key, lease, report)
    if not handed_over:  # else the tail finishes the run once its calls are recorded
        JUDGE_RUNS.finish_if_complete(run.pk, epoch)
    return report


def _stream(run, epoch, kind, spec, items, owner, task_id, lease, report, complete=None, hand_over_tail=False):
    """Keep up to `width` judgements in flight, claiming items in batches a little ahead of
    their start and writing answers in batches as they come back.

    A response whose content is being judged right now waits for that answer and then gets
    a copy (or claims the work itself if that judgement failed). Returns the items a live
    worker elsewhere is on, and whether calls were handed over: with `hand_over_tail`, once
    nothing is left to start, the calls in flight go to `TAILS` and this returns without
    waiting for them.
    """
    setting = run.setting
    call = make_caller(setting.endpoint, spec, complete)
    width = max(1, setting.endpoint.max_concurrency if (kind.uses_llm and setting.endpoint) else CAS_THREADS)
    queue = deque((item, None) for item in items)  # inputs are built as items start: calls begin at once
    ready = deque()  # claimed, waiting for a free slot
    waiting, in_flight, deferred = {}, {}, []
    live, checked = True, time.monotonic()
    pool, handed_over = llm.call_pool(), False
    token = llm.CancelToken()  # cancelled with the run: calls waiting out 429s send nothing more
    try:
        while in_flight or ((queue or ready) and live):
            if hand_over_tail and in_flight and (not live or not (queue or waiting or ready)):
                TAILS.take(run, epoch, in_flight, owner, token)  # nothing left to start here
                handed_over = True
                break
            if live and len(in_flight) < width:
                if not ready and queue:
                    ready.extend(_claim_ahead(run, kind, spec, queue, waiting, in_flight, width, owner, task_id,
                                              lease, report, deferred))
                while ready and len(in_flight) < width:
                    item, the_input, claimed = ready.popleft()
                    evaluate = llm.with_cancel(llm.with_label(kind.evaluate, purposes.JUDGE, answer_ids=[item.response_id]),
                                               token)
                    in_flight[pool.submit(evaluate, spec, the_input, call)] = Job(item, claimed, the_input)
            if not in_flight:
                if (queue or ready) and live:
                    continue
                break
            done, _ = wait(list(in_flight), timeout=CANCEL_CHECK_SECONDS, return_when=FIRST_COMPLETED)
            finished = _drop_cancelled([(in_flight.pop(future), _outcome_of(future)) for future in done], owner)
            record_many(run, setting, finished, owner)
            report.recorded += len(finished)
            for job, _ in finished:
                queue.extendleft(reversed(waiting.pop(job.result.cache_key, [])))
            if time.monotonic() - checked >= CANCEL_CHECK_SECONDS:
                live, checked = JUDGE_RUNS.is_live(run.pk, epoch) and not llm.cancel.shutting_down(), time.monotonic()
                if not live:
                    token.cancel()
    finally:
        if in_flight and not handed_over:  # an error stopped the chunk: its calls end first, as before
            wait(list(in_flight))
        _drop_unstarted_claims(ready, owner)
    return deferred, handed_over


def _claim_ahead(run, kind, spec, queue, waiting, in_flight, width, owner, task_id, lease, report, deferred):
    """Claim the next items of `queue` at once: the free slots' worth, and at least half the
    width, so that the slots freed one by one over the next moments start without a query each.
    Returns [(item, input, claimed row)]; items whose content is being judged wait in `waiting`.
    """
    wanted = max(width - len(in_flight), width // 2, 1)
    busy = {job.result.cache_key for job in in_flight.values()}
    claimable = []
    while queue and len(claimable) < wanted:
        item, the_input = queue.popleft()
        the_input = the_input or strategies.prepare(run.setting, judge_input(item.response), item.response)
        key = input_cache_key(run.setting, kind, spec, the_input)
        if key in busy:
            waiting.setdefault(key, []).append((item, the_input))
            continue
        busy.add(key)
        claimable.append((item, the_input, key))
    claimed_now = []
    for item, the_input, key, claimed in claim_chunk_items(run, claimable, owner, task_id, lease, report):
        if claimed == "deferred":
            deferred.append((item, key))
        if claimed is None or claimed == "deferred":
            queue.extendleft(reversed(waiting.pop(key, [])))
            continue
        report.claimed += 1
        claimed_now.append((item, the_input, claimed))
    return claimed_now


def _drop_unstarted_claims(ready, owner):
    """Claims taken ahead that never started (the run was cancelled, or an error stopped the
    chunk): rows that were never answered are removed (no item points at them yet), so their
    items are open for the next resume like any unclaimed item. A failed row taken over for a
    retry keeps its history; its claim is left to lapse as a stopped worker's would."""
    if ready:
        JudgeResult.objects.filter(
            pk__in=[claimed.pk for _, _, claimed in ready], claim_owner=owner, status=JudgeResult.Status.RUNNING,
            finished__isnull=True,
        ).delete()
        ready.clear()


def _drop_cancelled(finished, owner):
    """Answers that are a cancel (the run stopped, or the worker is shutting down, before the call's
    next attempt: grading.runs.engine.is_cancelled_call) are not results: their claims are removed, as unstarted
    ones are (`_drop_unstarted_claims`), so the items stay open for the next epoch. Returns the rest."""
    cancelled = [job for job, outcome in finished if is_cancelled_call(outcome)]
    if cancelled:
        JudgeResult.objects.filter(
            pk__in=[job.result.pk for job in cancelled], claim_owner=owner, status=JudgeResult.Status.RUNNING,
            finished__isnull=True,
        ).delete()
    return [(job, outcome) for job, outcome in finished if not is_cancelled_call(outcome)]


class _Tails:
    """Calls a chunk task left in flight when it returned, recorded by threads of this process.

    Each hand-over gets a thread that writes the answers as they come back (under the same
    claim checks as the chunk) and then finishes the run if nothing is left. `finish` waits
    for them all: a worker process calls it before it exits.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._threads = set()

    def take(self, run, epoch, in_flight, owner, token=None):
        thread = threading.Thread(target=self._record, args=(run, epoch, dict(in_flight), owner, token),
                                  name=f"judge-tail-{run.pk}", daemon=True)
        with self._lock:
            self._threads.add(thread)
        thread.start()

    def _record(self, run, epoch, in_flight, owner, token=None):
        try:
            pending, checked = set(in_flight), time.monotonic()
            while pending:
                done, pending = wait(pending, timeout=CANCEL_CHECK_SECONDS, return_when=FIRST_COMPLETED)
                finished = _drop_cancelled([(in_flight[f], _outcome_of(f)) for f in done], owner)
                record_many(run, run.setting, finished, owner)
                if token is not None and pending and time.monotonic() - checked >= CANCEL_CHECK_SECONDS:
                    checked = time.monotonic()
                    if not JUDGE_RUNS.is_live(run.pk, epoch):
                        token.cancel()  # the run was cancelled: calls waiting out 429s stop
            JUDGE_RUNS.finish_if_complete(run.pk, epoch)
        except Exception:  # the claims stay running: the run stalls and can be resumed
            logger.exception("Recording the last calls of a chunk of judge run %s failed", run.pk)
        finally:
            connection.close()  # this thread's own connection
            with self._lock:
                self._threads.discard(threading.current_thread())

    def finish(self, timeout: float | None = None) -> bool:
        """Wait for every handed-over call to be recorded; False if some were still going at `timeout`."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._lock:
                threads = list(self._threads)
            if not threads:
                return True
            for thread in threads:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                thread.join(left)
                if thread.is_alive():
                    return False


TAILS = _Tails()


def finish_tails(timeout: float | None = None) -> bool:
    """Wait until the calls chunk tasks of this process handed over are recorded."""
    return TAILS.finish(timeout)


def claim_chunk_items(run, items, owner, task_id, lease, report):
    """Claim (or answer from the cache) a chunk's `items`, (item, input, key) each: new claims in one insert.

    Returns [(item, input, key, claimed)], claimed a result row, None or "deferred".
    """
    if not items:
        return []
    setting = run.setting
    rows = {}
    for row in JudgeResult.objects.filter(setting=setting, cache_key__in={key for _, _, key in items}).order_by("id"):
        rows.setdefault(row.cache_key, []).append(row)
    out, fresh, links = [], [], []
    for item, the_input, key in items:
        existing = rows.get(key, [])
        own = next((r for r in existing if r.response_id == item.response_id), None)
        if own is not None and own.status in FINAL_RESULT:
            links.append((item, own, own.run_id != run.pk))
            out.append((item, the_input, key, None))
        elif own is None and not any(r.status in FINAL_RESULT for r in existing):
            fresh.append((item, the_input, key))
        else:  # a copy, a failed or a running claim: the careful one-by-one path
            out.append((item, the_input, key, _reuse_or_claim(run, item, key, owner, task_id, lease, report)))
    _link_many(links)
    report.cached += sum(1 for _, _, cached in links if cached)
    if fresh:
        now = timezone.now()
        claims = [
            JudgeResult(setting=setting, response_id=item.response_id, cache_key=key, run=run,
                        status=JudgeResult.Status.RUNNING, claim_owner=owner, claimed_at=now,
                        rubric_version=the_input.rubric_version)
            for item, the_input, key in fresh
        ]
        try:
            with transaction.atomic():
                JudgeResult.objects.bulk_create(claims)
        except IntegrityError:  # someone claimed one of them meanwhile: settle each on its own
            claims = [_reuse_or_claim(run, item, key, owner, task_id, lease, report) for item, _, key in fresh]
        out.extend((item, the_input, key, claim) for (item, the_input, key), claim in zip(fresh, claims))
    return out


def _item_state(result):
    return {JudgeResult.Status.OK: JudgeRunItem.State.OK, JudgeResult.Status.INVALID: JudgeRunItem.State.INVALID}.get(
        result.status, JudgeRunItem.State.ERROR
    )


def _link(item, result, cached):
    JudgeRunItem.objects.filter(pk=item.pk).update(
        state=_item_state(result), result=result, cached=cached, cache_key=result.cache_key
    )


def _link_many(links):
    """Point items at their results, [(item, result, cached)], in one batched statement."""
    if not links:
        return
    rows = [(_item_state(result), result.pk, cached, result.cache_key, item.pk) for item, result, cached in links]
    executemany(JudgeRunItem, ["state", "result", "cached", "cache_key"], rows)


def executemany(model, fields, rows, where="id"):
    """UPDATE model SET fields... WHERE <where> for many rows with one prepared statement.

    The ORM's bulk_update builds a CASE per row and field, which costs more CPU than the
    calls it records; values are prepared by the model's own fields, so JSON, decimals and
    dates reach SQLite and PostgreSQL as the ORM would send them.
    """
    meta = model._meta
    quote = connection.ops.quote_name
    columns = [meta.get_field(name) for name in fields]
    where_fields = [meta.get_field(name) for name in where.split(",")]
    sql = "UPDATE {} SET {} WHERE {}".format(
        quote(meta.db_table),
        ", ".join(f"{quote(f.column)} = %s" for f in columns),
        " AND ".join(f"{quote(f.column)} = %s" for f in where_fields),
    )
    every = columns + where_fields
    prepared = [[f.get_db_prep_save(v, connection) for f, v in zip(every, row)] for row in rows]
    with connection.cursor() as cursor:
        cursor.executemany(sql, prepared)
        return cursor.rowcount


def _reuse_or_claim(run, item, key, owner, task_id, lease, report):
    """Answer `item` from a finished result, or claim the work; return the claimed row,
    None (answered or owned elsewhere for good) or "deferred" (a live worker is on it)."""
    setting = run.setting
    rows = list(JudgeResult.objects.filter(setting=setting, cache_key=key).order_by("id"))
    own = next((r for r in rows if r.response_id == item.response_id), None)
    if own is not None and own.status in FINAL_RESULT:
        _link(item, own, cached=own.run_id != run.pk)
        report.cached += own.run_id != run.pk
        return None
    if own is None:
        donor = next((r for r in rows if r.status in FINAL_RESULT), None)
        if donor is not None:
            copy = _copy_result(donor, item, run)
            if copy is not None:
                _link(item, copy, cached=True)
                report.cached += 1
                return None
        try:
            with transaction.atomic():
                return JudgeResult.objects.create(
                    setting=setting, response_id=item.response_id, cache_key=key, run=run,
                    status=JudgeResult.Status.RUNNING, claim_owner=owner, claimed_at=timezone.now(),
                    rubric_version=item.response.question.rubric_version,
                )
        except IntegrityError:
            own = JudgeResult.objects.get(setting=setting, response_id=item.response_id, cache_key=key)
            if own.status in FINAL_RESULT:
                _link(item, own, cached=own.run_id != run.pk)
                return None
    if own.status == JudgeResult.Status.RUNNING and not may_take_over(
        own.claim_owner, own.claimed_at, run_id=run.pk, epoch=run.epoch, task_id=task_id, lease=lease
    ):
        return "deferred"
    taken = JudgeResult.objects.filter(pk=own.pk, claim_owner=own.claim_owner, status=own.status).update(
        status=JudgeResult.Status.RUNNING, claim_owner=owner, claimed_at=timezone.now(), run=run
    )
    if not taken:
        return "deferred"
    own.refresh_from_db()
    return own


def _copy_result(donor, item, run):
    """The same setting already judged the same content for another response: reuse it."""
    copy = JudgeResult(
        setting_id=donor.setting_id, response_id=item.response_id, run=run, cache_key=donor.cache_key,
        status=donor.status, score=donor.score, spread=donor.spread, rationale=donor.rationale,
        raw_output=donor.raw_output, parse_status=donor.parse_status, step_verdicts=donor.step_verdicts,
        samples=donor.samples, latency_ms=0, attempts=0, copied_from=donor, finished=timezone.now(),
        sub_scores=donor.sub_scores, rubric_version=item.response.question.rubric_version,
    )
    try:
        with transaction.atomic():
            copy.save()
    except IntegrityError:
        return None
    return copy


def make_caller(endpoint: LlmEndpoint | None, spec: JudgeSpec, complete: Callable | None = None) -> Callable:
    """The function kinds call to reach the LLM (no database access: it runs in threads)."""
    if endpoint is None:
        def no_llm(messages):
            raise llm.LlmCallFailed(
                "This setting has no endpoint.", errors=[{"kind": "config", "message": "no endpoint"}], attempts=0
            )

        return no_llm
    target = endpoint_spec(endpoint)
    call_spec = call_spec_of(spec)
    limiter = llm.limiter_for(target)
    complete = complete or llm.complete

    def call(messages):
        return complete(target, call_spec, messages, limiter=limiter)

    return call


def call_spec_of(spec: JudgeSpec) -> llm.CallSpec:
    """What a judge's calls ask for (the body of a live call and of a Batch API line)."""
    return llm.CallSpec(
        model=spec.model, temperature=spec.temperature, max_tokens=spec.max_tokens,
        reasoning_effort=spec.reasoning_effort, extra_body=spec.extra_body,
    )


def _outcome_of(future):
    try:
        return future.result()
    except Exception as exc:  # kinds catch their own errors; this is the last line of defence
        return Outcome("error", parse_status="exception", errors=[{"kind": "exception", "message": str(exc)[:500]}])


def call_cost(setting, prompt_tokens, completion_tokens):
    """What a live call costs at the setting's prices."""
    return (
        Decimal(prompt_tokens) * setting.price_input_per_1k + Decimal(completion_tokens) * setting.price_output_per_1k
    ) / Decimal(1000)


RESULT_FIELDS = [
    "status", "score", "spread", "rationale", "raw_output", "parse_status", "step_verdicts", "samples",
    "prompt_tokens", "completion_tokens", "cost", "latency_ms", "attempts", "errors", "finished", "run",
    "sub_scores",
]


def record_many(run, setting, finished, owner, cost_of: Callable | None = None):
    """Write answers that came back, in one transaction; only where this worker still owns the claim.

    `cost_of(job, outcome)` prices an answer (default: the setting's prices; a Batch API answer
    is priced at LLM_BATCH_PRICE_FACTOR of them)."""
    if not finished:
        return
    now = timezone.now()
    cost_of = cost_of or (lambda job, outcome: call_cost(setting, outcome.prompt_tokens, outcome.completion_tokens))
    rows = [
        (
            outcome.status, outcome.score, outcome.spread, outcome.rationale, outcome.raw_output,
            outcome.parse_status, outcome.step_verdicts, outcome.samples, outcome.prompt_tokens,
            outcome.completion_tokens, cost_of(job, outcome),
            outcome.latency_ms, outcome.attempts, outcome.errors, now, run.pk, outcome.sub_scores,
            job.result.pk, owner,
        )
        for job, outcome in finished
    ]
    with transaction.atomic():
        written = executemany(JudgeResult, RESULT_FIELDS, rows, where="id,claim_owner")
        jobs = [job for job, _ in finished]
        if written != len(jobs):  # some claims were taken over meanwhile: link only what is ours
            ours = set(
                JudgeResult.objects.filter(pk__in=[j.result.pk for j in jobs], claim_owner=owner, finished=now)
                .values_list("pk", flat=True)
            )
            finished = [(job, outcome) for job, outcome in finished if job.result.pk in ours]
        for job, outcome in finished:
            job.result.status = outcome.status
        _link_many([(job.item, job.result, False) for job, _ in finished])


def _wait_for_other_owner(run, epoch, item, key, lease, report):
    """Another live worker is judging this content: wait for its answer instead of paying twice."""
    deadline = time.monotonic() + lease.total_seconds()
    while time.monotonic() < deadline and JUDGE_RUNS.is_live(run.pk, epoch):
        row = (
            JudgeResult.objects.filter(setting=run.setting, response_id=item.response_id, cache_key=key)
            .only("id", "status", "run_id", "cache_key")
            .first()
        )
        if row is not None and row.status in FINAL_RESULT:
            _link(item, row, cached=row.run_id != run.pk)
            report.deferred += 1
            return
        if row is None or row.status == JudgeResult.Status.ERROR:
            return  # the other worker gave up; the next resume takes it
        time.sleep(0.5)
