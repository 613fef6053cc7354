"""Judge runs through the Batch API ("batch (cheaper, slower)"): the body of the poll task.

A batch run has the same items, claims, results and cache as a live run; only the calls travel
differently. One look (`advance_batch_run`) does, in order:

1. plan: each new item gets its cache key; one item per key (the others wait and are copied
   from its result, as a live chunk copies them) is claimed with the same `claim_chunk_items` as a
   live chunk (a finished result of the same key answers it from the cache, without a call);
2. collect: every part whose batch has ended (completed, expired, cancelled, failed) has its
   output and error files read; each line is matched by its ``custom_id`` (the cache key; the
   key shortened with ``.N`` for the N-th call a judge makes of the same prompt: samples, parse
   retries) and written once (only a line still "sent" in that part changes: a second read of
   the same file changes nothing). A line the batch did not answer is "failed";
3. retry: with ``batch_retry="batch"`` failed lines go into a next batch, up to
   LLM_BATCH_MAX_SENDS sends; with ``"live"`` (the default) they are called live in step 4,
   except the lines of a batch refused as a whole (validation failed), which go into a next
   batch all the same;
4. evaluate: a claim whose lines are all back is judged by its kind's own `evaluate`, with a
   call function that hands back the batch's answers in order (`_Replay`): the same parsing,
   samples and retries as a live call; a failed line is called live (retry "live") or fails the
   call as a live call fails. A judge asking for a call the batch has not made yet (a parse
   retry, the CAS kind's LLM fallback) gets a new line for a next batch. The outcome is written
   by the live path's `record_many` (the same JudgeResult rows), priced at
   LLM_BATCH_PRICE_FACTOR for what the batch answered;
5. cut and submit: queued lines become parts of at most LLM_BATCH_MAX_LINES lines and
   LLM_BATCH_MAX_BYTES bytes; each part's file is uploaded and its batch created, each id stored
   the moment the provider gives it; a part whose ids are missing after a crash is first looked
   for at the provider (the file by its name, the batch by its metadata: run, part and the run's
   token), so nothing is uploaded or sent twice;
6. poll: the provider's status, counts and times of every open part (a cancelled run cancels them).

The poll task queues its next look itself (`lifecycle.schedule_batch_poll`): at once while there
is work to do here, else after LLM_BATCH_POLL_SECONDS, doubled after each look that changed
nothing, up to LLM_BATCH_POLL_MAX_SECONDS. Why a self-rescheduling task and not Celery beat: a
run's chain lives exactly as long as the run has batch work, backs off per run, needs no beat
process (the deployment runs one only for the export check), and the run engine's watchdog
already revives a chain whose worker died (the run's ``batch_next_poll`` passes, then a lease).
"""
from __future__ import annotations

import logging
import os
import tempfile
import time
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.db.models import F, Max
from django.utils import timezone

import llm
from egress import purposes

from ...models import JudgeBatchLine, JudgeBatchPart, JudgeResult, JudgeRun, JudgeRunItem
from ...runs.claims import lease_for, owner_tag
from ...runs.engine import ChunkReport, call_each
from .. import strategies
from ..kinds import get_kind
from .cache_keys import input_cache_key, judge_input
from .chunks import Job, call_cost, call_spec_of, claim_chunk_items, executemany, make_caller, record_many
from .lifecycle import JUDGE_RUNS, schedule_batch_poll
from .settings import batch_client, judge_spec

OWNER_TASK = "batch"  # the task part of a batch run's claims: run:epoch:batch
SLICE = 500  # items planned, claims judged, per database round
Line = JudgeBatchLine
Part = JudgeBatchPart

logger = logging.getLogger(__name__)


class NeedsAnswer(BaseException):
    """Raised by `_Replay` inside a kind's `evaluate` when the judge asks for a call the batch has
    not answered yet. A BaseException, so that the kinds' own ``except Exception`` (which turns
    any failure into an error outcome) lets it through to `_judge`."""

    def __init__(self, index, messages):
        super().__init__(index)
        self.index, self.messages = index, messages


def custom_id_for(key: str, index: int) -> str:
    """A line's custom_id: the cache key (64 characters, providers' limit), ``key[:58].N`` for the N-th call."""
    return key if index == 0 else f"{key[:58]}.{index}"


def owner_of(run) -> str:
    return owner_tag(run.pk, run.epoch, OWNER_TASK)


# --- the poll task -----------------------------------------------------------------------------

def poll_batch_run(run_id: int, chain: str) -> str:
    """One look at a batch run, then the next look queued (the body of the poll task)."""
    run = JudgeRun.objects.select_related("setting__endpoint").filter(pk=run_id).first()
    if run is None or not run.is_batch or run.batch_chain != chain:
        return "stopped"
    # Seen as alive while this look lasts (uploads and large files take a while).
    grace = float(settings.LLM_BATCH_FILE_TIMEOUT_SECONDS)
    JudgeRun.objects.filter(pk=run_id, batch_chain=chain).update(batch_next_poll=timezone.now() + timedelta(seconds=grace))
    try:
        delay = advance_batch_run(run)
    except Exception:  # the chain must not end on a surprise: logged, looked at again later
        logger.exception("Judge run %s: a look at its batches failed; looking again later", run_id)
        delay = min(float(settings.LLM_BATCH_POLL_MAX_SECONDS), max(float(settings.LLM_BATCH_POLL_SECONDS),
                                                                     run.batch_poll_delay * 2))
    if delay is None:
        JudgeRun.objects.filter(pk=run_id, batch_chain=chain).update(batch_next_poll=None)
        return "done"
    schedule_batch_poll(run_id, delay, after=chain)
    return "polling"


def run_batch_inline(run, *, sleep=time.sleep, timeout: float | None = None):
    """Look at a batch run in this process until its batch work is over (no worker: tests, --inline)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        run = JudgeRun.objects.select_related("setting__endpoint").get(pk=run.pk)
        delay = advance_batch_run(run)
        if delay is None or (deadline is not None and time.monotonic() > deadline):
            return JudgeRun.objects.get(pk=run.pk)
        sleep(delay)


def advance_batch_run(run) -> float | None:
    """Everything a look at a batch run does (see the module's docstring). Returns the seconds
    until the next look, None when the run has no batch work left."""
    with llm.labelled(purposes.BATCH):  # the provider-call log: uploads, polls and downloads of this run
        return _advance(run)


def _advance(run) -> float | None:
    running = run.status == JudgeRun.Status.RUNNING
    owner = owner_of(run)
    state = _Look(run, owner, running)
    if running:
        state.retake_claims()
        state.plan()
        state.settle()
    state.poll_and_collect()
    if running:
        state.retry_failed()
    state.evaluate()
    if running:
        state.settle()  # the copies of what was just judged
        state.evaluate()  # claims that need no call (the cache, the CAS) or were just re-claimed
        state.cut_parts()
        state.submit()
        if JUDGE_RUNS.finish_if_complete(run.pk, run.epoch):
            return None
    open_parts = run.batch_parts.filter(collected__isnull=True).exclude(batch_id="").exists()
    if not running and not open_parts:
        return None
    if running and not open_parts and not run.items.filter(state=JudgeRunItem.State.PENDING).exists():
        return None
    base, cap = float(settings.LLM_BATCH_POLL_SECONDS), float(settings.LLM_BATCH_POLL_MAX_SECONDS)
    if state.more_now:
        return 0.0
    if state.changed:
        return base
    return min(cap, max(base, (run.batch_poll_delay or base) * 2))


@dataclass
class _Look:
    run: JudgeRun
    owner: str
    running: bool
    changed: bool = False
    more_now: bool = False
    _client: object = None

    @property
    def client(self):
        if self._client is None:
            self._client = batch_client(self.run.setting.endpoint)
        return self._client

    @property
    def setting(self):
        return self.run.setting

    # --- claims ----------------------------------------------------------------------------
    def ours(self):
        return JudgeResult.objects.filter(run=self.run, status=JudgeResult.Status.RUNNING, claim_owner=self.owner)

    def open_keys(self):
        """The keys with lines waiting for a batch or in one (a subquery)."""
        return self.run.batch_lines.filter(state__in=(Line.State.QUEUED, Line.State.SENT)).values("cache_key")

    def retake_claims(self):
        """This run's batch claims from an earlier epoch become this epoch's, and every claim's
        lease is renewed (a batch may take hours; another run must not take its work meanwhile)."""
        JudgeResult.objects.filter(
            run=self.run, status=JudgeResult.Status.RUNNING, claim_owner__startswith=f"{self.run.pk}:",
            claim_owner__endswith=f":{OWNER_TASK}",
        ).update(claim_owner=self.owner, claimed_at=timezone.now())

    def plan(self):
        """Give each new item its cache key (what the run's lines and claims go by)."""
        kind, spec = get_kind(self.setting.kind), judge_spec(self.setting)
        while True:
            items = list(
                self.run.items.filter(state=JudgeRunItem.State.PENDING, cache_key="")
                .select_related("response").prefetch_related("response__question__sub_questions").order_by("id")[:SLICE]
            )
            if not items:
                return
            rows = []
            for item in items:
                the_input = strategies.prepare(self.setting, judge_input(item.response), item.response)
                rows.append((input_cache_key(self.setting, kind, spec, the_input), item.pk))
            executemany(JudgeRunItem, ["cache_key"], rows)
            self.changed = True

    def settle(self):
        """Claim one open item per key nobody of this run is judging yet; answer the others from
        the cache (a finished result of the key) as a live chunk would."""
        kind, spec = get_kind(self.setting.kind), judge_spec(self.setting)
        lease = lease_for(self.setting.endpoint, self.setting.samples, self.setting.parse_retries)
        # An item whose key this run is judging (a claim, or lines in flight) waits for that
        # result and is then copied from it.
        candidates = (self.run.items.filter(state=JudgeRunItem.State.PENDING).exclude(cache_key="")
                      .exclude(cache_key__in=self.ours().values("cache_key")).exclude(cache_key__in=self.open_keys())
                      .select_related("response").prefetch_related("response__question__sub_questions").order_by("id"))
        batch, taken = [], set()
        for item in candidates.iterator(chunk_size=SLICE):
            if item.cache_key in taken:
                continue
            taken.add(item.cache_key)
            the_input = strategies.prepare(self.setting, judge_input(item.response), item.response)
            batch.append((item, the_input, input_cache_key(self.setting, kind, spec, the_input)))
            if len(batch) >= SLICE:
                self._claim(batch, lease)
                batch = []
        self._claim(batch, lease)

    def _claim(self, batch, lease):
        if not batch:
            return
        report = ChunkReport()
        for _item, _input, _key, claimed in claim_chunk_items(self.run, batch, self.owner, OWNER_TASK, lease, report):
            if claimed is not None and claimed != "deferred":
                self.changed = True
        if report.cached:
            self.changed = True

    # --- the provider --------------------------------------------------------------------
    def poll_and_collect(self):
        parts = list(self.run.batch_parts.filter(collected__isnull=True).exclude(batch_id="").order_by("number"))
        for part in parts:
            try:
                if part.status not in Part.TERMINAL:
                    self._poll(part)
                if part.status in Part.TERMINAL:
                    self._collect(part)
            except (llm.BatchApiError, llm.LlmCallFailed) as exc:
                logger.warning("Judge run %s, batch part %s: %s (looked at again later)", self.run.pk, part.number, exc)
                _note(part, str(exc))

    def _poll(self, part):
        state = self.client.retrieve(part.batch_id)
        before = (part.status, part.request_counts)
        _take_state(part, state)
        if not self.running and state.status not in Part.TERMINAL and not part.cancel_requested:
            _take_state(part, self.client.cancel(part.batch_id))
            part.cancel_requested = True
        part.polled = timezone.now()
        part.save()
        if (part.status, part.request_counts) != before:
            self.changed = True

    def _collect(self, part):
        """Read the ended batch's output and error files into its lines (once: only lines still
        sent in this part change), then mark the part collected."""
        answers, failures = {}, {}
        with tempfile.TemporaryDirectory(prefix="realmath-batch-") as folder:
            for file_id in (part.output_file_id, part.error_file_id):  # a line says itself whether it answers
                if not file_id:
                    continue
                path = os.path.join(folder, file_id.replace("/", "_"))
                self.client.download(file_id, path)
                with open(path, "rb") as handle:
                    for raw in handle:
                        line = llm.read_result_line(raw)
                        if line is None or not line.custom_id:
                            continue
                        if line.completion is not None:
                            answers[line.custom_id] = line.completion
                        else:
                            failures[line.custom_id] = line.error
        now = timezone.now()
        why = {"kind": "batch", "code": part.status,
               "message": f"The batch {part.status} without answering this request."
               + (f" {part.errors[0].get('message', '')}" if part.errors else "")}
        sent = dict(part.lines.filter(state=Line.State.SENT).values_list("custom_id", "id"))
        answered, failed = [], []
        for custom_id, pk in sent.items():
            done = answers.get(custom_id)
            if done is not None:
                answered.append((Line.State.ANSWERED, done.text, done.prompt_tokens, done.completion_tokens,
                                 done.errors, now, {}, pk, Line.State.SENT))
            else:
                error = failures.get(custom_id) or why
                failed.append((Line.State.FAILED, [{**error, "batch": part.batch_id}], pk, Line.State.SENT))
        with transaction.atomic():
            executemany(Line, ["state", "text", "prompt_tokens", "completion_tokens", "errors", "answered", "body"],
                        answered, where="id,state")
            executemany(Line, ["state", "errors"], failed, where="id,state")
            Part.objects.filter(pk=part.pk, collected__isnull=True).update(collected=now)
        self.changed = True

    def retry_failed(self):
        """Failed lines with sends left go into the next batch: all of them with
        ``batch_retry="batch"``; with "live", those of a batch the provider refused as a whole
        (validation failed: nothing was answered, and a refused 50,000-line file must not turn
        into 50,000 live calls at the full price)."""
        again = self.run.batch_lines.filter(state=Line.State.FAILED, sends__lt=int(settings.LLM_BATCH_MAX_SENDS))
        if self.run.batch_retry != JudgeRun.BatchRetry.BATCH:
            again = again.filter(pk__in=[pk for pk, errors in again.values_list("pk", "errors") if refused(errors)])
        if again.update(state=Line.State.QUEUED, part=None):
            self.changed = True

    def cut_parts(self):
        """Queued lines into parts within the provider's limits (lines and bytes per file)."""
        most_lines, most_bytes = max(1, int(settings.LLM_BATCH_MAX_LINES)), max(1, int(settings.LLM_BATCH_MAX_BYTES))
        queued = list(self.run.batch_lines.filter(state=Line.State.QUEUED, part__isnull=True)
                      .order_by("id").values_list("id", "n_bytes"))
        groups, group, size = [], [], 0
        for pk, n_bytes in queued:
            if group and (len(group) >= most_lines or size + n_bytes > most_bytes):
                groups.append((group, size))
                group, size = [], 0
            group.append(pk)
            size += n_bytes
        if group:
            groups.append((group, size))
        for ids, n_bytes in groups:
            with transaction.atomic():
                number = (self.run.batch_parts.aggregate(n=Max("number"))["n"] or 0) + 1
                part = Part.objects.create(run=self.run, number=number, n_bytes=n_bytes)
                moved = Line.objects.filter(pk__in=ids, state=Line.State.QUEUED, part__isnull=True).update(
                    part=part, state=Line.State.SENT, sends=F("sends") + 1)
                part.n_lines = moved
                part.save(update_fields=["n_lines"])
            self.changed = True

    def submit(self):
        """Upload each new part's file and create its batch; each id is stored as soon as it is known.

        Under a cancel token that asks whether the run is still this look's (`llm.cancel`): a
        request waiting out a 429 or a back-off stops once the run is cancelled (or the worker
        shuts down), and no upload or batch creation is sent after that."""
        def gone():
            return not JudgeRun.objects.filter(pk=self.run.pk, batch_chain=self.run.batch_chain,
                                               status=JudgeRun.Status.RUNNING).exists()

        token = llm.CancelToken(check=gone, every=1.0)
        for part in self.run.batch_parts.filter(batch_id="", collected__isnull=True).order_by("number"):
            if gone():
                return  # another look took over, or the run was cancelled meanwhile
            try:
                with llm.cancellable(token):
                    self._submit(part)
            except llm.CallCancelled as exc:
                logger.info("Judge run %s, batch part %s not submitted: %s", self.run.pk, part.number, exc)
                return
            except (llm.BatchApiError, llm.LlmCallFailed) as exc:
                logger.warning("Judge run %s, batch part %s not submitted: %s (tried again later)",
                               self.run.pk, part.number, exc)
                _note(part, str(exc))
                return
            self.changed = True

    def _submit(self, part):
        run = self.run
        name = f"realmath-run{run.pk}-{run.batch_token}-part{part.number}.jsonl"
        metadata = {"realmath_run": str(run.pk), "realmath_part": str(part.number), "realmath_token": run.batch_token}
        if not part.file_id:
            file_id = self.client.find_file(name)
            if not file_id:
                with tempfile.NamedTemporaryFile(prefix="realmath-batch-", suffix=".jsonl") as handle:
                    for custom_id, body in part.lines.order_by("id").values_list("custom_id", "body").iterator():
                        handle.write(llm.body_line(custom_id, body))
                    handle.flush()
                    file_id = self.client.upload(name, handle.name)
            part.file_id = file_id
            part.save(update_fields=["file_id"])
        state = self.client.find_batch(metadata) or self.client.create(part.file_id, metadata)
        _take_state(part, state)
        part.submitted = timezone.now()
        part.save()

    # --- judging -------------------------------------------------------------------------
    def evaluate(self):
        """Judge every claim of this run whose lines are all back (see the module's docstring)."""
        setting = self.setting
        kind, spec = get_kind(setting.kind), judge_spec(setting)
        claims = list(self.ours().exclude(cache_key__in=self.open_keys()).order_by("id"))
        live = make_caller(setting.endpoint, spec) if (
            self.running and self.run.batch_retry == JudgeRun.BatchRetry.LIVE) else None
        factor = Decimal(str(settings.LLM_BATCH_PRICE_FACTOR))
        for start in range(0, len(claims), SLICE):
            self._evaluate(claims[start:start + SLICE], kind, spec, live, factor)

    def _evaluate(self, claims, kind, spec, live, factor):
        run, setting = self.run, self.setting
        items = {i.response_id: i for i in run.items.filter(response_id__in=[c.response_id for c in claims])
                 .select_related("response").prefetch_related("response__question__sub_questions")}
        lines = {}
        for line in run.batch_lines.filter(cache_key__in={c.cache_key for c in claims}).order_by("call_index"):
            lines.setdefault(line.cache_key, {})[line.call_index] = line
        jobs = []
        for claim in claims:
            item = items.get(claim.response_id)
            if item is None or item.state != JudgeRunItem.State.PENDING:
                continue
            the_input = strategies.prepare(setting, judge_input(item.response), item.response)
            replay = _Replay(lines.get(claim.cache_key, {}), live, final=self.running)
            jobs.append((Job(item, claim, the_input), replay))
        done, wanted = [], []

        def judge(job):
            target, replay = job
            try:
                return kind.evaluate(spec, target.judge_input, replay)
            except NeedsAnswer as need:
                return need

        def record(job, value):
            target, replay = job
            if isinstance(value, NeedsAnswer):
                wanted.append((target, value))
            elif isinstance(value, BaseException):
                logger.error("Judge run %s: judging a batch answer failed: %s", run.pk, value)
            else:
                done.append(((target, replay), value))

        def flush():
            if len(done) >= 50:
                self._record(done, factor)

        width = max(1, setting.endpoint.max_concurrency if setting.endpoint else 1)
        call_each(jobs, judge, record, width=width, is_live=lambda: True, after_each=flush)
        self._record(done, factor)
        if self.running and wanted:
            self._want(wanted, spec)

    def _record(self, done, factor):
        if not done:
            return
        setting = self.setting
        replays = {id(target): replay for (target, replay), _ in done}

        def cost_of(target, outcome):
            full = call_cost(setting, outcome.prompt_tokens, outcome.completion_tokens)
            batch = call_cost(setting, *replays[id(target)].batch_tokens)
            return full - batch * (Decimal(1) - factor)

        record_many(self.run, setting, [(target, outcome) for (target, _), outcome in done], self.owner, cost_of)
        done.clear()
        self.changed = True

    def _want(self, wanted, spec):
        """New lines for calls a judge asked for: as many as the samples still to come (each
        sample of a prompt is the same request), else one."""
        call = call_spec_of(spec)
        rows = []
        for target, need in wanted:
            copies = max(1, spec.samples - need.index) if need.index < spec.samples else 1
            body = llm.request_body(call, need.messages)
            for index in range(need.index, need.index + copies):
                custom_id = custom_id_for(target.result.cache_key, index)
                rows.append(Line(run=self.run, cache_key=target.result.cache_key, call_index=index, custom_id=custom_id,
                                 body=body, n_bytes=len(llm.body_line(custom_id, body))))
        Line.objects.bulk_create(rows, ignore_conflicts=True, batch_size=500)
        self.changed = True
        self.more_now = True


class _Replay:
    """The `call` a kind is given when judging batch answers: the n-th call gets the key's n-th
    line. A missing line raises NeedsAnswer (a new line for a next batch); a failed one is
    called `live` (retry "live") or raises LlmCallFailed as a failed live call does; with
    ``final=False`` (a cancelled run) a failed line waits for a resume instead."""

    def __init__(self, lines, live, *, final=True):
        self.lines, self.live, self.final = lines, live, final
        self.index = 0
        self.batch_tokens = [0, 0]

    def __call__(self, messages):
        index, self.index = self.index, self.index + 1
        line = self.lines.get(index)
        if line is None or line.state in (Line.State.QUEUED, Line.State.SENT):
            raise NeedsAnswer(index, messages)
        if line.state == Line.State.ANSWERED:
            self.batch_tokens[0] += line.prompt_tokens
            self.batch_tokens[1] += line.completion_tokens
            return llm.Completion(line.text, line.prompt_tokens, line.completion_tokens, 0, 1, list(line.errors or []))
        if not self.final:
            raise NeedsAnswer(index, messages)
        if self.live is not None and not refused(line.errors):
            return self.live(messages)
        errors = list(line.errors or [])
        message = errors[-1].get("message", "") if errors and isinstance(errors[-1], dict) else ""
        raise llm.LlmCallFailed(f"The batch did not answer: {message}"[:500], errors=errors, attempts=line.sends)


def refused(errors) -> bool:
    """Whether a line failed because its whole batch failed validation (not a per-line error)."""
    last = errors[-1] if errors else None
    return isinstance(last, dict) and last.get("kind") == "batch" and last.get("code") == JudgeBatchPart.Status.FAILED


def _take_state(part, state):
    part.batch_id = state.id
    part.status = state.status if state.status in Part.Status.values else part.status
    part.output_file_id = state.output_file_id or part.output_file_id
    part.error_file_id = state.error_file_id or part.error_file_id
    part.request_counts = state.request_counts or part.request_counts
    part.provider_times = state.times or part.provider_times
    if state.errors:
        part.errors = state.errors


def _note(part, message):
    """Our own trouble with a part (the provider did not answer), kept beside the provider's errors."""
    notes = [e for e in (part.errors or []) if e.get("code") != "ours"][-5:]
    notes.append({"code": "ours", "message": message[:500], "at": timezone.now().isoformat()})
    Part.objects.filter(pk=part.pk).update(errors=notes)
