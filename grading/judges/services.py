"""
Judge settings, judge runs, synthetic answer generation and imported judge results.

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

import hashlib
import logging
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, wait
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext

import llm
from annotation.models import Response
from annotation.selectors import filter_responses
from llm import access

from .. import runs
from ..models import JudgeResult, JudgeRun, JudgeRunItem, JudgeSetting, LlmEndpoint
from ..runs import CANCEL_CHECK_SECONDS, ChunkReport, RunEngine, lease_for, owner_tag
from . import prompts, selectors, strategies
from .kinds import KINDS, JudgeInput, JudgeSpec, Outcome, get_kind

FINAL_RESULT = (JudgeResult.Status.OK, JudgeResult.Status.INVALID)
OPEN_ITEM_STATES = (JudgeRunItem.State.PENDING, JudgeRunItem.State.ERROR)
CAS_THREADS = 4
# How long a stopping worker process waits for handed-over calls (their claims are otherwise
# left to a resume): a call takes at most its endpoint's timeout times its attempts.
TAIL_SHUTDOWN_SECONDS = 600

logger = logging.getLogger(__name__)


class RunRefused(ValidationError):
    """A run cannot start as asked (the message says why); nothing was created."""


# --- endpoints and judge settings ----------------------------------------------------------

ENDPOINT_FIELDS = (
    "name", "base_url", "api_key_env", "max_concurrency", "requests_per_minute", "tokens_per_minute",
    "timeout_seconds", "max_attempts",
)
CONFIG_FIELDS = (
    "kind", "endpoint", "model", "temperature", "max_tokens", "reasoning_effort", "samples", "aggregate",
    "system_prompt", "prompt_template", "extra_body", "parse_retries", "price_input_per_1k",
    "price_output_per_1k", "notes", "answer_tolerance", "second_opinion", "approximate_answers",
    # issue 27: prompt strategies, few-shot calibration, prompt sets (grading/judges/strategies.py)
    "strategy", "strategy_version", "few_shot_k", "split_rule", "few_shot_seed", "few_shot_comments",
    "calibration", "prompt_set",
)


def save_endpoint(endpoint: LlmEndpoint | None = None, **fields) -> LlmEndpoint:
    """Create or change an endpoint (admins only: it says where keys are sent). Limits may change
    at any time: they do not change results. The key variable and host must be allowed
    (LlmEndpoint.clean); a key variable that is allowed but not set saves, see `endpoint_warnings`."""
    endpoint = endpoint or LlmEndpoint()
    for name, value in fields.items():
        if name not in ENDPOINT_FIELDS:
            raise ValidationError(gettext("Unknown endpoint field %(name)s.") % {"name": name})
        setattr(endpoint, name, value)
    endpoint.full_clean()
    endpoint.save()
    return endpoint


def find_or_create_endpoint(base_url: str, api_key_env: str) -> LlmEndpoint:
    """The endpoint for (base URL, key variable): the oldest existing one with exactly these two
    values (its limits kept as they are), else a new one with the default limits, named after the
    URL's host and port and the key variable ("127.0.0.1:8001 (no key)"), made unique with a
    number. Validated as the endpoint page validates (LlmEndpoint.clean: host and key variable
    allow-lists); the scripted setup (manage.py judge_setting add) uses it."""
    base_url = (base_url or "").strip()
    api_key_env = (api_key_env or "").strip()
    existing = LlmEndpoint.objects.filter(base_url=base_url, api_key_env=api_key_env).order_by("pk").first()
    if existing is not None:
        return existing
    problem = access.url_problem(base_url)
    if problem:
        raise ValidationError({"base_url": problem})
    parts = urlsplit(base_url)
    stem = f"{parts.hostname}{f':{parts.port}' if parts.port else ''} ({api_key_env or 'no key'})"[:90]
    name, number = stem, 1
    while LlmEndpoint.objects.filter(name=name).exists():
        number += 1
        name = f"{stem} {number}"
    return save_endpoint(name=name, base_url=base_url, api_key_env=api_key_env)


def test_endpoint(endpoint: LlmEndpoint):
    """"Test connection": {"models": [...]} when the endpoint answers, else why not, in words
    (a host outside the allow-list is refused before any request; the key is never in the answer)."""
    return llm.check_connection(endpoint_spec(endpoint))


def endpoint_warnings(endpoint: LlmEndpoint) -> list[str]:
    """Why runs on a saved endpoint would be refused from this process right now (empty: none)."""
    if not (endpoint.base_url or settings.OPENAI_BASE_URL):
        return ["No base URL, and OPENAI_BASE_URL is not set: runs on this endpoint will be refused."]
    try:
        llm.check_endpoint(endpoint_spec(endpoint))
    except llm.MissingApiKey:
        return [
            f"The API key variable {endpoint.api_key_env} is not set in the web server's environment (nor as a "
            "mounted secret): runs on this endpoint will be refused until it is set where the web server and "
            "the workers run. Leave the variable blank if the server needs no key."
        ]
    except llm.EndpointUnusable as exc:
        return [str(exc)]
    return []


def setting_is_used(config: JudgeSetting) -> bool:
    """A setting that has produced results or runs is frozen: every result names what made it."""
    return config.results.exists() or config.runs.exists()


def _check_config(config):
    unknown = prompts.unknown_placeholders(config.prompt_template) + prompts.unknown_placeholders(
        config.system_prompt
    )
    if unknown:
        raise ValidationError({"prompt_template": f"Unknown placeholders: {', '.join(unknown)}."})
    if config.kind not in (JudgeSetting.Kind.CAS_FINAL_ANSWER, JudgeSetting.Kind.EXTERNAL):
        errors = {}
        if config.endpoint_id is None:
            errors["endpoint"] = "This kind of judge calls an LLM: choose an endpoint."
        if not config.model:
            errors["model"] = "Name the model to call."
        if errors:
            raise ValidationError(errors)
    if not isinstance(config.extra_body, dict):
        raise ValidationError({"extra_body": "Give a JSON object."})
    config.full_clean(validate_unique=False)


def create_judge_setting(*, name: str, user=None, **fields) -> JudgeSetting:
    """A new setting (version 1). The name must be new; edit an existing setting instead."""
    if JudgeSetting.objects.filter(name=name).exists():
        raise ValidationError({"name": f"A setting named {name!r} exists; edit it to make a new version."})
    config = JudgeSetting(name=name, version=1, created_by=user)
    _apply_config_fields(config, fields)
    _check_config(config)
    _apply_strategy(config)
    config.save()
    return config


def update_judge_setting(config: JudgeSetting, *, user=None, **fields) -> JudgeSetting:
    """Change a setting: in place while unused, else as a new version (returned).

    Imported (external) settings describe results made elsewhere and are never changed."""
    if config.kind == JudgeSetting.Kind.EXTERNAL:
        raise ValidationError(gettext("Imported settings describe results made elsewhere and cannot be edited or versioned."))
    if not _calls_llm(fields.get("kind", config.kind)) and "temperature" in fields:
        fields = {**fields, "temperature": None}  # ignored by the kind: never a reason for a new version
    changed = {k: v for k, v in fields.items() if getattr(config, k) != v}
    if not changed:
        return config
    if not setting_is_used(config):
        _apply_config_fields(config, changed)
        _check_config(config)
        _apply_strategy(config, recalibrate=True)
        config.save()
        return config
    with transaction.atomic():
        latest = JudgeSetting.objects.filter(name=config.name).aggregate(v=Max("version"))["v"] or config.version
        new = JudgeSetting(name=config.name, version=latest + 1, previous=config, created_by=user)
        for name in CONFIG_FIELDS:
            setattr(new, name, getattr(config, name))
        _apply_config_fields(new, changed)
        _check_config(new)
        _apply_strategy(new, recalibrate=bool(set(changed) & strategies_calibration_fields()))
        new.save()
    return new


def strategies_calibration_fields():
    return {"strategy", "few_shot_k", "split_rule", "few_shot_seed", "few_shot_comments"}


def _apply_strategy(config, recalibrate=False):
    """Issue 27: a strategy's template becomes the prompt of a rubric setting that left it blank
    (recorded with its version); a few-shot setting's examples are chosen (or kept) and recorded."""
    from . import calibration  # noqa: PLC0415

    if config.kind != JudgeSetting.Kind.RUBRIC:
        config.strategy = config.strategy or strategies.DEFAULT
        if config.kind != JudgeSetting.Kind.REPLAY:
            config.prompt_set = None
        return
    config.prompt_set = None
    strategy = strategies.get(config.strategy)
    config.strategy = strategy.key
    stock = {s.template for s in strategies.STRATEGIES.values() if s.template}
    if config.prompt_template in stock and config.prompt_template != strategy.template:
        config.prompt_template = ""  # another strategy's unedited template: take this strategy's
        config.system_prompt = "" if config.system_prompt == prompts.RUBRIC_SYSTEM else config.system_prompt
    if not config.prompt_template and strategy.template:
        config.system_prompt = config.system_prompt or strategy.system
        config.prompt_template = strategy.template
        config.strategy_version = strategy.version
    if strategy.key != strategies.FEW_SHOT:
        config.calibration = {}
        return
    if "{{ examples }}" not in (config.prompt_template or "").replace("{{examples}}", "{{ examples }}"):
        raise ValidationError({"prompt_template": "A few-shot prompt must hold the {{ examples }} placeholder."})
    if recalibrate or not (config.calibration or {}).get("examples"):
        try:
            config.calibration = calibration.choose_examples(
                k=config.few_shot_k, rule=config.split_rule or "student", seed=config.few_shot_seed,
                comments=config.few_shot_comments)
        except calibration.CalibrationError as exc:
            raise ValidationError({"split_rule": str(exc)}) from exc
        if not config.calibration["examples"]:
            raise ValidationError({"strategy": "No answer with a gold score qualifies as a few-shot example under "
                                               "this split rule: import or adjudicate gold scores first."})


def _apply_config_fields(config, fields):
    for name, value in fields.items():
        if name not in CONFIG_FIELDS:
            raise ValidationError(gettext("Unknown setting field %(name)s.") % {"name": name})
        setattr(config, name, value)
    if not _calls_llm(config.kind):
        config.temperature = None  # a kind that calls no LLM has no temperature to record


def _calls_llm(kind):
    """Whether a kind of judge calls an LLM (imported results: unknown, kept as the file said)."""
    judge = KINDS.get(kind)
    return judge is None or judge.uses_llm


def judge_spec(config: JudgeSetting) -> JudgeSpec:
    return JudgeSpec(
        kind=config.kind,
        model=config.model,
        temperature=config.temperature,
        max_tokens=config.max_tokens,
        reasoning_effort=config.reasoning_effort,
        samples=config.samples,
        aggregate=config.aggregate,
        system_prompt=config.system_prompt,
        prompt_template=config.prompt_template,
        extra_body=dict(config.extra_body or {}),
        parse_retries=config.parse_retries,
        answer_tolerance=config.answer_tolerance,
        second_opinion=config.second_opinion,
        approximate_answers=config.approximate_answers,
    )


def endpoint_spec(endpoint: LlmEndpoint) -> llm.EndpointSpec:
    return llm.EndpointSpec(
        key=f"endpoint:{endpoint.pk}",
        base_url=endpoint.base_url or settings.OPENAI_BASE_URL,
        api_key_env=endpoint.api_key_env,
        timeout=endpoint.timeout_seconds,
        max_attempts=endpoint.max_attempts,
        max_concurrency=endpoint.max_concurrency,
        requests_per_minute=endpoint.requests_per_minute,
        tokens_per_minute=endpoint.tokens_per_minute,
    )


def check_endpoint_usable(endpoint: LlmEndpoint) -> None:
    """Refuse a run whose endpoint cannot be called from here (no URL, host or key not allowed, key unset)."""
    if not (endpoint.base_url or settings.OPENAI_BASE_URL):
        raise RunRefused(gettext("Endpoint %(endpoint)s has no base URL and OPENAI_BASE_URL is not set.") % {"endpoint": endpoint})
    try:
        llm.check_endpoint(endpoint_spec(endpoint))
    except llm.MissingApiKey as exc:
        raise RunRefused(f"{exc} {llm.MISSING_KEY_HINT}") from exc
    except llm.EndpointUnusable as exc:
        raise RunRefused(gettext("Endpoint %(endpoint)s: %(exc)s") % {"endpoint": endpoint, "exc": exc}) from exc


# --- judge inputs and cache keys -----------------------------------------------------------

def judge_input(response: Response) -> JudgeInput:
    question = response.question
    return JudgeInput(
        response_id=response.pk,
        problem=question.statement,
        reference=question.reference_solution,
        response=response.transcript,
        full_score=float(question.full_score),
        question_kind=question.kind,
        gold_answer=question.gold_answer,
        choices=tuple(str(c) for c in (question.choices or [])),
        judge_query=response.judge_query,
        sub_questions=tuple(
            (sub.label, None if sub.max_points is None else float(sub.max_points))
            for sub in sorted(question.sub_questions.all(), key=lambda sub: (sub.order, sub.pk))
        ) if question.kind == question.Kind.RUBRIC else (),
        rubric_version=question.rubric_version,
    )


def cache_key(config: JudgeSetting, fingerprint: str, rubric_version: int | None = None) -> str:
    """Hash of (setting version, everything the judge is shown about the response, and the
    question's rubric version once its rubric has been edited). Version 1 adds nothing, so the
    keys of questions never edited are those made before rubrics had versions; an edit always
    changes the key (even for a prompt that does not show the reference), so a re-judge calls."""
    digest = hashlib.sha256(f"{config.pk}:{config.name}:{config.version}\n".encode())
    if rubric_version and rubric_version > 1:
        digest.update(f"rubric-version:{rubric_version}\n".encode())
    digest.update(fingerprint.encode("utf-8"))
    return digest.hexdigest()


def input_cache_key(config: JudgeSetting, kind, spec: JudgeSpec, the_input: JudgeInput) -> str:
    """The cache key of one judge input under a setting (what runs claim results by)."""
    return cache_key(config, kind.fingerprint(spec, the_input), the_input.rubric_version)


# --- judge runs ----------------------------------------------------------------------------

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
    queryset = Response.objects.all()
    if response_ids is not None:
        queryset = queryset.filter(pk__in=list(response_ids))
    queryset = filter_responses(queryset, params or {}).order_by("question_id", "id")
    holdout = strategies.holdout_ids(config)  # few-shot examples / prompt-set hold-outs: never judged
    if holdout:
        queryset = queryset.exclude(pk__in=holdout)
    ids = list(queryset.values_list("pk", flat=True))
    if not ids:
        raise RunRefused(gettext("No response matches this selection."))
    chunk_size = chunk_size or _default_chunk_size(config)
    with transaction.atomic():
        run = JudgeRun.objects.create(
            config=config, selection=clean_params(params), n_items=len(ids), chunk_size=chunk_size,
            created_by=user, note=note[:300],
        )
        JudgeRunItem.objects.bulk_create((JudgeRunItem(run=run, response_id=pk) for pk in ids), batch_size=500)
        if enqueue:
            JUDGE_RUNS.enqueue_on_commit(run)
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
    chunk_task="grading.judges.tasks.run_judge_chunk",
    open_ids=lambda run: list(
        run.items.filter(state__in=OPEN_ITEM_STATES).order_by("id").values_list("pk", flat=True)
    ),
    nothing_left=lambda run_id: not JudgeRunItem.objects.filter(run_id=run_id, state=JudgeRunItem.State.PENDING).exists(),
    on_resume=runs.reopen_failed_items,
    name="grading.judges.services.JUDGE_RUNS",
    last_activity=lambda run: JudgeResult.objects.filter(run=run).aggregate(last=Max("finished"))["last"],
    endpoint_of=lambda run: run.config.endpoint,
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


def run_inline(run: JudgeRun, *, complete: Callable | None = None) -> JudgeRun:
    """Do a run's open work in this process, chunk after chunk (no Celery worker needed).

    `complete` stands in for the LLM client's ``complete`` (the demo's scripted model)."""
    return JUDGE_RUNS.run_inline(run, process_judge_chunk, complete=complete)


def may_take_over(claim_owner: str, claimed_at: datetime | None, **kwargs) -> bool:
    """`grading.runs.may_take_over` for judge results, which runs share: a claim of another
    run counts only while that run is live in that epoch."""
    return runs.may_take_over(claim_owner, claimed_at, other_run_live=JUDGE_RUNS.is_live, **kwargs)


@dataclass
class _Job:
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
    run = JUDGE_RUNS.live_run(run_id, epoch, select_related=["config__endpoint"])
    if run is None:
        report.skipped = len(item_ids)
        return report
    config = run.config
    kind, spec = get_kind(config.kind), judge_spec(config)
    owner = owner_tag(run.pk, epoch, task_id)
    lease = lease_for(config.endpoint, config.samples, config.parse_retries)
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
    config = run.config
    call = make_caller(config.endpoint, spec, complete)
    width = max(1, config.endpoint.max_concurrency if (kind.uses_llm and config.endpoint) else CAS_THREADS)
    queue = deque((item, None) for item in items)  # inputs are built as items start: calls begin at once
    ready = deque()  # claimed, waiting for a free slot
    waiting, in_flight, deferred = {}, {}, []
    live, checked = True, time.monotonic()
    pool, handed_over = llm.call_pool(), False
    try:
        while in_flight or ((queue or ready) and live):
            if hand_over_tail and in_flight and (not live or not (queue or waiting or ready)):
                TAILS.take(run, epoch, in_flight, owner)  # nothing left to start here
                handed_over = True
                break
            if live and len(in_flight) < width:
                if not ready and queue:
                    ready.extend(_claim_ahead(run, kind, spec, queue, waiting, in_flight, width, owner, task_id,
                                              lease, report, deferred))
                while ready and len(in_flight) < width:
                    item, the_input, claimed = ready.popleft()
                    in_flight[pool.submit(kind.evaluate, spec, the_input, call)] = _Job(item, claimed, the_input)
            if not in_flight:
                if (queue or ready) and live:
                    continue
                break
            done, _ = wait(list(in_flight), timeout=CANCEL_CHECK_SECONDS, return_when=FIRST_COMPLETED)
            finished = [(in_flight.pop(future), _outcome_of(future)) for future in done]
            _record_many(run, config, finished, owner)
            report.recorded += len(finished)
            for job, _ in finished:
                queue.extendleft(reversed(waiting.pop(job.result.cache_key, [])))
            if time.monotonic() - checked >= CANCEL_CHECK_SECONDS:
                live, checked = JUDGE_RUNS.is_live(run.pk, epoch), time.monotonic()
    finally:
        if in_flight and not handed_over:  # an error stopped the chunk: its calls end first, as before
            wait(list(in_flight))
        _drop_unstarted_claims(ready, owner)
    return deferred, handed_over


def _claim_ahead(run, kind, spec, queue, waiting, in_flight, width, owner, task_id, lease, report, deferred):
    """Claim the next items of `queue` in one batch: the free slots' worth, and at least half the
    width, so that the slots freed one by one over the next moments start without a query each.
    Returns [(item, input, claimed row)]; items whose content is being judged wait in `waiting`.
    """
    wanted = max(width - len(in_flight), width // 2, 1)
    busy = {job.result.cache_key for job in in_flight.values()}
    batch = []
    while queue and len(batch) < wanted:
        item, the_input = queue.popleft()
        the_input = the_input or strategies.prepare(run.config, judge_input(item.response), item.response)
        key = input_cache_key(run.config, kind, spec, the_input)
        if key in busy:
            waiting.setdefault(key, []).append((item, the_input))
            continue
        busy.add(key)
        batch.append((item, the_input, key))
    claimed_now = []
    for item, the_input, key, claimed in _claim_batch(run, batch, owner, task_id, lease, report):
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


class _Tails:
    """Calls a chunk task left in flight when it returned, recorded by threads of this process.

    Each hand-over gets a thread that writes the answers as they come back (under the same
    claim checks as the chunk) and then finishes the run if nothing is left. `finish` waits
    for them all: a worker process calls it before it exits.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._threads = set()

    def take(self, run, epoch, in_flight, owner):
        thread = threading.Thread(target=self._record, args=(run, epoch, dict(in_flight), owner),
                                  name=f"judge-tail-{run.pk}", daemon=True)
        with self._lock:
            self._threads.add(thread)
        thread.start()

    def _record(self, run, epoch, in_flight, owner):
        try:
            pending = set(in_flight)
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                _record_many(run, run.config, [(in_flight[f], _outcome_of(f)) for f in done], owner)
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


def _claim_batch(run, batch, owner, task_id, lease, report):
    """Claim (or answer from the cache) a batch of (item, input, key): new claims in one insert.

    Yields (item, input, key, claimed) with claimed a result row, None or "deferred".
    """
    if not batch:
        return []
    config = run.config
    rows = {}
    for row in JudgeResult.objects.filter(config=config, cache_key__in={key for _, _, key in batch}).order_by("id"):
        rows.setdefault(row.cache_key, []).append(row)
    out, fresh, links = [], [], []
    for item, the_input, key in batch:
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
            JudgeResult(config=config, response_id=item.response_id, cache_key=key, run=run,
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
    _executemany(JudgeRunItem, ["state", "result", "cached", "cache_key"], rows)


def _executemany(model, fields, rows, where="id"):
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
    config = run.config
    rows = list(JudgeResult.objects.filter(config=config, cache_key=key).order_by("id"))
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
                    config=config, response_id=item.response_id, cache_key=key, run=run,
                    status=JudgeResult.Status.RUNNING, claim_owner=owner, claimed_at=timezone.now(),
                    rubric_version=item.response.question.rubric_version,
                )
        except IntegrityError:
            own = JudgeResult.objects.get(config=config, response_id=item.response_id, cache_key=key)
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
        config_id=donor.config_id, response_id=item.response_id, run=run, cache_key=donor.cache_key,
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
    call_spec = llm.CallSpec(
        model=spec.model, temperature=spec.temperature, max_tokens=spec.max_tokens,
        reasoning_effort=spec.reasoning_effort, extra_body=spec.extra_body,
    )
    limiter = llm.limiter_for(target)
    complete = complete or llm.complete

    def call(messages):
        return complete(target, call_spec, messages, limiter=limiter)

    return call


def _outcome_of(future):
    try:
        return future.result()
    except Exception as exc:  # kinds catch their own errors; this is the last line of defence
        return Outcome("error", parse_status="exception", errors=[{"kind": "exception", "message": str(exc)[:500]}])


def _cost(config, prompt_tokens, completion_tokens):
    return (
        Decimal(prompt_tokens) * config.price_input_per_1k + Decimal(completion_tokens) * config.price_output_per_1k
    ) / Decimal(1000)


RESULT_FIELDS = [
    "status", "score", "spread", "rationale", "raw_output", "parse_status", "step_verdicts", "samples",
    "prompt_tokens", "completion_tokens", "cost", "latency_ms", "attempts", "errors", "finished", "run",
    "sub_scores",
]


def _record_many(run, config, finished, owner):
    """Write answers that came back, in one transaction; only where this worker still owns the claim."""
    if not finished:
        return
    now = timezone.now()
    rows = [
        (
            outcome.status, outcome.score, outcome.spread, outcome.rationale, outcome.raw_output,
            outcome.parse_status, outcome.step_verdicts, outcome.samples, outcome.prompt_tokens,
            outcome.completion_tokens, _cost(config, outcome.prompt_tokens, outcome.completion_tokens),
            outcome.latency_ms, outcome.attempts, outcome.errors, now, run.pk, outcome.sub_scores,
            job.result.pk, owner,
        )
        for job, outcome in finished
    ]
    with transaction.atomic():
        written = _executemany(JudgeResult, RESULT_FIELDS, rows, where="id,claim_owner")
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
            JudgeResult.objects.filter(config=run.config, response_id=item.response_id, cache_key=key)
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
