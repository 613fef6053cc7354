"""The one engine for batches of LLM calls: judge runs, synthetic generation, the meta-evaluation pre-label,
probe runs and the geometry study.

A run model is a `grading.runs.models.AbstractRun`: ``status`` (running, cancelled, done),
``epoch``, ``n_items``, ``chunk_size``, ``resumed`` and ``finished``. Each kind of run describes
itself once as a `RunEngine`: its run model, the Celery chunk task (the task itself: services
import their tasks module at module level, tasks import services inside their body), how to list the ids of
its open work and how to tell that nothing is left. The engine then gives every kind the same:

- enqueue: open work goes to Celery in chunks, each tagged with the run's epoch; the queue is
  chosen by ``CELERY_TASK_ROUTES`` (`core.routing.route_task`), never at the call site;
- cancel: the status changes; chunks stop taking new work;
- resume: a new epoch (older chunks then do nothing) and every open item queued again;
- claims: an owner tag run:epoch:task and a lease (`grading.runs.claims`);
- finish: the run is done once nothing is open, for the current epoch only;
- the chunk loop (`call_each`): a chunk's calls on `call_pool`'s threads, at most the endpoint's
  width at once, each recorded in the chunk's thread as it ends, no new call once the run stops.

Stall detection (`stalled`) is read-side; the progress counts are each kind's selectors.

- watch: a run whose worker died is taken over without anyone pressing Resume. Each enqueue
  (start, resume) schedules a watchdog task (`grading.runs.tasks.watch_run`, no Celery beat
  needed) that looks at the run every WATCH_SECONDS while it runs: once no answer has come for
  as long as a claim's lease (`lease_for` its endpoint: by then any worker may take its claims
  over anyway, so a slow but living worker is never doubled sooner), it resumes the run (a new
  epoch, its open work queued again) and watches the new epoch. At most MAX_TAKEOVERS in a row,
  so work that kills every worker it reaches does not loop for ever. A worker that starts also
  watches every running run (`watch_running`): a watchdog message held by a worker that died
  with it is not lost for good.
"""
from __future__ import annotations

import logging
import time
import uuid
from collections import deque
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, wait
from dataclasses import dataclass, field
from datetime import datetime

from django.apps import apps
from django.db import transaction
from django.utils import timezone
from django.utils.module_loading import import_string

import llm

from .claims import lease_for

CANCEL_CHECK_SECONDS = 0.5
STALL_SECONDS = 60
WATCH_SECONDS = 60  # how often the watchdog looks at a running run
MAX_TAKEOVERS = 3  # automatic take-overs in a row before the watchdog leaves a run to a person
WATCH_TASK = "grading.runs.tasks.watch_run_task"
# grading's engines, by the dotted path its watchdog task finds each at (RunEngine.name); a later
# app names its own as `run_engines` on its AppConfig (studies: probe and geometry runs), so
# grading imports none of them: `engine_paths()` is every one.
RUN_ENGINES = (
    "grading.judges.services.JUDGE_RUNS",
    "grading.generation.services.GENERATION_RUNS",
    "grading.review.services.META_EVAL_RUNS",
)

logger = logging.getLogger(__name__)

@dataclass
class ChunkReport:
    """What one chunk task did."""

    claimed: int = 0
    cached: int = 0
    deferred: int = 0
    recorded: int = 0
    released: int = 0
    skipped: int = 0
    notes: list = field(default_factory=list)


@dataclass(frozen=True)
class RunEngine:
    """How one kind of run plugs into the engine."""

    run_model: type
    chunk_task: object  # the Celery task taking (run_id, epoch, ids)
    open_ids: Callable  # run -> ids of the work still to do, in order
    nothing_left: Callable  # run_id -> True once every piece of work has an answer (or a failure)
    on_resume: Callable | None = None  # run -> None, inside resume's transaction: reopen failed work
    name: str = ""  # this engine's dotted path (one of engine_paths()): the watchdog task finds it there
    last_activity: Callable | None = None  # run -> when its last answer was written (None: none yet)
    endpoint_of: Callable | None = None  # run -> its LlmEndpoint, whose lease bounds a silent claim
    # (run, epoch) -> True when the run's open work goes elsewhere than the chunk task (a judge
    # run through the Batch API: its poll task), so enqueue sends no chunk.
    dispatch: Callable | None = None

    def is_live(self, run_id: int, epoch: int) -> bool:
        model = self.run_model
        return model.objects.filter(pk=run_id, epoch=epoch, status=model.Status.RUNNING).exists()

    def finish_if_complete(self, run_id: int, epoch: int) -> bool:
        """Mark the run done when nothing is left (only for its current epoch)."""
        if not self.nothing_left(run_id):
            return False
        model = self.run_model
        return bool(
            model.objects.filter(pk=run_id, epoch=epoch, status=model.Status.RUNNING).update(
                status=model.Status.DONE, finished=timezone.now()
            )
        )

    def enqueue(self, run_id: int, epoch: int, chunk_size: int | None = None) -> int:
        """Send every open piece of work to the workers, in chunks tagged with `epoch`."""
        run = self.run_model.objects.get(pk=run_id)
        if self.dispatch is not None and self.dispatch(run, epoch):
            return len(self.open_ids(run))
        ids = list(self.open_ids(run))
        if not ids:
            self.finish_if_complete(run.pk, epoch)
            return 0
        task, size = self.chunk_task, chunk_size or run.chunk_size
        for start in range(0, len(ids), size):
            task.apply_async(args=[run.pk, epoch, ids[start : start + size]])
        return len(ids)

    def enqueue_on_commit(self, run, *, takeovers: int = 0) -> None:
        epoch = run.epoch

        def send():
            self.enqueue(run.pk, epoch)
            self.schedule_watch(run.pk, epoch, takeovers)

        transaction.on_commit(send)

    # --- the watchdog ------------------------------------------------------------------
    def takeover_seconds(self, run) -> float:
        """How long a running run may go without an answer before it is taken over: a claim's lease."""
        endpoint = self.endpoint_of(run) if self.endpoint_of is not None else None
        return max(float(STALL_SECONDS), lease_for(endpoint).total_seconds())

    def schedule_watch(self, run_id: int, epoch: int, takeovers: int = 0, delay: float = WATCH_SECONDS) -> None:
        from celery import current_app  # imported here: the engine module stays free of Celery at import

        if not self.name or current_app.conf.task_always_eager:
            return  # eager tasks (tests, inline runs) would watch synchronously for ever
        import_string(WATCH_TASK).apply_async(args=[self.name, run_id, epoch, takeovers], countdown=max(0.0, delay))

    def watch(self, run_id: int, epoch: int, takeovers: int = 0, *, now: datetime | None = None) -> str:
        """One look of the watchdog: "stopped" (the run ended or moved to another epoch, whose own
        watch goes on), "finished", "watching" (looks again later), "taken over" or "left"."""
        model = self.run_model
        run = model.objects.filter(pk=run_id).first()
        if run is None or run.status != model.Status.RUNNING or run.epoch != epoch:
            return "stopped"
        if self.finish_if_complete(run_id, epoch):
            return "finished"
        now = now or timezone.now()
        last = self.last_activity(run) if self.last_activity is not None else None
        quiet = (now - max(filter(None, (last, run.resumed, run.created)))).total_seconds()
        limit = self.takeover_seconds(run)
        if quiet < limit:
            self.schedule_watch(run_id, epoch, takeovers, delay=min(WATCH_SECONDS, limit - quiet + 1))
            return "watching"
        if takeovers >= MAX_TAKEOVERS:
            logger.warning("%s %s: no answer for %.0f s after %s automatic take-overs; left for a person to resume",
                           model.__name__, run_id, quiet, takeovers)
            return "left"
        logger.warning("%s %s (epoch %s): no answer for %.0f s (the claims' lease); its worker stopped: "
                       "taken over automatically", model.__name__, run_id, epoch, quiet)
        self.resume(run, takeovers=takeovers + 1)
        return "taken over"

    def cancel(self, run):
        """Stop a running run: workers finish the calls in flight and take no new work."""
        model = self.run_model
        model.objects.filter(pk=run.pk, status=model.Status.RUNNING).update(
            status=model.Status.CANCELLED, finished=timezone.now()
        )
        run.refresh_from_db()
        return run

    def resume(self, run, *, enqueue: bool = True, takeovers: int = 0):
        """Start a new epoch for a run with open work and queue that work (after the commit)."""
        model = self.run_model
        with transaction.atomic():
            run = model.objects.select_for_update().get(pk=run.pk)
            if not self.open_ids(run):
                if run.status == model.Status.RUNNING:
                    self.finish_if_complete(run.pk, run.epoch)
                    run.refresh_from_db()
                return run
            now = timezone.now()
            run.earlier_seconds += epoch_seconds(run, now)
            run.epoch += 1
            run.status = model.Status.RUNNING
            run.resumed = now
            run.finished = None
            run.save(update_fields=["epoch", "status", "resumed", "finished", "earlier_seconds"])
            if self.on_resume is not None:
                self.on_resume(run)
            if enqueue:
                self.enqueue_on_commit(run, takeovers=takeovers)
        return run

    def run_inline(self, run, process_chunk: Callable, **chunk_kwargs):
        """Do a run's open work in this process, chunk after chunk (no Celery worker needed)."""
        ids = self.open_ids(run)
        for start in range(0, len(ids), run.chunk_size):
            process_chunk(run.pk, run.epoch, ids[start : start + run.chunk_size], task_id=f"inline-{uuid.uuid4().hex}",
                          **chunk_kwargs)
        self.finish_if_complete(run.pk, run.epoch)
        run.refresh_from_db()
        return run

    def open_chunk(self, run_id: int, epoch: int, item_ids, task_id: str | None = None, **related):
        """How a chunk starts: ``(run, task_id, report)``, the task id made up when none is given
        (inline runs, tests); `run` is None, with every item counted as skipped, when the chunk
        must do nothing (the run was cancelled, resumed into a newer epoch or finished)."""
        report = ChunkReport()
        run = self.live_run(run_id, epoch, **related)
        if run is None:
            report.skipped = len(item_ids)
        return run, str(task_id or uuid.uuid4().hex), report

    def live_run(self, run_id: int, epoch: int, **related):
        """The run if a chunk of `epoch` should work on it now, else None."""
        model = self.run_model
        run = model.objects.select_related(*related.get("select_related", ())).filter(pk=run_id).first()
        if run is None or run.epoch != epoch or run.status != model.Status.RUNNING:
            return None
        return run


def engine_paths() -> tuple[str, ...]:
    """Every engine's dotted path: grading's (RUN_ENGINES) and the later apps' `run_engines`."""
    return RUN_ENGINES + tuple(path for app_config in apps.get_app_configs() for path in getattr(app_config, "run_engines", ()))


def watch_running() -> int:
    """Watch every running run of every engine now (a worker just started: a watchdog message
    held by a worker that died went with it). Returns how many runs are watched."""
    watched = 0
    for path in engine_paths():
        engine = import_string(path)
        model = engine.run_model
        for run_id, epoch in model.objects.filter(status=model.Status.RUNNING).values_list("pk", "epoch"):
            engine.schedule_watch(run_id, epoch, delay=0)
            watched += 1
    return watched


def reopen_failed_items(run) -> None:
    """`on_resume` for runs whose items are pending, then answered or failed: the failed ones
    are pending again, so the run is done only once every retry has answered (not when the
    first chunk of retries ends while the others are still queued)."""
    states = run.items.model.State
    run.items.filter(state=states.ERROR).update(state=states.PENDING)


def stalled(status: str, last_activity: datetime | None, started: datetime) -> bool:
    """A running run with no answer for a while: its worker may be gone; resuming is offered."""
    if status != "running":
        return False
    return (timezone.now() - (last_activity or started)).total_seconds() > STALL_SECONDS


def progress_head(run, pending: int) -> dict:
    """The fields a judge or generation run's progress begins with: the run, its status and
    epoch, its size, the items done and pending, and the percent done."""
    done = run.n_items - pending
    return {
        "run": run.pk,
        "status": run.status,
        "epoch": run.epoch,
        "total": run.n_items,
        "done": done,
        "pending": pending,
        "percent": round(100.0 * done / run.n_items, 1) if run.n_items else 100.0,
    }


def epoch_seconds(run, now=None) -> float:
    """The seconds of the run's current epoch: from its start (or last resume) to its end (or now)."""
    end = run.finished or now or timezone.now()
    return max((end - (run.resumed or run.created)).total_seconds(), 0.0)


def elapsed_seconds(run, now=None) -> float:
    """The seconds the whole run has taken, over every epoch (a resume does not start the count
    again; the time a run stood cancelled is not counted), rounded to 0.1 s."""
    return round((run.earlier_seconds or 0.0) + epoch_seconds(run, now), 1)


RESUME_REFUSED = "The run is still making progress; resume it once it is cancelled or stalls, or pass force."


def may_resume(progress: dict, force=None) -> bool:
    """Whether a run may be resumed: once it is cancelled or stalled (its progress says
    ``can_resume``), or when the caller forces it (e.g. right after stopping a worker by hand)."""
    return bool(progress["can_resume"]) or str(force or "").lower() in ("1", "true")


def call_each(jobs, call: Callable, record: Callable, *, width: int, is_live: Callable[[], bool],
              after_each: Callable | None = None) -> list:
    """The chunk loop of generation, probe and meta-evaluation runs: ``call(job)`` for every job
    on `call_pool`'s threads, at most `width` at once, ``record(job, value)`` in this thread as
    each call ends (the database is touched here only), then ``after_each()`` once per wait.

    `value` is what `call` returned, or the exception it raised. Every `CANCEL_CHECK_SECONDS` the
    loop asks ``is_live()``; once the run is cancelled or resumed elsewhere, no new call starts,
    and the calls in flight are cancelled (`llm.CancelToken`): one waiting out a 429, a cooldown
    or a back-off stops at once and sends nothing more (`llm.CallCancelled`), one already sent ends
    and is recorded. Returns the jobs never started or stopped by the cancel (or by the worker
    shutting down) before an answer (their claims are the caller's to give back).
    """
    pool, queue, in_flight, stopped = llm.call_pool(), deque(jobs), {}, []
    token = llm.CancelToken()
    call = llm.with_cancel(call, token)
    live, checked = True, time.monotonic()
    while in_flight or (live and queue):
        while live and queue and len(in_flight) < max(1, width):
            job = queue.popleft()
            in_flight[pool.submit(call, job)] = job
        done, _ = wait(list(in_flight), timeout=CANCEL_CHECK_SECONDS, return_when=FIRST_COMPLETED)
        for future in done:
            job = in_flight.pop(future)
            try:
                value = future.result()
            except Exception as exc:  # the caller's record turns it into a failure
                value = exc
            if is_cancelled_call(value):
                stopped.append(job)  # not a failure: the work is open again for the next epoch
                continue
            record(job, value)
        if after_each is not None:
            after_each()
        if live and (queue or in_flight) and time.monotonic() - checked >= CANCEL_CHECK_SECONDS:
            live, checked = is_live() and not llm.cancel.shutting_down(), time.monotonic()
            if not live:
                token.cancel()
    return stopped + list(queue)


def is_cancelled_call(value) -> bool:
    """Whether a call's outcome is a cancel (llm.CallCancelled), directly or as the error a caller
    wrapped it in (a value holding `errors` whose last entry is of kind "cancelled")."""
    if isinstance(value, llm.CallCancelled):
        return True
    errors = value[1].errors if isinstance(value, tuple) and len(value) == 2 and hasattr(value[1], "errors") else (
        getattr(value, "errors", None))
    return bool(errors) and isinstance(errors, list) and isinstance(errors[-1], dict) and errors[-1].get("kind") == "cancelled"
