"""Probe runs: derive answers, judge original and derived text with one setting, record both.

Invariants (on top of grading/runs/engine.py, the one run engine, which gives epochs, cancel, resume):

- A run's selection is fixed when it starts: derived answers are made then (pure functions of
  studies/probes.py), one ProbeItem per derived answer; answers a probe cannot change
  are counted in ``ProbeRun.skipped`` and get no item.
- Original and derived text are judged by the same setting version through the judge
  machinery (grading.judges: kinds, client, cache keys). The original's judgement reuses a
  finished JudgeResult of that setting for the same content when there is one, else a study
  judgement of the same content (an earlier probe item), else it is judged here; no
  JudgeResult is ever written by a probe run, so metrics, the queue and exports do not move.
- Each distinct text is judged once per chunk (five probes of one answer share one original).
- A worker claims items (owner run:epoch:task, lease) and writes only where it still owns the
  claim; a redelivered or resumed chunk takes over stale claims (grading.runs.claims).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable

from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext

import llm
from annotation.models import Response, content_hash
from annotation.selectors import filter_responses
from egress import purposes
from grading.judges import services as judge_services
from grading.judges import strategies
from grading.judges.kinds import Outcome, get_kind
from grading.judges.services import RunRefused
from grading.models import JudgeResult, JudgeSetting
from grading.runs import claims
from grading.runs.engine import ChunkReport, RunEngine, call_each, reopen_failed_items

from . import probes, selectors, tasks
from .models import DerivedAnswer, ProbeItem, ProbeRun

OPEN_STATES = (ProbeItem.State.PENDING, ProbeItem.State.ERROR)
FINAL = ("ok", "invalid")
UNRUNNABLE_KINDS = (JudgeSetting.Kind.EXTERNAL, JudgeSetting.Kind.REPLAY)
STYLE_REWRITE = "style-rewrite"  # the style ablation's rewrites, made beforehand (studies/style.py)


def _open_ids(run):
    return list(run.items.filter(state__in=OPEN_STATES).order_by("id").values_list("pk", flat=True))


PROBE_RUNS = RunEngine(
    run_model=ProbeRun,
    chunk_task=tasks.run_probe_chunk_task,
    open_ids=_open_ids,
    nothing_left=lambda run_id: not ProbeItem.objects.filter(run_id=run_id, state=ProbeItem.State.PENDING).exists(),
    on_resume=reopen_failed_items,
    name="studies.services.PROBE_RUNS",
    last_activity=lambda run: run.items.aggregate(last=Max("finished"))["last"],
    endpoint_of=lambda run: run.setting.endpoint,
)


def parse_probe_names(value: str | Iterable[str]) -> list[str]:
    """Probe names from "all", "a,b" or a list; raises RunRefused naming the unknown ones."""
    names = [n.strip() for n in (value.split(",") if isinstance(value, str) else value) if n and n.strip()]
    if names == ["all"]:
        return list(probes.PROBES)
    unknown = [n for n in names if n not in probes.PROBES and n not in (probes.RAW_OCR, STYLE_REWRITE)]
    if unknown or not names:
        known = ", ".join([*probes.PROBES, "all"])
        raise RunRefused(gettext("Unknown probe %(value)s; choose from %(known)s.") % {"value": ', '.join(unknown) or '(none given)', "known": known})
    return list(dict.fromkeys(names))


def check_setting(setting: JudgeSetting) -> None:
    """Refuse settings that cannot judge a text they are given (imported results, replayed prompts)."""
    if setting.kind in UNRUNNABLE_KINDS:
        raise RunRefused(gettext("Setting %(setting)s (%(kind)s) cannot judge derived text.") % {"setting": setting, "kind": setting.get_kind_display()})
    if get_kind(setting.kind).uses_llm:
        if setting.endpoint is None or not setting.model:
            raise RunRefused(gettext("Setting %(setting)s needs an endpoint and a model.") % {"setting": setting})
        judge_services.check_endpoint_usable(setting.endpoint)


def start_probe_run(
    setting: JudgeSetting, *, probe_names, exam=None, question=None, limit=None, seed=0, user=None,
    enqueue=True, chunk_size=None, include_flagged=False,
) -> ProbeRun:
    """Derive the answers, create the run and its items, and queue it (after the commit).

    ``probe_names`` may hold ``raw-ocr``: the raw OCR text of answers made from scans (others
    are skipped). With ``enqueue=False`` nothing is sent to Celery: call `run_inline`.
    ``include_flagged`` (the style ablation): flagged rewrites are judged too, for the report's
    second, labelled analysis; without it they are counted and never judged.
    """
    names = parse_probe_names(probe_names)
    check_setting(setting)
    if limit is not None and int(limit) < 1:
        raise RunRefused(gettext("--limit must be at least 1."))
    params = {k: str(v) for k, v in {"exam": exam, "question": question}.items() if v not in (None, "")}
    queryset = filter_responses(Response.objects.all(), params).exclude(transcript="").order_by("question_id", "id")
    if limit:
        queryset = queryset[: int(limit)]
    responses = list(queryset.only("id", "transcript"))
    if not responses:
        raise RunRefused(gettext("No answer matches this selection."))
    raw = selectors.raw_ocr_texts([r.pk for r in responses]) if probes.RAW_OCR in names else {}
    wanted, skipped = [], {name: 0 for name in names}
    rewrites, flagged = {}, []
    if STYLE_REWRITE in names:  # issue 27: flagged rewrites are excluded and counted, never judged
        from . import style  # noqa: PLC0415

        rewrites = style.rewrites_for([r.pk for r in responses])
        skipped[f"{STYLE_REWRITE} (flagged)"] = 0
    for response in responses:
        for name in names:
            if name == STYLE_REWRITE:
                row = rewrites.get(response.pk)
                if row is not None and (row.change or {}).get("excluded"):
                    flagged.append(row)
                    if not include_flagged:
                        skipped[f"{STYLE_REWRITE} (flagged)"] += 1
                        continue
                made = probes.Derived(row.text, row.change) if row is not None else None
            elif name == probes.RAW_OCR:
                text = raw.get(response.pk)
                made = probes.Derived(text, {"source": "raw OCR of the answer's pages"}) if text else None
            else:
                made = probes.derive(name, response.transcript, seed)
            if made is None:
                skipped[name] += 1
                continue
            wanted.append((response, name, made))
    with transaction.atomic():
        run = ProbeRun.objects.create(
            setting=setting, probes=names, seed=int(seed), skipped=skipped, created_by=user,
            selection={**params, **({"limit": int(limit)} if limit else {}),
                       **({"style_flagged": style.flagged_counts(flagged),
                           "style_include_flagged": bool(include_flagged)} if STYLE_REWRITE in names else {})},
            chunk_size=chunk_size or max(8, min(64, 2 * (setting.endpoint.max_concurrency if setting.endpoint else 8))),
        )
        derived = _store_derived(wanted, int(seed))
        ProbeItem.objects.bulk_create(
            (ProbeItem(run=run, derived=answer, probe=answer.probe) for answer in derived), batch_size=500
        )
        run.n_items = len(derived)
        if not derived:
            run.status, run.finished = ProbeRun.Status.DONE, timezone.now()
        run.save(update_fields=["n_items", "status", "finished"])
        if enqueue and derived:
            PROBE_RUNS.enqueue_on_commit(run)
    return run


def probe_call_estimate(setting: JudgeSetting | None, *, probe_names, exam=None, question=None, limit=None) -> dict:
    """What a probe run with this selection would cost, before it starts: the answers chosen, and
    at most one judged item per answer and ticked probe (raw OCR: only answers made from scans;
    a probe that does not apply to an answer is skipped), times the setting's samples."""
    names = [name for name in probe_names if name in probes.PROBES or name == probes.RAW_OCR]
    params = {k: str(v) for k, v in {"exam": exam, "question": question}.items() if v not in (None, "")}
    queryset = filter_responses(Response.objects.all(), params).exclude(transcript="").order_by("question_id", "id")
    ids = list(queryset.values_list("id", flat=True)[: int(limit)] if limit else queryset.values_list("id", flat=True))
    scanned = len(selectors.raw_ocr_texts(ids)) if probes.RAW_OCR in names else 0
    items = sum(scanned if name == probes.RAW_OCR else len(ids) for name in names)
    samples = max(1, int(getattr(setting, "samples", 1) or 1))
    return {"answers": len(ids), "probes": len(names), "items": items, "samples": samples, "calls": items * samples}


def _source_hash(response, name, made):
    """What a derived answer was made from: the original text (and, for raw OCR, the raw text)."""
    if name == probes.RAW_OCR:
        return content_hash(f"{response.transcript}\0{made.text}")
    return content_hash(response.transcript)


def _store_derived(wanted, seed):
    """The DerivedAnswer rows for [(response, probe, Derived)], made where missing (in order)."""
    keyed = {(r.pk, name, _source_hash(r, name, made)): (r, name, made) for r, name, made in wanted}
    if not keyed:
        return []
    existing = {
        (d.response_id, d.probe, d.source_hash): d
        for d in DerivedAnswer.objects.filter(
            response_id__in={k[0] for k in keyed}, probe__in={k[1] for k in keyed}, seed=seed
        ).only("id", "response_id", "probe", "source_hash")
    }
    fresh = {
        key: DerivedAnswer(response=r, probe=name, seed=seed, source_hash=key[2], original_text=r.transcript,
                           text=made.text, change=made.change)
        for key, (r, name, made) in keyed.items()
        if key not in existing
    }
    DerivedAnswer.objects.bulk_create(fresh.values(), batch_size=500)
    return [existing.get(key) or fresh[key] for key in keyed]


def cancel_probe_run(run: ProbeRun) -> ProbeRun:
    return PROBE_RUNS.cancel(run)


def resume_probe_run(run: ProbeRun, *, enqueue: bool = True) -> ProbeRun:
    return PROBE_RUNS.resume(run, enqueue=enqueue)


def run_inline(run: ProbeRun, *, complete: Callable | None = None) -> ProbeRun:
    """Do a run's open work in this process (no Celery worker needed)."""
    return PROBE_RUNS.run_inline(run, process_probe_chunk, complete=complete)


# --- the chunk -------------------------------------------------------------------------------

def process_probe_chunk(run_id: int, epoch: int, item_ids: list[int], task_id: str | None = None,
                        complete: Callable | None = None) -> ChunkReport:
    """Judge the original and derived text of a chunk of items (the body of the Celery task)."""
    run, task_id, report = PROBE_RUNS.open_chunk(run_id, epoch, item_ids, task_id, select_related=["setting__endpoint"])
    if run is None:
        return report
    setting = run.setting
    kind, spec = get_kind(setting.kind), judge_services.judge_spec(setting)
    owner = claims.owner_tag(run.pk, epoch, task_id)
    lease = claims.lease_for(setting.endpoint, setting.samples, setting.parse_retries)
    items = claims.claim_each(
        ProbeItem.objects.filter(run=run, pk__in=item_ids, state__in=OPEN_STATES)
        .select_related("derived__response__question").order_by("id"),
        ProbeItem.objects.filter(state__in=OPEN_STATES), run_id=run.pk, epoch=epoch, task_id=task_id, owner=owner,
        lease=lease)
    report.claimed = len(items)
    if not items:
        PROBE_RUNS.finish_if_complete(run.pk, epoch)
        return report
    inputs, needs, answers_of = {}, {}, {}
    for item in items:
        original = strategies.prepare(setting, judge_services.judge_input(item.derived.response), item.derived.response)
        derived = dataclasses.replace(original, response=item.derived.text, judge_query="")
        item.original_key = judge_services.input_cache_key(setting, kind, spec, original)
        item.derived_key = judge_services.input_cache_key(setting, kind, spec, derived)
        inputs.setdefault(item.original_key, original)
        inputs.setdefault(item.derived_key, derived)
        needs[item.pk] = (item.original_key, item.derived_key)
        for key in needs[item.pk]:
            answers_of.setdefault(key, set()).add(item.derived.response_id)
    known = _known_judgements(setting, items, set(inputs))
    report.cached = sum(1 for key in inputs if key in known)
    todo = [key for key in inputs if key not in known]
    pending = list(items)
    pending = _write_ready(pending, known, owner)
    if todo:
        call = judge_services.make_caller(setting.endpoint, spec, complete)
        width = max(1, setting.endpoint.max_concurrency if (kind.uses_llm and setting.endpoint) else 4)

        def record(key, outcome):
            known[key] = _judgement(outcome if isinstance(outcome, Outcome) else _failed(outcome))
            report.recorded += 1

        def write_ready():
            nonlocal pending
            pending = _write_ready(pending, known, owner)

        def evaluate(key):
            with llm.labelled(purposes.PROBE, answer_ids=sorted(answers_of.get(key, ()))):
                return kind.evaluate(spec, inputs[key], call)

        call_each(todo, evaluate, record, width=min(width, len(todo)),
                       is_live=lambda: PROBE_RUNS.is_live(run.pk, epoch), after_each=write_ready)
    if pending:  # cancelled meanwhile: give the claims back
        report.released = claims.release(ProbeItem, pending, owner)
    PROBE_RUNS.finish_if_complete(run.pk, epoch)
    return report


@dataclasses.dataclass(frozen=True)
class _Judgement:
    status: str  # ok | invalid | error
    score: float | None
    output: str
    errors: tuple = ()
    result_id: int | None = None


def _judgement(outcome: Outcome) -> _Judgement:
    output = outcome.raw_output or outcome.rationale
    return _Judgement(outcome.status, outcome.score if outcome.status == "ok" else None, output,
                      tuple(outcome.errors or ()))


def _failed(exc):
    """A kind raised (kinds catch their own errors; this is the last line of defence)."""
    return Outcome("error", parse_status="exception", errors=[{"kind": "exception", "message": str(exc)[:500]}])


def _known_judgements(setting, items, keys):
    """Finished judgements of these cache keys by this setting version: judge results first (the
    response's own result for its original), then earlier probe items."""
    known = {}
    own = {item.original_key: item.derived.response_id for item in items}
    results = JudgeResult.objects.filter(setting=setting, cache_key__in=keys, status__in=FINAL).only(
        "id", "cache_key", "response_id", "status", "score", "raw_output", "rationale"
    ).order_by("id")
    for result in results:
        if result.cache_key in known and own.get(result.cache_key) != result.response_id:
            continue
        known[result.cache_key] = _Judgement(result.status, result.score, result.raw_output or result.rationale,
                                             result_id=result.pk)
    missing = keys - set(known)
    if missing:
        studied = ProbeItem.objects.filter(run__setting=setting)
        for key_field, status_field, score_field, output_field in (
            ("original_key", "original_status", "original_score", "original_output"),
            ("derived_key", "derived_status", "derived_score", "derived_output"),
        ):
            rows = studied.filter(**{f"{key_field}__in": missing, f"{status_field}__in": FINAL}).values_list(
                key_field, status_field, score_field, output_field
            ).order_by("id")
            for key, status, score, output in rows:
                known.setdefault(key, _Judgement(status, score, output))
    return known


def _state(original, derived):
    if "error" in (original.status, derived.status):
        return ProbeItem.State.ERROR
    if "invalid" in (original.status, derived.status):
        return ProbeItem.State.INVALID
    return ProbeItem.State.OK


def _write_ready(pending, known, owner):
    """Write every pending item whose two judgements are known; return those still waiting."""
    waiting, now = [], timezone.now()
    with transaction.atomic():
        for item in pending:
            original, derived = known.get(item.original_key), known.get(item.derived_key)
            if original is None or derived is None:
                waiting.append(item)
                continue
            ProbeItem.objects.filter(pk=item.pk, claim_owner=owner).update(
                state=_state(original, derived), original_key=item.original_key, derived_key=item.derived_key,
                original_result_id=original.result_id, original_status=original.status,
                original_score=original.score, original_output=original.output[:100_000],
                derived_status=derived.status, derived_score=derived.score, derived_output=derived.output[:100_000],
                errors=[*original.errors, *derived.errors][:20], finished=now, claim_owner="", claimed_at=None,
            )
    return waiting
