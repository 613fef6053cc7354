"""Reads of the judge studies: probe rates with question-clustered intervals (Wilson at 0 or 1), run progress, probe items,
the raw OCR text of scanned answers, and OCR-vs-judge attribution.

Invariants:

- A probe's n counts judged pairs only (both judgements with a score); answers a probe could
  not change are "skipped", failed or unreadable judgements are "failed"; neither is in n.
- detected: for a sensitivity probe the derived score is lower than the original's by at least
  one point; for an invariance probe it differs by at least one point (`is_detected`).
- Across runs (`probe_rates`) one derived text of one answer counts once (its latest judged item).
- Attribution tags are computed from stored scores on read (`attribution_tag`): a changed gold
  score or threshold never leaves a stale tag.
"""
from __future__ import annotations

import numpy as np
from django.db.models import Case, CharField, Count, F, FloatField, Max, OuterRef, Q, Subquery, Value, When
from django.db.models.functions import Abs, Cast

from core import uncertainty
from grading.models import JudgeSetting
from grading.runs.engine import stalled
from ocr.models import OcrRun, Page

from . import probes
from .models import ProbeItem, ProbeRun

EPS = 1e-9
DEFAULT_THRESHOLD = 2.0
TAGS = ("ocr", "judge", "both")


def find_setting(name) -> JudgeSetting | None:
    """The newest version of the setting called `name` (or the setting itself)."""
    if isinstance(name, JudgeSetting):
        return name
    return JudgeSetting.objects.filter(name=name).order_by("-version").first()


def is_detected(probe: str, original: float, derived: float) -> bool:
    if probes.PROBES[probe].family == probes.SENSITIVITY:
        return derived <= original - 1 + EPS
    return abs(derived - original) >= 1 - EPS


def rate_entry(n: int, detected: int, questions=None, *, seed: int = 0) -> dict:
    """A probe's rate with its 95% interval (core.uncertainty): given each judged pair's question
    (`questions`, one per pair, the detected ones first), a cluster bootstrap of whole questions,
    a Wilson interval at 0 or 1, none from fewer than 5 questions; without questions, a Wilson
    interval on the pairs. `ci_note` says why there is none, `ci_method` how it was made."""
    if not n:
        return {"n": 0, "detected": detected, "rate": None, "ci": None, "ci_note": "", "ci_method": None}
    if questions is None:
        interval = uncertainty.wilson_interval(detected, n)
    else:
        hits = np.zeros(n)
        hits[:detected] = 1.0
        interval = uncertainty.cluster_bootstrap({"rate": hits}, list(questions), seed=seed,
                                                 proportions={"rate"})["rate"]
    return {"n": n, "detected": detected, "rate": detected / n,
            "ci": interval.bounds() if interval.estimable else None, "ci_note": interval.note(),
            "ci_method": interval.method, "questions": len(set(questions)) if questions is not None else None}


def _rates(rows, names, seed=0):
    """rows: (probe, state, original, derived, question) -> {probe: {"n","detected","rate","ci"}} plus
    failed counts; intervals clustered by question."""
    counts = {name: [0, 0, 0] for name in names}  # n, detected, failed
    questions = {name: ([], []) for name in names}  # questions of detected, of not detected pairs
    for probe, state, original, derived, question in rows:
        if probe not in counts:
            continue
        if state == ProbeItem.State.OK and original is not None and derived is not None:
            detected = is_detected(probe, original, derived)
            counts[probe][0] += 1
            counts[probe][1] += detected
            questions[probe][0 if detected else 1].append(question)
        elif state in (ProbeItem.State.INVALID, ProbeItem.State.ERROR):
            counts[probe][2] += 1
    return {name: (rate_entry(n, d, questions[name][0] + questions[name][1], seed=seed), failed)
            for name, (n, d, failed) in counts.items()}


def probe_rates(setting: JudgeSetting | str, *, seed: int = 0) -> dict[str, dict]:
    """{probe_name: {"n", "detected", "rate", "ci"}} over every probe run of this setting version
    (a name: its newest version), each derived text of an answer counted once (its latest judged
    item: two seeds that make the same text are one measurement).
    Every probe is listed; a probe with n = 0 has rate and ci None. The methods report reads this."""
    setting = find_setting(setting)
    latest = {}
    if setting is not None:
        rows = (
            ProbeItem.objects.filter(run__setting=setting, probe__in=list(probes.PROBES))
            .exclude(state=ProbeItem.State.PENDING)
            .order_by("id")
            .values_list("derived__response_id", "derived_key", "probe", "state", "original_score", "derived_score",
                         "derived__response__question_id")
        )
        for response_id, key, *row in rows:
            latest[(response_id, row[0], key)] = row
    return {name: entry for name, (entry, _) in _rates(latest.values(), list(probes.PROBES), seed).items()}


def run_rates(run: ProbeRun) -> dict:
    """{probe: {"n", "detected", "rate", "ci", "skipped", "failed"}} of one run (raw-ocr excluded)."""
    names = [name for name in run.probes if name in probes.PROBES]
    rows = run.items.filter(probe__in=names).values_list("probe", "state", "original_score", "derived_score",
                                                         "derived__response__question_id")
    return {
        name: {**entry, "skipped": int((run.skipped or {}).get(name, 0)), "failed": failed}
        for name, (entry, failed) in _rates(rows, names).items()
    }


def _with_counts(queryset):
    """Runs with their item counts by state and last activity (one query for any number of runs)."""
    return queryset.annotate(
        n_pending=Count("items", filter=Q(items__state=ProbeItem.State.PENDING)),
        n_ok=Count("items", filter=Q(items__state=ProbeItem.State.OK)),
        n_invalid=Count("items", filter=Q(items__state=ProbeItem.State.INVALID)),
        n_error=Count("items", filter=Q(items__state=ProbeItem.State.ERROR)),
        last_activity=Max("items__finished"),
    )


def _progress(run) -> dict:
    """The progress dict of a run annotated by `_with_counts`."""
    is_stalled = stalled(run.status, run.last_activity, run.resumed or run.created)
    total, pending = run.n_items, run.n_pending
    return {
        "id": run.pk, "status": run.status, "total": total, "done": total - pending, "pending": pending,
        "ok": run.n_ok, "invalid": run.n_invalid, "error": run.n_error,
        "percent": round(100 * (total - pending) / total) if total else 100,
        "skipped": sum(int(v) for v in (run.skipped or {}).values()),
        "finished": run.status != ProbeRun.Status.RUNNING, "stalled": is_stalled,
        "can_resume": run.status == ProbeRun.Status.CANCELLED or is_stalled,
    }


def runs_with_setting():
    """Probe runs with their setting and who started them: what the run page looks one up in."""
    return ProbeRun.objects.select_related("setting", "created_by")


def items_with_context():
    """Probe items with their run's setting, the answer's question and the original's result:
    what the item page looks one up in."""
    return ProbeItem.objects.select_related("run__setting", "derived__response__question", "original_result")


def run_progress(run: ProbeRun) -> dict:
    return _progress(_with_counts(ProbeRun.objects.filter(pk=run.pk)).get())


def recent_runs(limit=50) -> list[tuple]:
    """[(run, progress)] of the latest runs, in one query."""
    runs = _with_counts(ProbeRun.objects.select_related("setting", "created_by")).order_by("-created", "-id")[:limit]
    return [(run, _progress(run)) for run in runs]



def run_items(run: ProbeRun, probe: str | None = None):
    """The items of a run for its table (no long texts)."""
    queryset = run.items.select_related("derived__response__question").defer(
        "original_output", "derived_output", "derived__text", "derived__original_text",
        "derived__response__transcript", "derived__response__judge_query", "derived__response__extra",
        "derived__response__generator_prompt", "derived__response__question__statement",
        "derived__response__question__reference_solution", "derived__response__question__task_description",
        "derived__response__question__extra",
    )
    if probe:
        queryset = queryset.filter(probe=probe)
    return queryset.annotate(delta=F("derived_score") - F("original_score")).order_by("id")



def settings_to_probe():
    """Newest version of each runnable setting, for the start form."""
    newest = {}
    for setting in JudgeSetting.objects.exclude(kind__in=["external", "replay"]).order_by("name", "-version"):
        newest.setdefault(setting.name, setting)
    return list(newest.values())


# --- raw OCR text --------------------------------------------------------------------------

def raw_ocr_texts(response_ids) -> dict[int, str]:
    """The raw OCR text of each answer made from scans: its pages' engine output (the run that
    seeded each page's transcript; else the page's latest finished run of the batch engine),
    joined as ocr.services.write_response joins the verified page texts. Answers not made
    from scans, or with a page never OCR'd, are left out."""
    pages = list(
        Page.objects.filter(response_id__in=list(response_ids), is_cover=False)
        .select_related("transcript__source_run", "batch")
        .order_by("response_id", "page_number", "id")
    )
    fallback = {}
    for run in OcrRun.objects.filter(page__in=pages, status=OcrRun.Status.DONE).order_by("page_id", "id"):
        fallback.setdefault(run.page_id, {})[run.engine] = run.raw_text
    texts, broken = {}, set()
    for page in pages:
        transcript = getattr(page, "transcript", None)
        source = transcript.source_run if transcript is not None else None
        if source is not None and source.status == OcrRun.Status.DONE:
            raw = source.raw_text
        else:
            raw = fallback.get(page.pk, {}).get(page.batch.engine)
        if raw is None:
            broken.add(page.response_id)
            continue
        texts.setdefault(page.response_id, []).append(raw.strip())
    return {pk: "\n\n".join(parts) for pk, parts in texts.items() if pk not in broken and "".join(parts).strip()}


# --- OCR-vs-judge attribution ---------------------------------------------------------------

def attribution_tag(d_fix: float, d_raw: float, threshold: float = DEFAULT_THRESHOLD) -> str:
    """Why the judge and the gold differ, from |judge - gold| on the verified text (d_fix) and on
    the raw OCR text (d_raw):

    - ""      neither differs by the threshold: nothing to explain;
    - "ocr"   the judge agrees on the verified text (d_fix < T) but not on the raw (d_raw >= T);
    - "both"  it disagrees on the verified text and the raw text makes it worse by a point or more
              (d_fix >= T and d_raw >= d_fix + 1): a judge error, added to by OCR noise;
    - "judge" it disagrees on the verified text and the raw text does not make it worse
              (d_fix >= T and d_raw < d_fix + 1): the judge's own error.
    """
    t = threshold - EPS
    if d_fix < t:
        return "ocr" if d_raw >= t else ""
    return "both" if d_raw >= d_fix + 1 - EPS else "judge"


def parse_threshold(value, default=DEFAULT_THRESHOLD) -> float:
    """A threshold from user input; the default when it is not a non-negative number."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return default
    return number if 0 <= number < 1e6 else default


def attribution_rows(setting: JudgeSetting | str, threshold: float = DEFAULT_THRESHOLD, *, run: ProbeRun | None = None) -> list[dict]:
    """Every answer with a gold score whose raw OCR text this setting judged, where either text
    differs from the gold by the threshold, with its tag (latest judged raw-ocr item each; with
    `run`, that run's items only)."""
    setting = find_setting(setting)
    if setting is None:
        return []
    items = ProbeItem.objects.filter(run=run) if run is not None else ProbeItem.objects.filter(run__setting=setting)
    rows = (
        items.filter(probe=probes.RAW_OCR, state=ProbeItem.State.OK, derived__response__gold_score__isnull=False)
        .order_by("id")
        .values_list("pk", "derived__response_id", "derived__response__student_id",
                     "derived__response__question_id", "derived__response__gold_score", "original_score",
                     "derived_score")
    )
    latest = {}
    for row in rows:
        latest[row[1]] = row
    out = []
    for item_id, response_id, student, question_id, gold, fixed, raw in sorted(latest.values(), key=lambda r: r[1]):
        gold = float(gold)
        d_fix, d_raw = abs(fixed - gold), abs(raw - gold)
        tag = attribution_tag(d_fix, d_raw, threshold)
        if not tag:
            continue
        out.append({
            "response": response_id, "student_id": student, "question": question_id, "gold": gold,
            "score_verified": fixed, "score_raw_ocr": raw, "delta_verified": fixed - gold, "delta_raw_ocr": raw - gold,
            "tag": tag, "item": item_id, "setting": str(setting), "threshold": threshold,
        })
    return out


def with_attribution(queryset, threshold: float = DEFAULT_THRESHOLD):
    """Annotate disagreement-queue results (JudgeResult rows with `gold` and `abs_delta`) with
    ``ocr_raw_score`` (the same setting version's latest judgement of the raw OCR text) and
    ``ocr_tag`` (`attribution_tag` in SQL; "" without a raw-OCR judgement). One subquery, no
    extra query per row."""
    raw = (
        ProbeItem.objects.filter(derived__response_id=OuterRef("response_id"), run__setting_id=OuterRef("setting_id"),
                                 probe=probes.RAW_OCR, state=ProbeItem.State.OK)
        .order_by("-id")
        .values("derived_score")[:1]
    )
    t = threshold - EPS
    queryset = queryset.annotate(ocr_raw_score=Subquery(raw, output_field=FloatField()))
    queryset = queryset.annotate(ocr_raw_delta=Abs(F("ocr_raw_score") - Cast("response__gold_score", FloatField())))
    return queryset.annotate(ocr_tag=Case(
        When(ocr_raw_score__isnull=True, then=Value("")),
        When(abs_delta__lt=t, ocr_raw_delta__gte=t, then=Value("ocr")),
        When(abs_delta__lt=t, then=Value("")),
        When(ocr_raw_delta__gte=F("abs_delta") + 1 - EPS, then=Value("both")),
        default=Value("judge"),
        output_field=CharField(),
    ))
