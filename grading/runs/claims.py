"""Claims: how a worker takes a piece of a run's work so that no other worker does it too.

A claim is an owner tag ``run:epoch:task`` (`owner_tag`) and the time it was taken, written on the
piece of work by a compare-and-swap on its old owner; it holds for a lease (`lease_for`) and may be
taken over sooner only when its owner is known to be gone (`may_take_over`). `claim_each` is the
one claim loop of generation, probe and geometry runs (judge runs claim results shared between
runs: grading.judges.services.chunks); `release` gives unstarted work back.
"""
from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from django.utils import timezone


def owner_tag(run_id: int, epoch: int, task_id: str) -> str:
    return f"{run_id}:{epoch}:{task_id}"


def lease_for(endpoint, samples: int = 1, retries: int = 0) -> timedelta:
    """How long a claim holds before another worker may take the work over."""
    if endpoint is None:
        return timedelta(minutes=10)
    per_call = endpoint.timeout_seconds * endpoint.max_attempts + 120
    return timedelta(seconds=per_call * max(1, samples) * (1 + retries) + 60)


def may_take_over(
    claim_owner: str, claimed_at: datetime | None, *, run_id: int, epoch: int, task_id: str, lease: timedelta,
    now: datetime | None = None, other_run_live: Callable | None = None,
) -> bool:
    """Whether a running claim by `claim_owner` may be taken by task `task_id` of run:epoch.

    `other_run_live(run_id, epoch)` tells whether a claim of another run still counts (work shared
    between runs, as judge results are); without it a claim of another run is left to its lease.
    """
    parts = (claim_owner or "").split(":")
    if len(parts) != 3:
        return True
    owner_run, owner_epoch, owner_task = parts
    if owner_task == str(task_id):
        return True  # the broker redelivered this very task: its first delivery died
    if owner_run == str(run_id) and owner_epoch != str(epoch):
        return True  # this run was resumed since
    if owner_run != str(run_id) and other_run_live is not None:
        if not (owner_run.isdigit() and owner_epoch.isdigit() and other_run_live(int(owner_run), int(owner_epoch))):
            return True  # the other run stopped or moved on
    return claimed_at is None or claimed_at < (now or timezone.now()) - lease


def claim_each(items, open_items, *, run_id: int, epoch: int, task_id: str, owner: str, lease: timedelta,
               prefix: str = "") -> list:
    """The `items` this task now owns, in order: each one free, or whose claim may be taken over,
    is claimed by a compare-and-swap on its old owner within `open_items` (the queryset of work
    still open: work another worker finished meanwhile is not taken). `prefix` is what the
    owner tags of this kind of work begin with before ``run:epoch:task`` (generation: "gen")."""
    claimed, now = [], timezone.now()
    for item in items:
        current = item.claim_owner
        if current and not may_take_over(current.removeprefix(prefix), item.claimed_at, run_id=run_id, epoch=epoch,
                                         task_id=task_id, lease=lease):
            continue
        if open_items.filter(pk=item.pk, claim_owner=current).update(claim_owner=owner, claimed_at=now):
            claimed.append(item)
    return claimed


def release(model, items, owner: str) -> int:
    """Give back the claims `owner` holds on `items` (work never started, e.g. after a cancel)."""
    return model.objects.filter(pk__in=[item.pk for item in items], claim_owner=owner).update(
        claim_owner="", claimed_at=None)
