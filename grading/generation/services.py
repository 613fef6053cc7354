"""Synthetic answers: a generation run asks LLMs to answer questions like students would.

A run plans one item per question x model x temperature x index and is worked through in Celery
chunk tasks with the same claim, epoch and resume rules as a judge run (see
grading.judges.services); each written answer becomes a synthetic Response.
"""
from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

from django.db import transaction
from django.db.models import Count, Max, QuerySet
from django.utils import timezone
from django.utils.translation import gettext

import llm
from annotation.models import Question, Response, content_hash
from core.ids import filter_by_id
from egress import purposes

from ..judges import prompts
from ..judges.models import LlmEndpoint
from ..judges.services import RunRefused, check_endpoint_usable, clean_params, endpoint_spec
from ..runs import claims
from ..runs.claims import lease_for, owner_tag
from ..runs.engine import ChunkReport, RunEngine, call_each, reopen_failed_items
from . import tasks
from .models import GenerationItem, GenerationRun
from .prompts import ANSWER_FORMATS, GENERATION_SYSTEM, GENERATION_TEMPLATE

GENERATION_OPEN_STATES = (GenerationItem.State.PENDING, GenerationItem.State.ERROR)
GENERATION_RUNS = RunEngine(
    run_model=GenerationRun,
    chunk_task=tasks.run_generation_chunk_task,
    open_ids=lambda run: list(
        run.items.filter(state__in=GENERATION_OPEN_STATES).order_by("id").values_list("pk", flat=True)
    ),
    nothing_left=lambda run_id: not GenerationItem.objects.filter(
        run_id=run_id, state=GenerationItem.State.PENDING
    ).exists(),
    on_resume=reopen_failed_items,
    name="grading.generation.services.GENERATION_RUNS",
    last_activity=lambda run: run.items.aggregate(last=Max("finished"))["last"],
    endpoint_of=lambda run: run.endpoint,
)


def start_generation_run(
    *, endpoint: LlmEndpoint, models: list[str], temperatures: list[float], per_cell: int = 1,
    questions: QuerySet[Question] | None = None, params=None, prompt_template: str = "",
    system_prompt: str | None = None, max_tokens: int = 4096, user=None, name: str = "", price_input_per_1k=0,
    price_output_per_1k=0, chunk_size: int | None = None, enqueue: bool = True,
) -> GenerationRun:
    """Plan one synthetic answer per question × model × temperature × index and queue the run."""
    models = [m.strip() for m in models if m and m.strip()]
    temperatures = [float(t) for t in temperatures]
    if not models or not temperatures:
        raise RunRefused(gettext("Give at least one model and one temperature."))
    if any(t < 0 or t > 2 for t in temperatures):
        raise RunRefused(gettext("Temperatures lie between 0 and 2."))
    check_endpoint_usable(endpoint)
    question_qs = questions if questions is not None else question_selection(params or {})
    question_ids = list(question_qs.order_by("id").values_list("pk", flat=True))
    if not question_ids:
        raise RunRefused(gettext("No question matches this selection."))
    template = prompt_template or GENERATION_TEMPLATE
    unknown = prompts.unknown_placeholders(template)
    if unknown:
        raise RunRefused(gettext("Unknown placeholders in the prompt: %(join)s.") % {"join": ', '.join(unknown)})
    with transaction.atomic():
        run = GenerationRun.objects.create(
            name=name[:200], endpoint=endpoint, model_names=models, temperatures=temperatures, per_cell=per_cell,
            system_prompt=GENERATION_SYSTEM if system_prompt is None else system_prompt,
            prompt_template=template, max_tokens=max_tokens, selection=clean_params(params),
            price_input_per_1k=Decimal(str(price_input_per_1k)), price_output_per_1k=Decimal(str(price_output_per_1k)),
            chunk_size=chunk_size or max(4, min(32, endpoint.max_concurrency)), created_by=user,
        )
        next_index = _next_generation_indexes(question_ids, models, temperatures)
        items = []
        for question_id in question_ids:
            for model in models:
                for temperature in temperatures:
                    first = next_index.get((question_id, model, temperature), 0)
                    for offset in range(per_cell):
                        index = first + offset
                        items.append(
                            GenerationItem(
                                run=run, question_id=question_id, model=model, temperature=temperature, index=index,
                                student_id=synthetic_student_id(model, temperature, index),
                            )
                        )
        GenerationItem.objects.bulk_create(items, batch_size=500)
        run.n_items = len(items)
        run.save(update_fields=["n_items"])
        if enqueue:
            GENERATION_RUNS.enqueue_on_commit(run)
    return run


def run_generation_inline(run: GenerationRun, *, complete: Callable | None = None) -> GenerationRun:
    """Write a generation run's missing answers in this process (no Celery worker needed);
    `complete` stands in for the LLM client's ``complete`` (the demo's scripted model)."""
    return GENERATION_RUNS.run_inline(run, process_generation_chunk, complete=complete)


def synthetic_student_id(model: str, temperature: float, index: int) -> str:
    """`<model>_t_<temperature>_<n>`, as in the RealMath-Eval release."""
    return f"{model}_t_{float(temperature):g}_{index}"


def question_selection(params) -> QuerySet[Question]:
    queryset = Question.objects.all()
    queryset = filter_by_id(queryset, "pk", params.get("question"))
    queryset = filter_by_id(queryset, "exam_id", params.get("exam"))
    if params.get("kind") in Question.Kind.values:
        queryset = queryset.filter(kind=params["kind"])
    if params.get("level") in ("low", "high"):
        queryset = queryset.filter(level=params["level"])
    return queryset


def _next_generation_indexes(question_ids, models, temperatures):
    """Per (question, model, temperature): the first free answer index (planned or written)."""
    nxt = {}
    planned = (
        GenerationItem.objects.filter(question_id__in=question_ids, model__in=models)
        .values("question_id", "model", "temperature")
        .annotate(top=Max("index"))
    )
    for row in planned:
        key = (row["question_id"], row["model"], row["temperature"])
        nxt[key] = max(nxt.get(key, 0), row["top"] + 1)
    written = (
        Response.objects.filter(
            question_id__in=question_ids, source=Response.Source.SYNTHETIC, generator_model__in=models
        )
        .values("question_id", "generator_model", "generator_temperature")
        .annotate(n=Count("id"))
    )
    for row in written:
        key = (row["question_id"], row["generator_model"], row["generator_temperature"])
        nxt[key] = max(nxt.get(key, 0), row["n"])
    return {k: v for k, v in nxt.items() if k[2] in temperatures}


def enqueue_generation_run(run_id: int, epoch: int) -> int:
    return GENERATION_RUNS.enqueue(run_id, epoch)


def cancel_generation_run(run: GenerationRun) -> GenerationRun:
    return GENERATION_RUNS.cancel(run)


def resume_generation_run(run: GenerationRun, *, enqueue: bool = True) -> GenerationRun:
    return GENERATION_RUNS.resume(run, enqueue=enqueue)


def generation_messages(run: GenerationRun, question: Question) -> list[dict]:
    values = {
        "problem": question.statement,
        "choices": ("Options:\n" + "\n".join(str(c) for c in question.choices) + "\n") if question.choices else "",
        "answer_format": ANSWER_FORMATS.get(question.kind, ANSWER_FORMATS["rubric"]),
        "full_score": str(question.full_score),
    }
    messages = [{"role": "system", "content": run.system_prompt}] if run.system_prompt else []
    messages.append({"role": "user", "content": prompts.render(run.prompt_template, values)})
    return messages


def process_generation_chunk(run_id: int, epoch: int, item_ids: list[int], task_id: str | None = None,
                             complete: Callable | None = None) -> ChunkReport:
    """Write the synthetic answers of the given items (the body of the Celery chunk task)."""
    run, task_id, report = GENERATION_RUNS.open_chunk(run_id, epoch, item_ids, task_id, select_related=["endpoint"])
    if run is None:
        return report
    owner = f"gen{owner_tag(run.pk, epoch, task_id)}"
    lease = lease_for(run.endpoint)
    target = endpoint_spec(run.endpoint)
    limiter = llm.limiter_for(target)
    complete = complete or llm.complete
    items = list(
        GenerationItem.objects.filter(
            run=run, pk__in=item_ids, state__in=GENERATION_OPEN_STATES
        ).select_related("question")
    )
    claimed = claims.claim_each(items, GenerationItem.objects.filter(state__in=GENERATION_OPEN_STATES), run_id=run.pk,
                                epoch=epoch, task_id=task_id, owner=owner, lease=lease, prefix="gen")
    report.claimed = len(claimed)

    def generate(item):
        call = llm.CallSpec(model=item.model, temperature=item.temperature, max_tokens=run.max_tokens)
        messages = generation_messages(run, item.question)
        try:
            return messages, complete(target, call, messages, limiter=limiter)
        except llm.LlmCallFailed as exc:
            return messages, exc
        except Exception as exc:  # never let one answer stop the others
            return messages, llm.LlmCallFailed(str(exc), errors=[{"kind": "exception", "message": str(exc)[:500]}], attempts=0)

    def record(item, value):
        if isinstance(value, Exception):  # generate catches its own errors: the last line of defence
            value = ([], llm.LlmCallFailed(str(value), errors=[{"kind": "exception", "message": str(value)[:500]}],
                                           attempts=0))
        _record_generation(run, item, *value, owner)
        report.recorded += 1

    unstarted = call_each(claimed, llm.with_label(generate, purposes.GENERATION), record, width=min(len(claimed), run.endpoint.max_concurrency),
                          is_live=lambda: GENERATION_RUNS.is_live(run.pk, epoch))
    if unstarted:  # cancelled meanwhile: give the claims back
        report.released = claims.release(GenerationItem, unstarted, owner)
    GENERATION_RUNS.finish_if_complete(run.pk, epoch)
    return report


def _record_generation(run, item, messages, answer, owner):
    now = timezone.now()
    if isinstance(answer, llm.LlmCallFailed):
        GenerationItem.objects.filter(pk=item.pk, claim_owner=owner).update(
            state=GenerationItem.State.ERROR, errors=answer.errors, attempts=answer.attempts,
            latency_ms=answer.latency_ms, finished=now,
        )
        return
    text = answer.text.strip()
    fields = {
        "prompt_tokens": answer.prompt_tokens, "completion_tokens": answer.completion_tokens,
        "cost": (Decimal(answer.prompt_tokens) * run.price_input_per_1k
                 + Decimal(answer.completion_tokens) * run.price_output_per_1k) / Decimal(1000),
        "latency_ms": answer.latency_ms, "attempts": answer.attempts, "errors": answer.errors, "finished": now,
    }
    if not text:
        fields["errors"] = answer.errors + [{"kind": "empty", "message": "The model returned no text."}]
        GenerationItem.objects.filter(pk=item.pk, claim_owner=owner).update(state=GenerationItem.State.ERROR, **fields)
        return
    prompt_text = "\n\n".join(f"[{m['role']}]\n{m['content']}" for m in messages)
    with transaction.atomic():
        if not GenerationItem.objects.filter(pk=item.pk, claim_owner=owner).update(**fields):
            return  # another worker took this item over; its answer counts
        response, _ = Response.objects.get_or_create(
            question_id=item.question_id, student_id=item.student_id, transcript_hash=content_hash(text),
            defaults={
                "source": Response.Source.SYNTHETIC, "transcript": text, "generator_model": item.model,
                "generator_temperature": item.temperature, "generator_prompt": prompt_text,
                "extra": {"generation_run": run.pk, "generation_item": item.pk},
            },
        )
        GenerationItem.objects.filter(pk=item.pk).update(state=GenerationItem.State.OK, response=response)
