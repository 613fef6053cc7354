"""Error-geometry and step-surprisal runs: collect the segments, fetch vectors or log-probabilities
from a served model (or use the lexical baseline), then analyse.

Invariants (on top of grading/runs/engine.py, the one run engine: epochs, cancel, resume, claims):

- A run's segments are fixed when it starts (one GeometrySegment per error segment, with its
  rule-based steps); the analysis reads only them.
- Calls go through the judges' transport (llm.send_request: the endpoint
  record's key allow-list, limits, retries and sender threads).
- Vectors are cached by (model, text hash) and transition figures by (model, prompt hash), and
  stored before the segments that need them are marked done: a killed chunk, a resume or a
  second run finds them and asks the endpoint nothing again.
- A worker claims segments (owner run:epoch:task, lease) and writes only where it still owns the
  claim; a redelivered or resumed chunk takes over stale claims (grading.runs.claims).
- The analysis runs once the run is done (claimed by a conditional update, so two chunks that
  finish together analyse once); its results are a pure function of the segments, their data
  and the seeds. A failed analysis is retried by resume.
"""
from __future__ import annotations

import json
import time
import uuid
from collections import Counter
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, wait

import numpy as np
from django.db import transaction
from django.db.models import Count, Max
from django.utils import timezone
from django.utils.translation import gettext
from threadpoolctl import threadpool_limits

import llm
from annotation import steps
from core.numbers import json_int
from egress import purposes
from grading.judges import services as judge_services
from grading.judges.models import LlmEndpoint
from grading.judges.services import RunRefused
from grading.runs import claims
from grading.runs.engine import CANCEL_CHECK_SECONDS, ChunkReport, RunEngine, reopen_failed_items

from . import logprobs, selectors, stats, tasks
from .models import GeometryRun, GeometrySegment, SegmentVector, TransitionScore

OPEN_STATES = (GeometrySegment.State.PENDING, GeometrySegment.State.ERROR)
EMBED_BATCH = 16
DEFAULT_TOP_K = 5
MAX_TRANSITIONS = 40  # per segment: a segment with more steps is scored on its first 40 transitions
SPLITTERS = ("rule", "llm")
LOGPROB_SHAPES = ("echo", "prompt_logprobs")  # how /v1/completions is asked (completion_body)
SPLIT_PROMPT = (
    "Split the text below into its atomic reasoning steps. Copy the text exactly: do not change, add, drop "
    "or reorder any character, only decide where each step ends. Write one step per line as "
    "\"Step 1: ...\", \"Step 2: ...\", and nothing else.\n\nText:\n{text}"
)


def _open_ids(run):
    return list(run.items.filter(state__in=OPEN_STATES).order_by("id").values_list("pk", flat=True))


GEOMETRY_RUNS = RunEngine(
    run_model=GeometryRun,
    chunk_task=tasks.run_geometry_chunk_task,
    open_ids=_open_ids,
    nothing_left=lambda run_id: not GeometrySegment.objects.filter(
        run_id=run_id, state=GeometrySegment.State.PENDING).exists(),
    on_resume=reopen_failed_items,
    name="studies.geometry.services.GEOMETRY_RUNS",
    last_activity=lambda run: run.items.aggregate(last=Max("finished"))["last"],
    endpoint_of=lambda run: run.endpoint,
)


# --- starting ---------------------------------------------------------------------------------

def parse_segments_jsonl(raw: str | bytes, *, group: str | None = None, file_name: str = "") -> list[selectors.Segment]:
    """Segments from a JSONL file (one object per line), ours or the paper's as released.

    Required on each line: segment_text, sample_id, question, sub_id, real_score, max_score, and the
    group: the line's analysis_subset (human, synthetic, probe-derived, or the paper's Human / LLM),
    else `group` (the command's --segments-group, the page's field), else the file name (the paper's
    human_error_segments.jsonl / llm_error_segments.jsonl carry no analysis_subset). A line whose own
    group differs from `group` is refused. A line with ``steps`` (the paper's step-split files) keeps
    them: the surprisal study scores those steps. Raises RunRefused naming the line and the field."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise RunRefused(gettext("The segments file is not UTF-8 text.")) from exc
    if group not in (None, "") and selectors.group_of(group) is None:
        raise RunRefused(gettext("Unknown group %(group)s; choose human, synthetic or probe-derived.") % {"group": repr(group)})
    default = selectors.group_of(group) if group else selectors.group_from_file_name(file_name)
    segments = []
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line, parse_int=json_int)
        except (ValueError, RecursionError) as exc:  # a ValueError of an over-long integer has no .msg
            raise RunRefused(gettext("Line %(number)s: not JSON (%(msg)s).")
                             % {"number": number, "msg": getattr(exc, "msg", exc)}) from None
        if not isinstance(record, dict):
            raise RunRefused(gettext("Line %(number)s: a JSON object is expected.") % {"number": number})
        missing = [key for key in selectors.BUNDLE_FIELDS if key not in record]
        if "analysis_subset" not in record and default is None:
            missing.append("analysis_subset")
        if missing == ["analysis_subset"]:
            raise RunRefused(gettext(
                "Line %(number)s: no group (analysis_subset): give it with --segments-group or the page's \"Group of "
                "the file's segments\", or name the file human_... or llm_... as the paper does.") % {"number": number})
        if missing:
            raise RunRefused(gettext("Line %(number)s: missing %(join)s.") % {"number": number, "join": ', '.join(missing)})
        text = record["segment_text"]
        if not isinstance(text, str) or not text.strip():
            raise RunRefused(gettext("Line %(number)s: segment_text must be non-empty text.") % {"number": number})
        subset = default
        if "analysis_subset" in record:
            subset = selectors.group_of(record["analysis_subset"])
            if subset is None:
                raise RunRefused(gettext("Line %(number)s: analysis_subset must be human, synthetic or probe-derived, not "
                                         "%(analysis_subset)s.") % {"number": number, "analysis_subset": repr(record['analysis_subset'])})
            if group and subset != selectors.group_of(group):
                raise RunRefused(gettext("Line %(number)s: analysis_subset %(line)s, but the group given is %(group)s.")
                                 % {"number": number, "line": repr(record["analysis_subset"]), "group": group})
        scores = {}
        for key in ("real_score", "max_score"):
            value = record[key]
            scores[key] = None if value in (None, "") else selectors.finite_number(value)
            if value not in (None, "") and scores[key] is None:
                raise RunRefused(gettext("Line %(number)s: %(key)s must be a number.") % {"number": number, "key": key})
        given_steps = record.get("steps")
        if given_steps is not None and not (isinstance(given_steps, list) and given_steps
                                            and all(isinstance(step, str) and step.strip() for step in given_steps)):
            raise RunRefused(gettext("Line %(number)s: steps must be a list of non-empty texts.") % {"number": number})
        question = str(record["question"])
        segments.append(selectors.Segment(
            text, sample_id=str(record["sample_id"])[:200], question=question,
            question_key=selectors.text_hash(question), sub_id=str(record["sub_id"])[:64], subset=subset,
            source=str(record.get("source") or "imported")[:16], probe=str(record.get("probe") or "")[:40],
            steps=list(given_steps) if given_steps else None, **scores,
        ))
    if not segments:
        raise RunRefused(gettext("The segments file holds no segment."))
    return segments


def _spans_of(segment, kind):
    """(text, [[start, end]], splitter) of a segment's row: the steps its file gives when they are slices
    of its text ("file"), or, for step surprisal, those steps joined by newlines as its text ("file-joined":
    the paper's step-split files leave out headings such as "(2) Solution:"); else the rule-based split."""
    if segment.steps:
        placed = steps.align_steps(segment.text, segment.steps)
        if placed is not None:
            return segment.text, [[s.start, s.end] for s in placed], "file"
        if kind == GeometryRun.Kind.SURPRISAL:
            parts = [step.strip() for step in segment.steps]
            text, spans, position = "\n".join(parts), [], 0
            for part in parts:
                spans.append([position, position + len(part)])
                position += len(part) + 1
            return text, spans, "file-joined"
    return segment.text, [[s.start, s.end] for s in steps.split_steps(segment.text)], "rule"


def start_run(*, kind=GeometryRun.Kind.GEOMETRY, backend=GeometryRun.Backend.LEXICAL, endpoint=None, model="",
              exam=None, unit=GeometrySegment.Unit.SUB_QUESTION, limit=None, segments=None, seed=42,
              bootstrap=1000, permutations=1000, top_k=DEFAULT_TOP_K, cluster=True, splitter="rule", splitter_model="",
              splitter_endpoint=None, logprobs_shape="echo", sources=None, user=None, enqueue=True, chunk_size=None) -> GeometryRun:
    """Collect the segments (or take `segments`, e.g. from a JSONL file), create the run and its
    segments, and queue the work (after the commit). With ``enqueue=False`` call `run_inline`.

    ``splitter="llm"`` (surprisal runs): each segment's steps are asked of `splitter_model` (by
    default the run's model) on `splitter_endpoint` (by default the run's) as "Step 1: ..." lines, kept only when they
    reproduce the segment's text (steps.align_steps), else the rule-based split is kept and counted."""
    if kind not in GeometryRun.Kind.values:
        raise RunRefused(gettext("Unknown study %(kind)s.") % {"kind": repr(kind)})
    if kind == GeometryRun.Kind.SURPRISAL:
        backend = GeometryRun.Backend.SERVED
    if backend == GeometryRun.Backend.SERVED:
        if endpoint is None or not (model or "").strip():
            raise RunRefused(gettext("A served model needs an endpoint and a model name."))
        judge_services.check_endpoint_usable(endpoint)
    elif backend != GeometryRun.Backend.LEXICAL:
        raise RunRefused(gettext("Unknown embedding backend %(backend)s.") % {"backend": repr(backend)})
    if limit is not None and int(limit) < 1:
        raise RunRefused(gettext("--limit must be at least 1."))
    if splitter not in SPLITTERS:
        raise RunRefused(gettext("Unknown splitter %(splitter)s; choose rule or llm.") % {"splitter": repr(splitter)})
    if logprobs_shape not in LOGPROB_SHAPES:
        raise RunRefused(gettext("Unknown log-probability form %(shape)s; choose echo or prompt_logprobs.")
                         % {"shape": repr(logprobs_shape)})
    if splitter == "llm" and kind != GeometryRun.Kind.SURPRISAL:
        raise RunRefused(gettext("The LLM splitter serves the surprisal study (geometry embeds whole segments)."))
    if splitter_endpoint is not None and splitter == "llm":
        judge_services.check_endpoint_usable(splitter_endpoint)
    for name, value, low in (("bootstrap", bootstrap, 0), ("permutations", permutations, 0), ("top_k", top_k, 1)):
        if int(value) < low:
            raise RunRefused(gettext("%(name)s must be at least %(low)s.") % {"name": name, "low": low})
    try:
        sources = selectors.clean_sources(sources)
    except ValueError as exc:
        raise RunRefused(gettext("Unknown source %(source)s; choose human, synthetic or probe-derived.")
                         % {"source": exc}) from exc
    skipped = {}
    if segments is None:
        # --limit counts segments, spread over the questions (limit_segments), never the first answers
        # of the first questions, which may hold no error at all.
        segments, skipped = selectors.error_segments(exam=exam, unit=unit, sources=sources)
        source = "labels"
        if not segments:
            reasons = "; ".join(f"{reason}: {n}" for reason, n in sorted(skipped.items())) or gettext("none")
            raise RunRefused(gettext(
                "No error segment in this selection (answers with an agreed gold that lost points, or derived answers "
                "of a sensitivity probe). Left out: %(reasons)s.") % {"reasons": reasons})
    else:
        source = "jsonl"
    found = len(segments)
    segments = selectors.limit_segments(segments, limit)
    if not segments:
        raise RunRefused(gettext("No error segment in this selection (answers with an agreed gold that lost points, "
                                 "or derived answers of a sensitivity probe)."))
    selection = {"source": source, "unit": unit, **({"sources": list(sources)} if source == "labels" else {}), **({"exam": int(getattr(exam, "pk", exam))} if exam not in (None, "") else {}),
                 **({"limit": int(limit), "segments_found": found} if limit else {})}
    params = {"seed": int(seed), "bootstrap": int(bootstrap), "permutations": int(permutations), "top_k": int(top_k),
              "cluster": bool(cluster), "splitter": splitter, "logprobs": logprobs_shape,
              "splitter_model": (splitter_model or model or "").strip() if splitter == "llm" else "",
              "splitter_endpoint": splitter_endpoint.pk if splitter_endpoint is not None and splitter == "llm" else None,
              "k_neighbours": stats.K_NEIGHBOURS,
              "umap": stats.UMAP_PARAMS, "hdbscan": stats.HDBSCAN_PARAMS, "gmm": {"dims": stats.GMM_DIMS,
              "k": [min(stats.GMM_KS), max(stats.GMM_KS)], "covariance": "diag"}}
    if backend == GeometryRun.Backend.LEXICAL:
        params["lexical"] = stats.LEXICAL_PARAMS
    lexical = backend == GeometryRun.Backend.LEXICAL
    with transaction.atomic():
        run = GeometryRun.objects.create(
            kind=kind, backend=backend, endpoint=endpoint if not lexical else None, model="" if lexical else model.strip(),
            selection=selection, params=params, seed=int(seed), skipped=skipped, created_by=user,
            chunk_size=chunk_size or (64 if kind == GeometryRun.Kind.GEOMETRY else 8),
        )
        rows = []
        for segment in segments:
            text, spans, splitter = _spans_of(segment, kind)
            rows.append(GeometrySegment(
                run=run, response_id=segment.response_id, sample_id=segment.sample_id, question=segment.question,
                question_key=segment.question_key, sub_id=segment.sub_id, unit=segment.unit, subset=segment.subset,
                source=segment.source, real_score=segment.real_score, max_score=segment.max_score, gold=segment.gold,
                full_points=segment.full_points, text=text, text_hash=selectors.text_hash(text),
                probe=segment.probe, steps=spans, splitter=splitter,
                state=GeometrySegment.State.OK if lexical else GeometrySegment.State.PENDING,
                finished=timezone.now() if lexical else None,
            ))
        GeometrySegment.objects.bulk_create(rows, batch_size=500)
        run.n_items = len(rows)
        if lexical:
            run.status, run.finished = GeometryRun.Status.DONE, timezone.now()
        run.save(update_fields=["n_items", "status", "finished"])
        if enqueue:
            if lexical:
                transaction.on_commit(lambda: tasks.analyse_geometry_run_task.delay(run.pk))
            else:
                GEOMETRY_RUNS.enqueue_on_commit(run)
    return run


def find_endpoint(base_url: str, api_key_env: str):
    """The endpoint record for a command's --base-url / --api-key-env (as judge_setting add finds it)."""
    return judge_services.find_or_create_endpoint(base_url, api_key_env)


ANALYSIS_OPEN = (GeometryRun.Analysis.WAITING, GeometryRun.Analysis.RUNNING)


def cancel_run(run: GeometryRun) -> GeometryRun:
    """Stop a run: while its data is fetched, through the run engine (calls in flight finish);
    once fetched, its analysis: one waiting is never started, one running stops at its next
    check (`analysis_live`, every CANCEL_CHECK_SECONDS between stages and resamples)."""
    run = GEOMETRY_RUNS.cancel(run)
    GeometryRun.objects.filter(pk=run.pk, status=GeometryRun.Status.DONE, analysis_state__in=ANALYSIS_OPEN).update(
        status=GeometryRun.Status.CANCELLED, analysis_state=GeometryRun.Analysis.CANCELLED, finished=timezone.now())
    run.refresh_from_db()
    return run


def resume_run(run: GeometryRun, *, enqueue: bool = True) -> GeometryRun:
    """Resume open work; a run whose work is all done but whose analysis failed, never ran or lost
    its worker (`selectors.analysis_lost`) is analysed again."""
    epoch = run.epoch
    run = GEOMETRY_RUNS.resume(run, enqueue=enqueue)
    if run.epoch != epoch:  # work reopened: the figures are made again once it is done
        GeometryRun.objects.filter(pk=run.pk).update(analysis_state=GeometryRun.Analysis.WAITING, analysis_error="")
        run.refresh_from_db()
        return run
    if run.status == GeometryRun.Status.CANCELLED and run.analysis_state == GeometryRun.Analysis.CANCELLED:
        # Cancelled during its analysis (no work was open): done again, and analysed again.
        GeometryRun.objects.filter(pk=run.pk, status=GeometryRun.Status.CANCELLED).update(
            status=GeometryRun.Status.DONE, resumed=timezone.now())
        run.refresh_from_db()
    again = [GeometryRun.Analysis.FAILED, GeometryRun.Analysis.CANCELLED,
             *([GeometryRun.Analysis.RUNNING] if selectors.analysis_lost(run) else [])]
    if run.status == GeometryRun.Status.DONE and run.analysis_state in ("", *again):
        GeometryRun.objects.filter(pk=run.pk, analysis_state__in=again).update(
            analysis_state=GeometryRun.Analysis.WAITING, analysis_error="")
        if enqueue:
            pk = run.pk
            transaction.on_commit(lambda: tasks.analyse_geometry_run_task.delay(pk))
        run.refresh_from_db()
    return run


def run_inline(run: GeometryRun, *, sleep=time.sleep) -> GeometryRun:
    """Do a run's open work and its analysis in this process (no Celery worker needed)."""
    if run.status == GeometryRun.Status.RUNNING:
        GEOMETRY_RUNS.run_inline(run, process_chunk, sleep=sleep, analyse_after=lambda run_id: None)
    analyse(run.pk)
    run.refresh_from_db()
    return run


# --- the chunk --------------------------------------------------------------------------------

def process_chunk(run_id: int, epoch: int, item_ids: list[int], task_id: str | None = None,
                  sleep=time.sleep, analyse_after: Callable | None = None) -> ChunkReport:
    """Fetch what a chunk of segments needs (vectors, or log-probabilities of their step
    transitions); the body of the Celery task. The chunk that finishes the run queues the analysis
    (`analyse_after(run_id)`, by default the Celery task after the commit)."""
    task_id = str(task_id or uuid.uuid4().hex)
    report = ChunkReport()
    run = GEOMETRY_RUNS.live_run(run_id, epoch, select_related=["endpoint"])
    if run is None:
        report.skipped = len(item_ids)
        return report
    owner = claims.owner_tag(run.pk, epoch, task_id)
    lease = claims.lease_for(run.endpoint, samples=EMBED_BATCH if run.kind == GeometryRun.Kind.GEOMETRY else MAX_TRANSITIONS)
    items = claims.claim_each(
        GeometrySegment.objects.filter(run=run, pk__in=item_ids, state__in=OPEN_STATES).order_by("id"),
        GeometrySegment.objects.filter(state__in=OPEN_STATES), run_id=run.pk, epoch=epoch, task_id=task_id,
        owner=owner, lease=lease)
    report.claimed = len(items)
    if items:
        spec = judge_services.endpoint_spec(run.endpoint)
        limiter = llm.limiter_for(spec)
        if run.kind == GeometryRun.Kind.GEOMETRY:
            _fetch_vectors(run, epoch, items, owner, spec, limiter, sleep, report)
        else:
            _fetch_transitions(run, epoch, items, owner, spec, limiter, sleep, report)
    if GEOMETRY_RUNS.finish_if_complete(run.pk, epoch):
        (analyse_after or _queue_analysis)(run.pk)
    return report


def _queue_analysis(run_id):
    transaction.on_commit(lambda: tasks.analyse_geometry_run_task.delay(run_id))


def _finish(items, owner, state, *, errors=None, figures=None):
    now = timezone.now()
    for item in items:
        fields = {"state": state, "finished": now, "claim_owner": "", "claimed_at": None,
                  "errors": (errors or [])[:20]}
        if figures is not None:
            fields["figures"] = figures.get(item.pk, [])
        GeometrySegment.objects.filter(pk=item.pk, claim_owner=owner).update(**fields)


class _Embedded:
    def __init__(self, reply):
        self.vectors = [item.embedding for item in sorted(reply.data, key=lambda d: d.index)]
        for vector in self.vectors:  # NaN, Infinity, 1e300: a bad answer of its own kind (retried)
            llm.check_finite(vector if isinstance(vector, list) else [vector], "embedding vectors")
        usage = getattr(reply, "usage", None)
        self.tokens = int(getattr(usage, "total_tokens", 0) or 0) if usage else 0


def embed(spec, model: str, texts: list[str], *, limiter=None, sleep=time.sleep) -> list[list[float]]:
    """Vectors of `texts` from an OpenAI-compatible /v1/embeddings endpoint (raises LlmCallFailed)."""
    from openai.types import CreateEmbeddingResponse  # slow import: only where a call is made

    body = {"model": model, "input": list(texts), "encoding_format": "float"}

    def request(client):
        return _Embedded(client.post("/embeddings", body=body, cast_to=CreateEmbeddingResponse))

    estimate = sum(len(t) for t in texts) // 4 + len(texts)
    sent = llm.send_request(spec, request, estimate, limiter=limiter, sleep=sleep)
    vectors = sent.reply.vectors
    if len(vectors) != len(texts) or any(not v for v in vectors):
        raise llm.LlmCallFailed("The endpoint returned a different number of vectors than texts.",
                                errors=[{"kind": "bad_response", "message": "vector count"}], attempts=sent.attempts)
    return vectors


def _store_vectors(model, vectors: dict[str, list[float]]):
    rows = [SegmentVector(model=model, text_hash=key, dims=len(v), vector=np.asarray(v, dtype=np.float32).tobytes())
            for key, v in vectors.items()]
    SegmentVector.objects.bulk_create(rows, ignore_conflicts=True, batch_size=200)


def cached_vectors(model: str, hashes) -> dict[str, np.ndarray]:
    rows = SegmentVector.objects.filter(model=model, text_hash__in=list(set(hashes))).values_list("text_hash", "vector")
    return {key: np.frombuffer(bytes(blob), dtype=np.float32) for key, blob in rows}


def _fetch_vectors(run, epoch, items, owner, spec, limiter, sleep, report):
    known = set(cached_vectors(run.model, [i.text_hash for i in items]))
    report.cached = sum(1 for i in items if i.text_hash in known)
    ready = [i for i in items if i.text_hash in known]
    _finish(ready, owner, GeometrySegment.State.OK)
    waiting = [i for i in items if i.text_hash not in known]
    texts = {}
    for item in waiting:
        texts.setdefault(item.text_hash, item.text)
    keys = list(texts)
    for start in range(0, len(keys), EMBED_BATCH):
        if not GEOMETRY_RUNS.is_live(run.pk, epoch):
            claims.release(GeometrySegment, waiting, owner)
            return
        batch = keys[start : start + EMBED_BATCH]
        group = [i for i in waiting if i.text_hash in set(batch)]
        token = llm.CancelToken(check=lambda: not GEOMETRY_RUNS.is_live(run.pk, epoch))  # a cancel stops a 429 wait
        try:
            with llm.labelled(purposes.EMBEDDINGS, answer_ids=sorted({i.response_id for i in group if i.response_id})), \
                    llm.cancellable(token):
                vectors = embed(spec, run.model, [texts[k] for k in batch], limiter=limiter, sleep=sleep)
        except llm.CallCancelled:  # the run stopped (or the worker is stopping): the work stays open
            claims.release(GeometrySegment, waiting, owner)
            return
        except llm.LlmCallFailed as exc:
            _finish(group, owner, GeometrySegment.State.ERROR, errors=exc.errors)
            report.recorded += len(group)
            continue
        _store_vectors(run.model, dict(zip(batch, vectors)))  # stored first: a kill now loses no call
        _finish(group, owner, GeometrySegment.State.OK)
        report.recorded += len(group)


class _Scored:
    def __init__(self, reply):
        choice = reply.choices[0] if reply.choices else None
        self.choice = choice
        if choice is not None:  # NaN, ±Infinity, 1e300: a bad answer of its own kind (retried), not a gap
            llm.check_finite(_raw_logprobs(choice), "log-probabilities")
        usage = getattr(reply, "usage", None)
        self.prompt_tokens = getattr(usage, "prompt_tokens", None) if usage else None
        self.tokens = int(getattr(usage, "total_tokens", 0) or 0) if usage else 0


def _raw_logprobs(choice):
    """Every log-probability number of a completion choice as the server sent it (echoed
    ``logprobs``, vLLM's ``prompt_logprobs``), before the reader (logprobs.read) skips what it cannot use."""
    def get(obj, key):
        return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)

    values = []
    echoed = get(choice, "logprobs")
    if echoed is not None:
        values.extend(v for v in get(echoed, "token_logprobs") or () if isinstance(v, (int, float)))
        for top in get(echoed, "top_logprobs") or ():
            values.extend(v for v in (top.values() if isinstance(top, dict) else ()) if isinstance(v, (int, float)))
    for entry in get(choice, "prompt_logprobs") or ():
        for row in (entry.values() if isinstance(entry, dict) else ()):
            value = row.get("logprob") if isinstance(row, dict) else None
            if isinstance(value, (int, float)):
                values.append(value)
    above = [v for v in values if v > 1e-6]
    if above:  # a probability above 1 (and exp() of a huge one overflows)
        raise llm.NonFiniteResponse(f"The answer's log-probabilities are above 0: {float(above[0])!r}.")
    return values


def transition_prompts(text: str, spans) -> list[tuple[str, int]]:
    """[(prompt, context length)] for each transition k -> k+1 of a segment's steps: the prompt is
    steps 0..k joined by newlines, a newline, then step k+1 (at most MAX_TRANSITIONS)."""
    pieces = [text[a:b] for a, b in spans]
    prompts = []
    for k in range(1, min(len(pieces), MAX_TRANSITIONS + 1)):
        context = "\n".join(pieces[:k])
        prompts.append((f"{context}\n{pieces[k]}", len(context)))
    return prompts


def completion_body(model: str, prompt: str, top_k: int, shape: str = "echo") -> dict:
    """The /v1/completions request of one transition: ``echo`` + ``logprobs`` (the OpenAI legacy
    form), or vLLM's ``prompt_logprobs`` (an extra parameter of its completions API). max_tokens
    is 1 (some servers refuse 0; the generated token is ignored)."""
    body = {"model": model, "prompt": prompt, "max_tokens": 1, "temperature": 0}
    if shape == "prompt_logprobs":
        body["prompt_logprobs"] = int(top_k)
    else:
        body.update(echo=True, logprobs=int(top_k))
    return body


def score_prompt(spec, model: str, prompt: str, context_end: int, *, top_k=DEFAULT_TOP_K, shape="echo",
                 limiter=None, sleep=time.sleep) -> dict:
    """The figures of one transition (stats.transition_figures) from /v1/completions: the reply's
    ``prompt_logprobs`` (vLLM) when it has them, else its echoed ``logprobs`` (logprobs.read)."""
    from openai.types import Completion  # slow import: only where a call is made

    body = completion_body(model, prompt, top_k, shape)

    def request(client):
        return _Scored(client.post("/completions", body=body, cast_to=Completion))

    sent = llm.send_request(spec, request, len(prompt) // 4 + 2, limiter=limiter, sleep=sleep)
    try:
        if sent.reply.choice is None:
            raise logprobs.ShapeError("the endpoint returned no choice")
        read = logprobs.read(sent.reply.choice, prompt, sent.reply.prompt_tokens)
    except logprobs.ShapeError as exc:
        raise llm.LlmCallFailed(f"No usable prompt log-probabilities: {exc}.",
                                errors=[{"kind": "bad_response", "message": str(exc)}], attempts=sent.attempts) from exc
    figures = stats.transition_figures(read.tokens, read.token_logprobs, read.top_logprobs, read.offsets,
                                       context_end, len(prompt), top_k=int(top_k))
    if figures is None:  # the tokenizer gave the step no token of its own: this transition is left out
        return {"dropped": "no step tokens"}
    return figures


PROMPT_KEY_VERSION = 2  # 2: the top-k dictionary cut to k before LL's exactness is judged


def _prompt_key(prompt, context_end, top_k):
    return selectors.text_hash(f"v{PROMPT_KEY_VERSION}\0{top_k}\0{context_end}\0{prompt}")


def llm_split(spec, model: str, text: str, *, limiter=None, sleep=time.sleep):
    """(spans, splitter): the LLM's steps as [[start, end]] of `text` and "llm", or the rule-based
    split and "llm-fallback" when its answer does not reproduce the text. Raises LlmCallFailed."""
    call = llm.CallSpec(model=model, temperature=0.0, max_tokens=len(text) + 512)
    reply = llm.complete(spec, call, [{"role": "user", "content": SPLIT_PROMPT.format(text=text)}], limiter=limiter,
                         sleep=sleep)
    placed = steps.align_steps(text, steps.parse_step_lines(reply.text))
    if placed is None:
        return [[s.start, s.end] for s in steps.split_steps(text)], "llm-fallback"
    return [[s.start, s.end] for s in placed], "llm"


def _split_with_llm(run, items, owner, spec, limiter, sleep):
    """Ask the splitter model for the steps of the segments not split by it yet; a failed call
    leaves its segment failed (resume asks again); returns the items that can be scored."""
    todo = [item for item in items if item.splitter == "rule"]  # steps from a file are kept as given
    if not todo:
        return items
    model = run.params.get("splitter_model") or run.model
    pool = llm.call_pool()
    futures = {pool.submit(llm.with_label(llm_split, purposes.STEP_SPLIT, answer_ids=[item.response_id]), spec, model,
                           item.text, limiter=limiter, sleep=sleep): item for item in todo}
    failed = set()
    for future, item in futures.items():
        try:
            item.steps, item.splitter = future.result()
        except llm.LlmCallFailed as exc:
            _finish([item], owner, GeometrySegment.State.ERROR, errors=exc.errors)
            failed.add(item.pk)
            continue
        GeometrySegment.objects.filter(pk=item.pk, claim_owner=owner).update(steps=item.steps, splitter=item.splitter)
    return [item for item in items if item.pk not in failed]


def _fetch_transitions(run, epoch, items, owner, spec, limiter, sleep, report):
    top_k = int(run.params.get("top_k") or DEFAULT_TOP_K)
    shape = run.params.get("logprobs") or "echo"
    if run.params.get("splitter") == "llm":
        splitter_spec, splitter_limiter = spec, limiter
        if run.params.get("splitter_endpoint"):  # a chat model served elsewhere than the causal model
            splitter_spec = judge_services.endpoint_spec(LlmEndpoint.objects.get(pk=run.params["splitter_endpoint"]))
            splitter_limiter = llm.limiter_for(splitter_spec)
        items = _split_with_llm(run, items, owner, splitter_spec, splitter_limiter, sleep)
    wanted = {item.pk: transition_prompts(item.text, item.steps) for item in items}
    keys = {(p, c): _prompt_key(p, c, top_k) for prompts in wanted.values() for p, c in prompts}
    answers_of = {}  # prompt key: the answers whose segments ask it (for the provider-call log)
    for item in items:
        for prompt, context_end in wanted[item.pk]:
            answers_of.setdefault(keys[(prompt, context_end)], set()).add(item.response_id)
    known = dict(TransitionScore.objects.filter(model=run.model, prompt_hash__in=set(keys.values()))
                 .values_list("prompt_hash", "figures"))
    report.cached = sum(1 for key in keys.values() if key in known)
    todo = {key: prompt for prompt, key in keys.items() if key not in known}
    failures = {}
    pending = list(items)
    pending = _write_transitions(pending, wanted, keys, known, failures, owner)
    if todo:
        width = max(1, run.endpoint.max_concurrency)
        pool = llm.call_pool()
        queue = list(todo.items())
        futures, checked = {}, time.monotonic()
        token = llm.CancelToken()  # cancelled with the run: calls waiting out 429s send nothing more
        while queue or futures:
            while queue and len(futures) < width:
                key, (prompt, context_end) = queue.pop(0)
                score = llm.with_cancel(llm.with_label(score_prompt, purposes.SURPRISAL,
                                                       answer_ids=sorted(answers_of.get(key, ()))), token)
                futures[pool.submit(score, spec, run.model, prompt, context_end, top_k=top_k, shape=shape,
                                    limiter=limiter, sleep=sleep)] = key
            done, _ = wait(list(futures), timeout=CANCEL_CHECK_SECONDS, return_when=FIRST_COMPLETED)
            fresh = []
            for future in done:
                key = futures.pop(future)
                try:
                    known[key] = future.result()
                    fresh.append(TransitionScore(model=run.model, prompt_hash=key, figures=known[key]))
                except llm.CallCancelled:  # its segments stay open (released below)
                    continue
                except llm.LlmCallFailed as exc:
                    failures[key] = exc.errors
                report.recorded += 1
            TransitionScore.objects.bulk_create(fresh, ignore_conflicts=True)
            pending = _write_transitions(pending, wanted, keys, known, failures, owner)
            if time.monotonic() - checked >= CANCEL_CHECK_SECONDS:
                checked = time.monotonic()
                if not GEOMETRY_RUNS.is_live(run.pk, epoch):
                    token.cancel()
                    for future in futures:
                        future.cancel()
                    break
    if pending:
        report.released = claims.release(GeometrySegment, pending, owner)


def _write_transitions(pending, wanted, keys, known, failures, owner):
    """Write each segment whose transitions are all answered (or failed); return those still waiting."""
    waiting = []
    for item in pending:
        prompts = wanted[item.pk]
        ids = [keys[p] for p in prompts]
        if any(key not in known and key not in failures for key in ids):
            waiting.append(item)
            continue
        errors = [e for key in ids if key in failures for e in failures[key]]
        figures = [{"k": index, **known[key]} for index, key in enumerate(ids) if key in known]
        state = GeometrySegment.State.ERROR if errors else GeometrySegment.State.OK
        _finish([item], owner, state, errors=errors, figures={item.pk: figures})
    return waiting


# --- the analysis -----------------------------------------------------------------------------

def analysis_live(run_id: int) -> bool:
    """Whether the run's analysis should go on (not cancelled or resumed elsewhere)."""
    return GeometryRun.objects.filter(pk=run_id, status=GeometryRun.Status.DONE,
                                      analysis_state=GeometryRun.Analysis.RUNNING).exists()


def cancel_check(run_id: int, *, every: float = CANCEL_CHECK_SECONDS, clock=time.monotonic) -> Callable[[], None]:
    """The analysis's `tick` (stats.Tick): asks the database at most every `every` seconds whether
    the analysis is still wanted, and raises stats.Cancelled once it is not."""
    last = [clock()]

    def tick():
        now = clock()
        if now - last[0] < every:
            return
        last[0] = now
        if not analysis_live(run_id):
            raise stats.Cancelled()

    return tick


def analyse(run_id: int) -> bool:
    """Analyse a done run once (the first caller claims it); True when this call analysed it (or
    stopped because the run was cancelled meanwhile: the analysis is then "cancelled")."""
    claimed = GeometryRun.objects.filter(
        pk=run_id, status=GeometryRun.Status.DONE, analysis_state=GeometryRun.Analysis.WAITING
    ).update(analysis_state=GeometryRun.Analysis.RUNNING)
    if not claimed:
        return False
    run = GeometryRun.objects.select_related("endpoint").get(pk=run_id)
    started = time.monotonic()
    tick = cancel_check(run_id)
    try:
        refuse_non_finite_segments(run)
        # One BLAS thread: the bootstraps make thousands of small SVDs, and OpenBLAS's own threads
        # spin against each other (and the other workers) on each: 1,000 resamples of the top-10
        # share took 444 s instead of 5.5 s on a loaded two-core machine (docs/studies.md, "Time").
        with threadpool_limits(limits=1):
            if run.kind == GeometryRun.Kind.GEOMETRY:
                results = geometry_results(run, tick=tick)
            else:
                results = surprisal_results(run, tick=tick)
    except stats.Cancelled:  # cancel_run already wrote the state
        GeometryRun.objects.filter(pk=run_id, analysis_state=GeometryRun.Analysis.RUNNING).update(
            analysis_state=GeometryRun.Analysis.CANCELLED)
        return True
    except Exception as exc:  # recorded for the page; resume analyses again
        GeometryRun.objects.filter(pk=run_id, analysis_state=GeometryRun.Analysis.RUNNING).update(
            analysis_state=GeometryRun.Analysis.FAILED, analysis_error=f"{type(exc).__name__}: {exc}"[:2000])
        return True
    results["elapsed_seconds"] = round(time.monotonic() - started, 2)
    try:  # a number JSON cannot hold (NaN, Infinity) must fail the analysis, never leave it "running"
        json.dumps(results, allow_nan=False)
        GeometryRun.objects.filter(pk=run_id, analysis_state=GeometryRun.Analysis.RUNNING).update(
            results=results, analysis_state=GeometryRun.Analysis.DONE, analysed=timezone.now(), analysis_error="")
    except Exception as exc:  # recorded for the page; resume analyses again
        message = gettext("The figures could not be saved (%(error)s); resume analyses again.") % {
            "error": f"{type(exc).__name__}: {exc}"[:1500]}
        GeometryRun.objects.filter(pk=run_id, analysis_state=GeometryRun.Analysis.RUNNING).update(
            analysis_state=GeometryRun.Analysis.FAILED, analysis_error=message[:2000])
    return True


def refuse_non_finite_segments(run) -> None:
    """Raise ValueError (the analysis fails with its message; resume asks the endpoint again) when
    segments failed because the endpoint answered numbers that are not finite (NaN, Infinity or
    beyond llm.MAX_MAGNITUDE: error kind "non_finite"): figures over the rest would hide a broken model."""
    bad = [errors for errors in run.items.filter(state=GeometrySegment.State.ERROR).values_list("errors", flat=True)
           if any(isinstance(e, dict) and e.get("kind") == "non_finite" for e in errors or [])]
    if bad:
        last = next(e for e in reversed(bad[0]) if isinstance(e, dict) and e.get("kind") == "non_finite")
        raise ValueError(gettext(
            "The endpoint answered numbers that are not finite (NaN, Infinity or overflowing) for %(n)s segment(s), "
            "the first: %(message)s; resume asks it again.") % {"n": len(bad), "message": str(last.get("message", ""))[:300]})


def _provenance(run) -> dict:
    lexical = run.backend == GeometryRun.Backend.LEXICAL
    endpoint = run.endpoint
    return {
        "run": run.pk,
        "backend": run.backend,
        "label": stats.LEXICAL_LABEL if lexical else "served model",
        "model": None if lexical else run.model,
        "endpoint": None if endpoint is None else {"id": endpoint.pk, "name": endpoint.name, "base_url": endpoint.base_url},
        "selection": run.selection,
        "params": run.params,
        "seeds": {"umap": run.seed, "bootstrap": run.seed, "permutation": run.seed, "gmm": run.seed,
                  "heatmap_sample": run.seed, "lexical_svd": run.seed if lexical else None},
        "skipped": run.skipped,
    }


def geometry_results(run, *, tick=None) -> dict:
    items = list(run.items.filter(state=GeometrySegment.State.OK).order_by("id")
                 .values_list("id", "text", "text_hash", "subset", "question_key"))
    failed = run.items.exclude(state=GeometrySegment.State.OK).count()
    if run.backend == GeometryRun.Backend.LEXICAL:
        matrix = stats.lexical_vectors([row[1] for row in items], seed=run.seed, tick=tick)
    else:
        cached = cached_vectors(run.model, [row[2] for row in items])
        dims = {len(v) for v in cached.values()}
        if len(dims) > 1:
            raise ValueError(gettext("The model's vectors have different lengths: %(sorted)s.") % {"sorted": sorted(dims)})
        matrix = np.vstack([cached[row[2]] for row in items]) if items else np.zeros((0, 0))
        if matrix.size and not np.isfinite(matrix).all():  # cached before vectors were checked
            raise ValueError(gettext("Some cached vectors of the model are not finite numbers (NaN or Infinity)."))
    subsets = np.array([row[3] for row in items])
    questions = np.array([row[4] for row in items])
    params = run.params
    out = {"study": "error_geometry", **_provenance(run), "definitions": DEFINITIONS_GEOMETRY,
           "counts": {"segments": len(items), "failed": failed,
                      **{name: int((subsets == name).sum()) for name in selectors.SUBSETS}},
           "groups": {}}
    for name in selectors.SUBSETS:
        mask = subsets == name
        if mask.sum() == 0:
            continue
        group = stats.group_geometry(matrix[mask], questions[mask], seed=run.seed, bootstrap=params.get("bootstrap", 1000),
                                     cluster=params.get("cluster", True), tick=tick)
        group["segment_ids"] = [row[0] for row, keep in zip(items, mask) if keep]
        out["groups"][name] = group
    for other in selectors.SUBSETS[1:]:  # human against each other group present
        if "human" not in out["groups"] or other not in out["groups"]:
            continue
        pair = (subsets == "human") | (subsets == other)
        out[f"human_vs_{other}".replace("-", "_")] = {"dispersion": stats.dispersion_permutation_test(
            stats.cosine_distances(matrix[pair]), subsets[pair] == "human", permutations=params.get("permutations", 1000),
            seed=run.seed, tick=tick)}
    return out


def surprisal_results(run, *, tick=None) -> dict:
    rows = list(run.items.filter(state=GeometrySegment.State.OK).values_list("subset", "question_key", "figures"))
    failed = run.items.exclude(state=GeometrySegment.State.OK).count()
    bootstrap = run.params.get("bootstrap", 1000)
    splitters = dict(run.items.values_list("splitter").annotate(n=Count("id")).order_by())
    dropped = Counter(f["dropped"] for _, _, figures in rows for f in figures if f.get("dropped"))
    out = {"study": "step_surprisal", **_provenance(run), "definitions": DEFINITIONS_SURPRISAL,
           "counts": {"segments": len(rows), "failed": failed, "splitter": splitters,
                      "transitions_dropped": dict(dropped),
                      "segments_without_transition": sum(1 for _, _, figures in rows
                                                         if not any(not f.get("dropped") for f in figures))},
           "groups": {}}
    for name in selectors.SUBSETS:
        transitions = [(question, f) for subset, question, figures in rows if subset == name for f in figures
                       if not f.get("dropped")]
        left_out = sum(1 for subset, _, figures in rows if subset == name for f in figures if f.get("dropped"))
        if not transitions:
            continue
        clusters = [question for question, _ in transitions]
        out["groups"][name] = {
            "segments": sum(1 for subset, _, _ in rows if subset == name),
            "transitions": len(transitions), "transitions_dropped": left_out,
            "surprisal": stats.summary([f["surprisal"] for _, f in transitions], clusters, bootstrap=bootstrap, seed=run.seed,
                                       tick=tick),
            "ll": stats.summary([f["ll"] for _, f in transitions], clusters, bootstrap=bootstrap, seed=run.seed,
                                tick=tick),
            "ll_lower_bound": sum(1 for _, f in transitions if not f["ll_exact"]),
            "step_tokens_outside_top_k": sum(int(f["outside_top_k"]) for _, f in transitions),
            "top_k": run.params.get("top_k"),
        }
    return out


DEFINITIONS_GEOMETRY = {
    "dispersion": "mean over the group's segments of the mean cosine distance to the 5 nearest other segments of the group",
    "total_variance": "trace of the sample covariance (ddof 1) of the group's normalised vectors",
    "top10_share": "share of the total variance in the first 10 principal components (PCA on the group)",
    "clusters": "HDBSCAN(min_cluster_size 5, min_samples 3) clusters on UMAP(n_neighbors 15, 10 components, min_dist 0, cosine, seeded)",
    "noise_share": "share of the group's segments HDBSCAN leaves unclustered",
    "silhouette": "mean cosine silhouette of the clustered segments (HDBSCAN labels, normalised vectors); null below two clusters",
    "gmm": "BIC of diagonal-covariance Gaussian mixtures on the first 50 principal components, k = 2..min(30, n // 10) "
           "(at least 10 segments per component); best_k has the lowest BIC; at_edge when best_k is the largest k "
           "tried (the sweep found no minimum)",
    "heatmap": "pairwise cosine distances in Ward-linkage leaf order (a seeded sample of at most 160 segments)",
    "ci": "95% intervals over whole questions: dispersion by a percentile cluster bootstrap (questions resampled with "
          "replacement, 1,000 resamples by default); total variance and top-10 share by a delete-one-question "
          "jackknife (a bootstrap's duplicated rows bias them down), a t interval that contains the estimate; none "
          "from fewer than 5 questions",
    "human_vs_synthetic": "two-sided permutation test of mean dispersion, human minus synthetic: group labels shuffled, neighbours found again within each shuffled group",
    "human_vs_probe_derived": "the same test, human minus probe-derived (the errors sensitivity probes put into answers)",
}
DEFINITIONS_SURPRISAL = {
    "transition": "step k -> k+1 of a segment; the prompt is steps 0..k joined by newlines, a newline, then step k+1",
    "surprisal": "mean of -log p (nats) over the tokens of step k+1 given the prompt before it (echoed prompt log-probabilities)",
    "ll": "logical likelihood: the highest probability, at the context's last position, among the tokens of step k+1",
    "ll_lower_bound": "transitions where no token of the step was in the endpoint's top-k at that position: ll is then the probability of the step's first token, a lower bound",
    "ci": "95% percentile cluster bootstrap of surprisal and LL (means and medians), whole questions resampled "
          "with replacement; none from fewer than 5 questions",
    "splitter": "segments by splitter: rule (the rule-based split), llm (the model's steps, which reproduce the text), "
                "llm-fallback (the model's answer changed the text: the rule-based split was kept), file (the steps of "
                "a segments file, slices of its text), file-joined (a file's steps that are not slices of its "
                "segment_text, such as the paper's step splits without their headings: the steps joined by newlines "
                "are the text scored)",
    "transitions_dropped": "transitions left out of the figures, by reason (no step tokens: the endpoint's tokens "
                           "give the step no token of its own); the segment's other transitions are kept",
}
