"""Reads of the error-geometry and step-surprisal study: the error segments of the labelled
answers, run progress, and the segments of a run in the paper's JSONL shape.

Invariants:

- A segment comes from an answer whose gold is agreed: imported with the dataset, agreed by the
  experts or adjudicated (`AGREED_GOLD`); answers with no gold or a single expert's are left out.
- The sub-question unit (the paper's): each sub-question whose experts' points (the mean over the
  answer's submitted labels, imported gold labels included) are below its full points; its text
  runs from its marker in the transcript to the next sub-question's marker
  (`steps.sub_question_spans`). A question without sub-questions is one unit: the whole answer,
  when its gold is below the full score. What cannot be placed is counted in `skipped`, by reason.
- The step-label unit: each span of a submitted label whose verdict is not "correct" (and whose
  place in the transcript is still sure: not `needs_review`).
- Probe-derived segments (source "probe-derived", chosen with `sources`): the errors a
  sensitivity probe put into an answer (drop-final-answer, arithmetic-slip, truncate-last-step;
  studies/probes.py), from the derived answers of earlier probe runs. With the
  sub-question unit, the derived text's sub-question holding the change (the whole derived text
  when the question has no sub-questions); with the step-label unit, the changed line of an
  arithmetic slip (a removed line leaves no span: counted). They carry the sub-question's full
  points but no points or gold of their own (no expert scored a derived text).
- Segment texts are slices of the transcript (or of the derived text), never rewritten.
"""
from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from dataclasses import dataclass

from django.db.models import Count, Max, Q
from django.utils import timezone

from annotation.models import Label, Response, StepLabel, SubQuestion
from annotation.rubric import read_rubric, sub_question_label
from grading.runs.engine import stalled

from .. import probes
from ..models import DerivedAnswer
from .models import GeometryRun, GeometrySegment
from .steps import change_point, line_at, span_at, sub_question_spans

AGREED_GOLD = (Response.GoldStatus.IMPORTED, Response.GoldStatus.AGREED, Response.GoldStatus.ADJUDICATED)
PROBE_DERIVED = "probe-derived"
SUBSETS = ("human", "synthetic", PROBE_DERIVED)  # the groups (the paper's analysis_subset, and ours)
DEFAULT_SOURCES = ("human", "synthetic")
SENSITIVITY_PROBES = tuple(name for name, probe in probes.PROBES.items() if probe.family == probes.SENSITIVITY)
JSONL_FIELDS = ("segment_text", "sample_id", "question", "sub_id", "real_score", "max_score", "analysis_subset")
# The paper's released bundle (error_segment_bundle/*.jsonl): its segment files carry no analysis_subset (the
# group is in the file name, human_... or llm_...); its step-split files say "Human" / "LLM" and list the steps.
BUNDLE_FIELDS = JSONL_FIELDS[:-1]
GROUP_NAMES = {"human": "human", "synthetic": "synthetic", "llm": "synthetic", PROBE_DERIVED: PROBE_DERIVED}
EPS = 1e-9
ANALYSIS_STALL_SECONDS = 1800  # an analysis "running" this long after the run ended lost its worker


@dataclass
class Segment:
    """One error segment, as collected (before it is a run's row)."""

    text: str
    sample_id: str
    question: str
    question_key: str
    sub_id: str
    subset: str
    real_score: float | None
    max_score: float | None
    source: str = ""
    unit: str = GeometrySegment.Unit.SUB_QUESTION
    gold: float | None = None
    full_points: float | None = None
    response_id: int | None = None
    probe: str = ""
    steps: list[str] | None = None  # the steps a file gives (the paper's step-split files), else None

    def as_jsonl(self) -> dict:
        """The paper's record (its seven keys first), with ours after them."""
        return {
            "segment_text": self.text, "sample_id": self.sample_id, "question": self.question, "sub_id": self.sub_id,
            "real_score": self.real_score, "max_score": self.max_score, "analysis_subset": self.subset,
            "source": self.source, "unit": self.unit, "gold_score": self.gold, "full_score": self.full_points,
            "response_id": self.response_id, **({"probe": self.probe} if self.probe else {}),
        }


def group_of(value) -> str | None:
    """The group a file names (the paper's "Human" / "LLM", ours human / synthetic / probe-derived), or None."""
    return GROUP_NAMES.get(str(value or "").strip().lower())


def group_from_file_name(name: str) -> str | None:
    """The group of a bundle file by its name: human_error_segments.jsonl is human, llm_... synthetic."""
    base = str(name or "").replace("\\", "/").rsplit("/", 1)[-1].lower()
    for prefix, group in (("human", "human"), ("llm", "synthetic"), ("synthetic", "synthetic")):
        if base.startswith(prefix):
            return group
    return None


def limit_segments(segments: list, limit: int | None) -> list:
    """At most `limit` segments, taken in turn from each question and group (each one's segments in
    order), so a small limit still spans the questions and the groups instead of the first answers."""
    if not limit or len(segments) <= int(limit):
        return list(segments)
    by_question = {}
    for segment in segments:
        by_question.setdefault((segment.question_key, segment.subset), []).append(segment)
    queues = list(by_question.values())
    kept, index = [], 0
    while len(kept) < int(limit):
        for queue in queues:
            if index < len(queue) and len(kept) < int(limit):
                kept.append(queue[index])
        index += 1
    order = {id(segment): n for n, segment in enumerate(segments)}
    return sorted(kept, key=lambda segment: order[id(segment)])


def text_hash(text: str) -> str:
    """SHA-256 of the exact text (a vector's cache key: no normalisation)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def finite_number(value):
    """A finite float from a number or numeric text (Decimal, "3"), else None (booleans too)."""
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number == number and abs(number) != float("inf") else None


def _expert_points(response_ids):
    """{response id: {sub-question label: mean points of its submitted labels}}."""
    points = defaultdict(lambda: defaultdict(list))
    rows = Label.objects.filter(submitted=True, response_id__in=response_ids).values_list("response_id", "sub_scores")
    for response_id, sub_scores in rows:
        for key, value in (sub_scores or {}).items():
            points_value = finite_number(value)
            if points_value is not None:
                points[response_id][sub_question_label(str(key))].append(points_value)
    return {rid: {label: sum(v) / len(v) for label, v in by_label.items()} for rid, by_label in points.items()}


def _sub_questions(questions):
    """{question id: [(label, max points or None)]} in order, maxima read from the rubric where unset."""
    out = defaultdict(list)
    rows = list(SubQuestion.objects.filter(question_id__in=list(questions)).order_by("question_id", "order", "id"))
    labels = defaultdict(list)
    for sub in rows:
        labels[sub.question_id].append(sub.label)
    implied = {}
    for sub in rows:
        maximum = finite_number(sub.max_points)
        if maximum is None:
            if sub.question_id not in implied:
                question = questions[sub.question_id]
                implied[sub.question_id] = read_rubric(question.reference_solution, labels[sub.question_id],
                                                       question.full_score).maxima
            maximum = finite_number(implied[sub.question_id].get(sub.label))
        out[sub.question_id].append((sub.label, maximum))
    return out


def answers(*, exam=None, limit=None, sources=DEFAULT_SOURCES):
    queryset = (Response.objects.filter(gold_status__in=AGREED_GOLD).exclude(transcript="")
                .select_related("question").order_by("question_id", "id"))
    queryset = queryset.filter(source__in=[s for s in sources if s != PROBE_DERIVED])
    if exam not in (None, ""):
        queryset = queryset.filter(question__exam_id=int(getattr(exam, "pk", exam)))
    if limit:
        queryset = queryset[: int(limit)]
    return list(queryset)


def clean_sources(sources) -> tuple[str, ...]:
    """The chosen groups in SUBSETS order (None: human and synthetic); ValueError on an unknown one."""
    chosen = DEFAULT_SOURCES if not sources else tuple(str(s).strip().lower() for s in sources)
    unknown = [s for s in chosen if s not in SUBSETS]
    if unknown:
        raise ValueError(", ".join(unknown))
    return tuple(s for s in SUBSETS if s in chosen)


def error_segments(*, exam=None, unit=GeometrySegment.Unit.SUB_QUESTION, limit=None,
                   sources=DEFAULT_SOURCES) -> tuple[list[Segment], dict]:
    """The error segments of the answers with an agreed gold (of the chosen `sources`: human,
    synthetic, probe-derived), and {reason: count} of what was left out."""
    skipped = Counter()
    segments = []
    if any(s != PROBE_DERIVED for s in sources):
        responses = answers(exam=exam, limit=limit, sources=sources)
        if unit == GeometrySegment.Unit.STEP_LABEL:
            segments = _step_label_segments(responses, skipped)
        else:
            segments = _sub_question_segments(responses, skipped)
    if PROBE_DERIVED in sources:
        segments += _probe_segments(exam=exam, unit=unit, limit=limit, skipped=skipped)
    return segments, dict(skipped)


def _sub_question_segments(responses, skipped):
    questions = {r.question_id: r.question for r in responses}
    subs = _sub_questions(questions)
    experts = _expert_points([r.pk for r in responses])
    segments = []
    for response in responses:
        question = response.question
        common = _common(response)
        gold, full = finite_number(response.gold_score), finite_number(question.full_score)
        labels = subs.get(question.pk) or []
        if len(labels) <= 1:
            if gold is None or full is None or full <= 0:
                skipped["no gold or full score"] += 1
            elif gold < full - EPS:
                sub_id = labels[0][0] if labels else ""
                segments.append(Segment(response.transcript, sub_id=sub_id, real_score=gold, max_score=full, **common))
            continue
        points = experts.get(response.pk, {})
        spans = None
        for label, maximum in labels:
            real = points.get(label)
            if real is None:
                skipped["no expert points for the sub-question"] += 1
                continue
            if maximum is None:
                skipped["no full points for the sub-question"] += 1
                continue
            if real >= maximum - EPS:
                continue
            if spans is None:
                spans = sub_question_spans(response.transcript, [name for name, _ in labels])
            if label not in spans:
                skipped["sub-question not found in the text"] += 1
                continue
            start, end = spans[label]
            text = response.transcript[start:end].strip()
            if not text:
                skipped["sub-question not found in the text"] += 1
                continue
            segments.append(Segment(text, sub_id=label, real_score=real, max_score=maximum, **common))
    return segments


def derived_answers(*, exam=None, limit=None) -> list[DerivedAnswer]:
    """The sensitivity probes' derived answers (one per response, probe and text), oldest first."""
    queryset = (DerivedAnswer.objects.filter(probe__in=SENSITIVITY_PROBES).exclude(text="")
                .select_related("response__question").order_by("response__question_id", "response_id", "probe", "id"))
    if exam not in (None, ""):
        queryset = queryset.filter(response__question__exam_id=int(getattr(exam, "pk", exam)))
    seen, rows = set(), []
    for derived in queryset.iterator():
        key = (derived.response_id, derived.probe, text_hash(derived.text))
        if key in seen:
            continue
        seen.add(key)
        rows.append(derived)
        if limit and len(rows) >= int(limit):
            break
    return rows


def _probe_segments(*, exam, unit, limit, skipped):
    rows = derived_answers(exam=exam, limit=limit)
    questions = {d.response.question_id: d.response.question for d in rows}
    subs = _sub_questions(questions)
    segments = []
    for derived in rows:
        response, question = derived.response, derived.response.question
        text, point = derived.text, change_point(derived.original_text, derived.text)
        common = dict(_common(response), subset=PROBE_DERIVED, source=PROBE_DERIVED, gold=None, probe=derived.probe)
        labels = subs.get(question.pk) or []
        maxima = dict(labels)
        if unit == GeometrySegment.Unit.STEP_LABEL:
            if derived.probe != "arithmetic-slip":
                skipped["probe removed text: no span"] += 1
                continue
            start, end = line_at(text, point)
            spans = sub_question_spans(text, [name for name, _ in labels]) if len(labels) > 1 else {}
            label = span_at(spans, point) or (labels[0][0] if len(labels) == 1 else "")
            piece = text[start:end].strip()
            if piece:
                segments.append(Segment(piece, sub_id=f"{label}#{derived.probe}", unit=GeometrySegment.Unit.STEP_LABEL,
                                        real_score=None, max_score=maxima.get(label), **common))
            continue
        if len(labels) <= 1:
            segments.append(Segment(text.strip(), sub_id=labels[0][0] if labels else "", real_score=None,
                                    max_score=finite_number(question.full_score), **common))
            continue
        spans = sub_question_spans(text, [name for name, _ in labels])
        label = span_at(spans, point)
        piece = text[spans[label][0]:spans[label][1]].strip() if label else ""
        if not piece:
            skipped["probe change not in a sub-question"] += 1
            continue
        segments.append(Segment(piece, sub_id=label, real_score=None, max_score=maxima.get(label), **common))
    return segments


def _common(response):
    question = response.question
    return {
        "sample_id": response.student_id, "question": question.statement, "question_key": question.statement_hash,
        "subset": response.source, "source": response.source, "gold": finite_number(response.gold_score),
        "full_points": finite_number(question.full_score), "response_id": response.pk,
    }


def _step_label_segments(responses, skipped):
    by_id = {r.pk: r for r in responses}
    rows = (StepLabel.objects.filter(label__response_id__in=list(by_id), label__submitted=True)
            .exclude(verdict=StepLabel.Verdict.CORRECT).select_related("sub_question", "label").order_by("label__response_id", "start", "id"))
    segments = []
    for step in rows:
        response = by_id[step.label.response_id]
        text = ""
        if step.start is not None and step.end is not None and not step.needs_review:
            text = response.transcript[step.start : step.end].strip()
        if not text:
            skipped["span not placed in the text"] += 1
            continue
        sub = step.sub_question
        segments.append(Segment(
            text, sub_id=f"{sub.label if sub else ''}#{step.pk}", unit=GeometrySegment.Unit.STEP_LABEL,
            real_score=finite_number(step.awarded_points), max_score=finite_number(sub.max_points) if sub else None,
            **_common(response),
        ))
    return segments


def segments_jsonl(segments) -> str:
    return "".join(json.dumps(s.as_jsonl(), ensure_ascii=False) + "\n" for s in segments)


def run_segments(run: GeometryRun) -> list[Segment]:
    """A run's segments as collected (for the JSONL download)."""
    rows = run.items.order_by("id")
    return [Segment(
        row.text, sample_id=row.sample_id, question=row.question, question_key=row.question_key, sub_id=row.sub_id,
        subset=row.subset, real_score=row.real_score, max_score=row.max_score, source=row.source, unit=row.unit,
        gold=row.gold, full_points=row.full_points, response_id=row.response_id, probe=row.probe,
    ) for row in rows]


# --- runs ------------------------------------------------------------------------------------

def _with_counts(queryset):
    return queryset.annotate(
        n_pending=Count("items", filter=Q(items__state=GeometrySegment.State.PENDING)),
        n_ok=Count("items", filter=Q(items__state=GeometrySegment.State.OK)),
        n_error=Count("items", filter=Q(items__state=GeometrySegment.State.ERROR)),
        last_activity=Max("items__finished"),
    )


def _progress(run) -> dict:
    is_stalled = stalled(run.status, run.last_activity, run.resumed or run.created)
    total, pending = run.n_items, run.n_pending
    analysing = run.status == GeometryRun.Status.DONE and run.analysis_state in ("", GeometryRun.Analysis.RUNNING)
    analysis_stalled = analysis_lost(run)
    return {
        "id": run.pk, "kind": run.kind, "status": run.status, "total": total, "done": total - pending,
        "pending": pending, "ok": run.n_ok, "error": run.n_error,
        "percent": round(100 * (total - pending) / total) if total else 100,
        "analysis": run.analysis_state or "waiting", "analysis_error": run.analysis_error,
        "finished": run.status != GeometryRun.Status.RUNNING and (not analysing or analysis_stalled),
        "stalled": is_stalled or analysis_stalled,
        "can_cancel": run.status == GeometryRun.Status.RUNNING or analysing,
        "can_resume": run.status == GeometryRun.Status.CANCELLED or is_stalled or analysis_stalled
                      or run.analysis_state == GeometryRun.Analysis.FAILED,
    }


def analysis_lost(run: GeometryRun) -> bool:
    """An analysis still "running" long after the run ended: its worker died (resume analyses again)."""
    if run.analysis_state != GeometryRun.Analysis.RUNNING or run.finished is None:
        return False
    return (timezone.now() - run.finished).total_seconds() > ANALYSIS_STALL_SECONDS


def run_progress(run: GeometryRun) -> dict:
    return _progress(_with_counts(GeometryRun.objects.filter(pk=run.pk)).get())


def recent_runs(limit=30) -> list[tuple]:
    runs = _with_counts(GeometryRun.objects.select_related("endpoint", "created_by")).order_by("-created", "-id")[:limit]
    return [(run, _progress(run)) for run in runs]


def get_run(pk) -> GeometryRun:
    return GeometryRun.objects.select_related("endpoint").get(pk=pk)


def latest_results(kind: str) -> dict | None:
    """The results of the newest analysed run of this kind (for the methods report), or None."""
    run = GeometryRun.objects.filter(kind=kind, analysis_state=GeometryRun.Analysis.DONE).order_by("-analysed", "-id").first()
    return run.results if run else None
