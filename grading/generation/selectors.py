"""Read-side queries of generation runs: the list, a run's page and its progress."""
from __future__ import annotations

from decimal import Decimal

from django.db.models import Count, Max, Q, QuerySet, Sum
from django.utils import timezone

from ..runs import engine as runs
from .models import GenerationItem, GenerationRun


def generation_run_list() -> QuerySet[GenerationRun]:
    states = GenerationItem.State
    return (
        GenerationRun.objects.select_related("endpoint", "created_by")
        .annotate(
            n_done=Count("items", filter=~Q(items__state=states.PENDING)),
            n_error=Count("items", filter=Q(items__state=states.ERROR)),
        )
        .order_by("-created")
    )


def generation_runs_for_detail() -> QuerySet[GenerationRun]:
    return GenerationRun.objects.select_related("endpoint", "created_by")


def generation_progress(run: GenerationRun) -> dict:
    counts = dict(run.items.values_list("state").annotate(n=Count("id")).values_list("state", "n"))
    totals = run.items.aggregate(
        prompt=Sum("prompt_tokens"), completion=Sum("completion_tokens"), cost=Sum("cost"), latency=Sum("latency_ms"),
        answered=Count("id", filter=Q(latency_ms__isnull=False)), last=Max("finished"),
    )
    end = run.finished or timezone.now()
    last = max(filter(None, (totals["last"], run.resumed)), default=None)
    stalled = runs.stalled(run.status, last, run.resumed or run.created)
    return {
        **runs.progress_head(run, counts.get(GenerationItem.State.PENDING, 0)),
        "ok": counts.get(GenerationItem.State.OK, 0),
        "error": counts.get(GenerationItem.State.ERROR, 0),
        "prompt_tokens": totals["prompt"] or 0,
        "completion_tokens": totals["completion"] or 0,
        "cost": str((totals["cost"] or Decimal(0)).quantize(Decimal("0.0001"))),
        "latency_ms_mean": round(totals["latency"] / totals["answered"]) if totals["answered"] else None,
        "elapsed_s": runs.elapsed_seconds(run, end),
        "last_activity": totals["last"].isoformat() if totals["last"] else None,
        "stalled": stalled,
        "can_cancel": run.status == GenerationRun.Status.RUNNING,
        "can_resume": run.status == GenerationRun.Status.CANCELLED or stalled
        or (run.status == GenerationRun.Status.DONE and counts.get(GenerationItem.State.ERROR, 0) > 0),
    }


def generation_items(run: GenerationRun) -> QuerySet[GenerationItem]:
    return run.items.select_related("question", "response").order_by("id")
