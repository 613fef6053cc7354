"""Read-side queries of judges: settings, runs and their progress, results per response."""
from __future__ import annotations

import hashlib
import re
import statistics
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.db.models import Count, Exists, Max, OuterRef, Q, QuerySet, Sum
from django.utils import timezone
from django.utils.translation import gettext

from annotation.selectors import matching_responses, scores_visible_to
from core.ids import id_param

from ..models import JudgeBatchLine, JudgeBatchPart, JudgeResult, JudgeRun, JudgeRunItem, JudgeSetting, LlmEndpoint
from ..runs import engine as runs
from . import strategies
from .kinds import INEQMATH_STEP_KINDS, KINDS


def endpoint_list() -> QuerySet[LlmEndpoint]:
    return LlmEndpoint.objects.annotate(n_settings=Count("judge_settings", distinct=True)).order_by("name")


def endpoint_by_id(pk: int | None) -> LlmEndpoint | None:
    """The endpoint `pk` (an id already parsed, or None), or None."""
    return LlmEndpoint.objects.filter(pk=pk).first() if pk is not None else None


def setting_by_id(pk: int | None) -> JudgeSetting | None:
    """The setting version `pk` (an id already parsed, or None), or None."""
    return JudgeSetting.objects.filter(pk=pk).first() if pk is not None else None


def setting_list(*, include_old: bool = False) -> QuerySet[JudgeSetting]:
    """Judge settings, newest version of each name first (all versions with include_old)."""
    queryset = JudgeSetting.objects.select_related("endpoint").annotate(
        n_results=Count("results", distinct=True), n_runs=Count("runs", distinct=True)
    )
    if not include_old:
        newer = JudgeSetting.objects.filter(name=OuterRef("name"), version__gt=OuterRef("version"))
        queryset = queryset.annotate(superseded=Exists(newer)).filter(superseded=False)
    return queryset.order_by("name", "-version")


def setting_versions(setting: JudgeSetting) -> QuerySet[JudgeSetting]:
    return (
        JudgeSetting.objects.filter(name=setting.name)
        .select_related("created_by")
        .annotate(n_results=Count("results", distinct=True), n_runs=Count("runs", distinct=True))
        .order_by("-version")
    )


def settings_for_detail() -> QuerySet[JudgeSetting]:
    return JudgeSetting.objects.select_related("endpoint", "created_by", "previous")


def latest_setting(name: str) -> JudgeSetting | None:
    return JudgeSetting.objects.filter(name=name).order_by("-version").first()


def runnable_settings() -> QuerySet[JudgeSetting]:
    return setting_list().exclude(kind=JudgeSetting.Kind.EXTERNAL)


def effective_prompts(setting: JudgeSetting) -> tuple[str, str]:
    """(system prompt, template) a setting sends: its own, or its kind's defaults where blank (the
    rule of kinds.Kind.messages: a custom template keeps the system prompt as given)."""
    kind = KINDS.get(setting.kind)
    if kind is None:  # external: results made elsewhere, prompts as recorded
        return setting.system_prompt or "", setting.prompt_template or ""
    template = setting.prompt_template or kind.default_template
    system = setting.system_prompt if setting.prompt_template else (setting.system_prompt or kind.default_system)
    return system or "", template or ""


def prompt_hash(setting: JudgeSetting) -> str:
    """sha256 (hex) of the effective system prompt, a NUL byte, and the effective template: two
    settings with the same hash ask the same thing."""
    system, template = effective_prompts(setting)
    return hashlib.sha256(f"{system}\x00{template}".encode()).hexdigest()


def setting_summary(setting: JudgeSetting) -> dict:
    """A setting as plain data (the judge_setting command and the methods report). Sampling
    fields of a kind that calls no LLM (the CAS-only judge) are None: whatever the row holds,
    they played no part."""
    endpoint = setting.endpoint
    kind = KINDS.get(setting.kind)  # None for imported results: their fields say what the file said
    calls_llm = kind is None or kind.uses_llm
    return {
        "id": setting.pk,
        "name": setting.name,
        "version": setting.version,
        "kind": setting.kind,
        "model": setting.model,
        "temperature": setting.temperature if calls_llm else None,
        "max_tokens": setting.max_tokens if calls_llm else None,
        "samples": setting.samples,
        "endpoint": endpoint.name if endpoint else None,
        "base_url": endpoint.base_url if endpoint else None,
        "api_key_env": endpoint.api_key_env if endpoint else None,
        "prompt_hash": prompt_hash(setting),
        "created": setting.created.isoformat() if setting.created else None,
        **strategy_summary(setting),
    }


def strategy_summary(setting: JudgeSetting) -> dict:
    """Issue 27: the strategy, and for few-shot the recorded examples, rule, seed and hold-out count."""
    out = {"strategy": setting.strategy or "reason-then-score", "strategy_version": setting.strategy_version}
    if setting.kind == "replay":  # its prompts are the record's own or a prompt set's, never a strategy's template
        out = {"strategy": "prompt-set" if setting.prompt_set_id else "record-prompt", "strategy_version": None}
    if setting.prompt_set_id:
        out["prompt_set"] = setting.prompt_set.name
        out["prompt_set_file"] = setting.prompt_set.file_name
    calibration = setting.calibration or {}
    if calibration:
        out["few_shot"] = {
            "k": calibration.get("k"), "split_rule": calibration.get("rule"), "seed": calibration.get("seed"),
            "source": calibration.get("source") or "any",
            "comments": calibration.get("comments", False), "class_means": calibration.get("class_means", ""),
            "examples": calibration.get("examples", {}), "n_holdout": len(calibration.get("holdout", [])),
            "questions_without_examples": calibration.get("questions_without_examples", []),
        }
    return out


def _item_counts():
    states = JudgeRunItem.State
    return {
        "n_done": Count("items", filter=~Q(items__state=states.PENDING)),
        "n_ok": Count("items", filter=Q(items__state=states.OK)),
        "n_invalid": Count("items", filter=Q(items__state=states.INVALID)),
        "n_error": Count("items", filter=Q(items__state=states.ERROR)),
        "n_cached": Count("items", filter=Q(items__cached=True)),
    }


def run_list(params=None) -> QuerySet[JudgeRun]:
    queryset = JudgeRun.objects.select_related("setting", "created_by").annotate(**_item_counts())
    params = params or {}
    if params.get("status") in JudgeRun.Status.values:
        queryset = queryset.filter(status=params["status"])
    if id_param(params.get("config")) is not None:
        queryset = queryset.filter(setting_id=id_param(params["config"]))
    return queryset.order_by("-created")


def runs_for_detail() -> QuerySet[JudgeRun]:
    """Runs with what the run page shows beside them (the setting, its endpoint, the starter)."""
    return JudgeRun.objects.select_related("setting__endpoint", "created_by")


def results_for_detail() -> QuerySet[JudgeResult]:
    return JudgeResult.objects.select_related("setting", "response__question", "run", "copied_from")


def holdout_count(setting: JudgeSetting | None, filters: dict) -> int:
    """How many answers of the selection `filters` are a few-shot setting's hold-out (issue 27:
    never judged by that setting); 0 without a setting or a hold-out."""
    holdout = strategies.holdout_ids(setting)
    return matching_responses(filters).filter(pk__in=holdout).count() if holdout else 0


_REJUDGE_NOTE = re.compile(r"Re-judge of question (\d+): rubric (v\d+(?:, v\d+)*) -> (v\d+)")


def run_note_text(note: str) -> str:
    """A run's note as its page shows it: the note the rubric re-judge writes
    (services.lifecycle.REJUDGE_NOTE, stored in English) in the reader's language; a note a
    person typed as it is."""
    match = _REJUDGE_NOTE.fullmatch(note or "")
    if match is None:
        return note
    return gettext("Re-judge of question %(question)s: rubric %(old)s → %(new)s") % {
        "question": match.group(1), "old": match.group(2), "new": match.group(3)}


def run_progress(run: JudgeRun) -> dict:
    """Counts, tokens, cost and latency of a run, for the live progress bar (three queries)."""
    counts = dict(run.items.values_list("state").annotate(n=Count("id")).values_list("state", "n"))
    n_cached = run.items.filter(cached=True).count()
    produced = JudgeResult.objects.filter(run=run).exclude(status=JudgeResult.Status.RUNNING).exclude(
        copied_from__isnull=False
    )
    totals = produced.aggregate(
        calls=Count("id"), prompt=Sum("prompt_tokens"), completion=Sum("completion_tokens"), cost=Sum("cost"),
        latency=Sum("latency_ms"), attempts=Sum("attempts"), last=Max("finished"),
    )
    latencies = sorted(produced.exclude(latency_ms__isnull=True).values_list("latency_ms", flat=True)[:5000])
    end = run.finished or timezone.now()
    batch = batch_progress(run)
    # A batch run's poll chain counts as activity until its next look is due.
    last = max(filter(None, (totals["last"], run.resumed, batch and batch["_last_look"])), default=None)
    stalled = runs.stalled(run.status, last, run.resumed or run.created)
    return {
        **runs.progress_head(run, counts.get(JudgeRunItem.State.PENDING, 0)),
        "ok": counts.get(JudgeRunItem.State.OK, 0),
        "invalid": counts.get(JudgeRunItem.State.INVALID, 0),
        "error": counts.get(JudgeRunItem.State.ERROR, 0),
        "cached": n_cached,
        "judged": totals["calls"] or 0,
        "attempts": totals["attempts"] or 0,
        "prompt_tokens": totals["prompt"] or 0,
        "completion_tokens": totals["completion"] or 0,
        "cost": str((totals["cost"] or Decimal(0)).quantize(Decimal("0.0001"))),
        "latency_ms_mean": round(statistics.fmean(latencies)) if latencies else None,
        "latency_ms_p50": _percentile(latencies, 50),
        "latency_ms_p95": _percentile(latencies, 95),
        "elapsed_s": runs.elapsed_seconds(run, end),
        "last_activity": totals["last"].isoformat() if totals["last"] else None,
        "stalled": stalled,
        "can_cancel": run.status == JudgeRun.Status.RUNNING,
        "can_resume": run.status == JudgeRun.Status.CANCELLED or stalled
        or (run.status == JudgeRun.Status.DONE and counts.get(JudgeRunItem.State.ERROR, 0) > 0),
        "mode": run.mode,
        "batch": batch and {k: v for k, v in batch.items() if not k.startswith("_")},
    }


def batch_progress(run: JudgeRun, now=None) -> dict | None:
    """A batch run's parts, lines and requests, and when it should be done (None for a live run).

    The ETA is the slowest open part's: its requests still to answer at the pace the provider
    has answered them since it started the batch (from its ``request_counts``); unknown (None)
    while a part has not answered anything yet. ``deadline`` is the latest ``expires_at``: the
    provider answers within its completion window or the batch expires."""
    if not run.is_batch:
        return None
    now = now or timezone.now()
    parts = list(run.batch_parts.order_by("number"))
    lines = dict(run.batch_lines.values_list("state").annotate(n=Count("id")).values_list("state", "n"))
    etas, deadlines, total, answered = [], [], 0, 0
    for part in parts:
        counts, times = part.request_counts or {}, part.provider_times or {}
        part_total = counts.get("total") or part.n_lines
        part_done = (counts.get("completed") or 0) + (counts.get("failed") or 0)
        if part.status == JudgeBatchPart.Status.COMPLETED:
            part_done = part_total
        total += part_total
        answered += min(part_done, part_total)
        if part.collected is not None or not part.batch_id:
            continue
        if times.get("expires_at"):
            deadlines.append(times["expires_at"])
        started = times.get("in_progress_at")
        seen = part.polled.timestamp() if part.polled else now.timestamp()  # when the counts were read
        elapsed = seen - started if started else 0
        if part_done and elapsed > 0:
            due = seen + (part_total - part_done) * elapsed / part_done
            etas.append(max(0.0, due - now.timestamp()))
        else:
            etas.append(None)
    eta = None if (not etas or None in etas) else max(etas)
    polled = max((p.polled for p in parts if p.polled), default=None)
    return {
        "parts": [{"number": p.number, "status": p.status, "lines": p.n_lines, "batch_id": p.batch_id,
                   "completed": (p.request_counts or {}).get("completed", 0), "failed": (p.request_counts or {}).get("failed", 0),
                   "collected": p.collected is not None} for p in parts],
        "lines": {state: lines.get(state, 0) for state in JudgeBatchLine.State.values},
        "requests_total": total,
        "requests_answered": answered,
        "requests_percent": round(100.0 * answered / total, 1) if total else 0.0,
        "open_parts": sum(1 for p in parts if p.collected is None and p.batch_id),
        "eta_s": None if eta is None else round(eta),
        "eta": None if eta is None else (now + timedelta(seconds=eta)).isoformat(),
        "deadline": datetime.fromtimestamp(max(deadlines), tz=UTC).isoformat() if deadlines else None,
        "next_poll": run.batch_next_poll.isoformat() if run.batch_next_poll else None,
        "last_poll": polled.isoformat() if polled else None,
        "retry": run.batch_retry,
        "price_factor": float(settings.LLM_BATCH_PRICE_FACTOR),
        "_last_look": max(filter(None, (polled, run.batch_next_poll)), default=None),
    }


def _percentile(values, q):
    if not values:
        return None
    index = min(len(values) - 1, max(0, round(q / 100 * (len(values) - 1))))
    return values[index]


def run_items(run: JudgeRun, params=None) -> QuerySet[JudgeRunItem]:
    """The run's items with their results, for the results table."""
    queryset = run.items.select_related("response", "result").order_by("id")
    params = params or {}
    if params.get("state") in JudgeRunItem.State.values:
        queryset = queryset.filter(state=params["state"])
    if params.get("cached") in ("1", "0"):
        queryset = queryset.filter(cached=params["cached"] == "1")
    return queryset.defer("response__transcript", "response__judge_query", "response__generator_prompt")


def results_for_response(response) -> list[JudgeResult]:
    """The newest finished result of each setting for a response (one query)."""
    rows = (
        JudgeResult.objects.filter(response=response)
        .exclude(status=JudgeResult.Status.RUNNING)
        .select_related("setting")
        .order_by("setting__name", "-setting__version", "-id")
    )
    newest = {}
    for row in rows:
        newest.setdefault(row.setting_id, row)
    return list(newest.values())


def ineqmath_overall(results) -> bool | None:
    """IneqMath: correct overall only if the final-answer judge and all four step judges pass.

    Returns None until each of the five judges has a valid verdict; the newest result of each
    kind counts.
    """
    by_kind = {}
    for result in sorted(results, key=lambda r: r.pk, reverse=True):
        if result.status == JudgeResult.Status.OK and result.setting.kind in ("ineq_final_answer", *INEQMATH_STEP_KINDS):
            by_kind.setdefault(result.setting.kind, result)
    needed = ("ineq_final_answer", *INEQMATH_STEP_KINDS)
    if any(kind not in by_kind for kind in needed):
        return None
    return all(by_kind[kind].score == 1.0 for kind in needed)


def visible_results(user) -> QuerySet[JudgeResult]:
    """Judge results a user may see (the blind rule, annotation.selectors.scores_visible_to)."""
    queryset = JudgeResult.objects.exclude(status=JudgeResult.Status.RUNNING)
    visible = scores_visible_to(user, via="response__")
    return queryset if visible is None else queryset.filter(visible)


SECOND_OPINION_ORDER = {"disagree": 0, "theirs-only": 1, "ours-only": 2}


def cas_disagreements(run, limit=200):
    """Results of a CAS run where Math-Verify's second opinion differs from the CAS verdict.

    Both decided and different first, then those only Math-Verify decided, then those only the
    CAS decided; each row: response id, result id, extracted answer, gold, both verdicts, why.
    Returns (rows, counts by kind: ``disagree``, ``theirs_only``, ``ours_only``).
    """
    rows = (
        run.items.filter(result__step_verdicts__cas__has_key="second_opinion")
        .values_list("response_id", "result_id", "result__step_verdicts")
        .order_by("id")
    )
    found, counts = [], {key.replace("-", "_"): 0 for key in SECOND_OPINION_ORDER}
    for response_id, result_id, verdicts in rows:
        cas = (verdicts or {}).get("cas") or {}
        agreement = cas.get("agreement")
        if agreement not in SECOND_OPINION_ORDER:
            continue
        counts[agreement.replace("-", "_")] += 1
        found.append({
            "response_id": response_id, "result_id": result_id, "agreement": agreement,
            "extracted": verdicts.get("extracted", ""), "gold": verdicts.get("gold", ""),
            "ours": cas.get("equivalent"), "theirs": (cas.get("second_opinion") or {}).get("equivalent"),
            "explanation": cas.get("explanation", ""),
        })
    found.sort(key=lambda row: SECOND_OPINION_ORDER[row["agreement"]])
    return found[:limit], counts


# --- rubric re-judging ---------------------------------------------------------------------

def is_older_rubric(result_version: int | None, current: int) -> bool:
    """A result judged against an older rubric than the question's current one (no version:
    judged before rubrics had versions, so against version 1)."""
    return (result_version or 1) < current


RUBRIC_PLACEHOLDERS = ("reference", "full_score")
NOT_REJUDGED_KINDS = (JudgeSetting.Kind.EXTERNAL, JudgeSetting.Kind.REPLAY)


def reads_rubric(setting: JudgeSetting) -> bool:
    """Whether a setting's judge is shown the rubric: the rubric kind, or a prompt of its own that
    uses the reference or the full score."""
    if setting.kind == JudgeSetting.Kind.RUBRIC:
        return True
    text = f"{setting.prompt_template}\n{setting.system_prompt}"
    return any(re.search(r"\{\{\s*" + name + r"\s*\}\}", text) for name in RUBRIC_PLACEHOLDERS)


def stale_settings(question) -> list[dict]:
    """Judge setting versions whose current result on some response of `question` was judged
    against an older rubric version: [{setting, response_ids, versions, reads_rubric}] (two queries).

    Current result = the newest per (setting version, response), as everywhere else. Imported
    (external) settings cannot run and replay settings send the record's own prompt (never our
    rubric): both are left out. `reads_rubric` says whether the judge is shown the rubric at all.
    """
    current = question.rubric_version
    if current <= 1:
        return []
    latest = {}
    for setting_id, response_id, version in (
        JudgeResult.objects.filter(response__question=question).exclude(setting__kind__in=NOT_REJUDGED_KINDS)
        .order_by("pk").values_list("setting_id", "response_id", "rubric_version")
    ):
        latest[(setting_id, response_id)] = version
    stale = {}
    for (setting_id, response_id), version in latest.items():
        if is_older_rubric(version, current):
            entry = stale.setdefault(setting_id, {"response_ids": [], "versions": set()})
            entry["response_ids"].append(response_id)
            entry["versions"].add(version or 1)
    judge_settings = JudgeSetting.objects.filter(pk__in=stale).select_related("endpoint").order_by("name", "version")
    return [
        {"setting": setting, "response_ids": sorted(stale[setting.pk]["response_ids"]),
         "versions": sorted(stale[setting.pk]["versions"]), "reads_rubric": reads_rubric(setting)}
        for setting in judge_settings
    ]
