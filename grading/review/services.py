"""Writes of the judge-vs-human review: meta-evaluation labels, the LLM meta-evaluator (its runs
and proposals), imports of released labels, and expert validation of step-judge verdicts.

The LLM meta-evaluator only ever writes proposals (MetaEvalProposal); a category becomes a label
when a person confirms it (or a released label file is imported). Its output is kept raw; output
that cannot be read is stored with status invalid, a failed call with status error: neither
raises.
"""
import json
import math
import os
from dataclasses import dataclass, field

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext

import llm
from annotation.models import Response
from egress import purposes

from ..judges.result_import import import_judge_results, match_record, read_records
from ..judges.services import RunRefused, check_endpoint_usable, endpoint_spec
from ..models import (
    JudgeResult,
    JudgeSetting,
    LlmEndpoint,
    MetaEvalProposal,
    MetaEvalRun,
    MetaEvaluation,
    StepJudgeValidation,
)
from ..runs.engine import RunEngine, call_each
from . import selectors, tasks
from .meta_eval import CATEGORIES, direction, parse_meta_eval_output

ANSWERED = (MetaEvalProposal.Status.OK, MetaEvalProposal.Status.INVALID)
PROMPT_VERSION = "meta-eval-1"
CHUNK_SIZE = 8
RELEASED_LABELS_SETTING = "released meta-eval labels"
_EPS = 1e-6


class StaleMetaEvaluation(Exception):
    """Someone confirmed this case after the page was loaded; nothing was saved."""

    def __init__(self, meta):
        who = meta.confirmed_by.username if meta.confirmed_by else "someone"
        super().__init__(
            f"{who} saved category {meta.category or '—'} for this case meanwhile (version {meta.version}). "
            "Reload to see it; your choice was not saved."
        )
        self.meta = meta


# --- confirming a category -----------------------------------------------------------------

def _gold(result):
    gold = result.response.gold_score
    return float(gold) if gold is not None else None


def _latest_usable_proposal(meta):
    return meta.proposals.filter(status=MetaEvalProposal.Status.OK).order_by("-id").first()


def _version(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ValidationError({"version": "The version must be a whole number."}) from None


def confirm_meta_evaluation(result, *, user, category, analysis="", is_ood=False, base_version=None):
    """Save a person's category and analysis for one judge result.

    `base_version` is the version the person saw; a save on top of a newer one is refused
    (StaleMetaEvaluation) so that two reviewers never overwrite each other unknowingly.
    """
    category = str(category or "").strip().upper()
    if category not in CATEGORIES:
        raise ValidationError({"category": f"Choose one of {', '.join(CATEGORIES)}."})
    analysis = str(analysis or "").strip()
    if len(analysis) > 20000:
        raise ValidationError({"analysis": "Keep the analysis under 20,000 characters."})
    with transaction.atomic():
        # No select_related here: PostgreSQL refuses FOR UPDATE on the nullable side of an outer join.
        meta = MetaEvaluation.objects.select_for_update().filter(result=result).first()
        meta = meta or MetaEvaluation(result=result)
        if base_version is not None and _version(base_version) != meta.version:
            raise StaleMetaEvaluation(meta)
        proposal = _latest_usable_proposal(meta) if meta.pk else None
        gold = _gold(result)
        if not meta.category:
            meta.proposed_by = MetaEvaluation.Source.LLM if proposal else MetaEvaluation.Source.PERSON
        meta.category = category
        meta.analysis = analysis
        meta.is_ood = bool(is_ood) or category == "E"
        meta.judge_score, meta.gold_score = result.score, gold
        meta.direction = direction(result.score, gold)
        meta.proposal = proposal
        meta.kept_proposal = (proposal.category == category) if proposal else None
        meta.confirmed_by, meta.confirmed_at = user, timezone.now()
        meta.version += 1
        meta._history_user = user
        try:
            with transaction.atomic():
                meta.save()
        except IntegrityError as exc:  # another reviewer's first save of this case got in first
            raise StaleMetaEvaluation(MetaEvaluation.objects.select_related("confirmed_by").get(result=result)) from exc
    return meta


# --- the LLM meta-evaluator ----------------------------------------------------------------

SYSTEM_PROMPT = (
    "You are a mathematics education researcher. You study cases where an automatic grader (a large "
    "language model) and an experienced teacher gave clearly different scores to the same student "
    "answer, and you explain in a few sentences which kind of disagreement it is."
)

CASE_TEMPLATE = """A teacher graded the student answer below against the reference solution and its rubric. The rubric markers such as "------3 points" are cumulative: reaching a marker with all earlier work correct earns that many points. An automatic grader also scored the same answer. The two scores differ by {diff} points.

Decide why. Choose exactly one category:
{categories}

Read the student answer closely and compare what the teacher's score rewards with what the grader's explanation rewards. Say concretely which step, value or omission the two sides treat differently. Choose E only if no other category fits (for example an impossible teacher score, garbled or hallucinated text, a refusal, or a wrong reference).

=== Problem (full score {full_score}) ===
{problem}

=== Reference solution and rubric ===
{reference}

=== Student answer ===
{answer}

=== Teacher's score ===
{gold}

=== Automatic grader's score ===
{judge}

=== Automatic grader's explanation ===
{rationale}

Reply with one JSON object and nothing else, with these keys:
{{
  "model_score": <the automatic grader's score, a number>,
  "gt_score": <the teacher's score, a number>,
  "score_diff": <the absolute difference, a number>,
  "analysis": "<two to five sentences: what differs and why>",
  "primary_category_code": "<one letter: A, B, C, D or E>",
  "primary_category_name": "<the name of that category>",
  "ood_details": {{"is_ood": <true only for category E>, "justification": "<why, or empty>", "suggested_new_category": <a short name, or null>}}
}}"""


def _number(value):
    return "—" if value is None else f"{value:g}"


def meta_eval_messages(result):
    """The chat messages asking the meta-evaluator about one judge result."""
    response, question = result.response, result.response.question
    gold = _gold(result)
    categories = "\n".join(f"{code}. {name}: {definition}" for code, (name, definition) in CATEGORIES.items())
    content = CASE_TEMPLATE.format(
        diff=_number(abs(result.score - gold)) if result.score is not None and gold is not None else "?",
        categories=categories,
        full_score=_number(float(question.full_score)),
        problem=question.statement,
        reference=question.reference_solution or "(none)",
        answer=response.transcript,
        gold=_number(gold),
        judge=_number(result.score),
        rationale=(result.rationale or result.raw_output or "(none)")[:12000],
    )
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": content}]


def _check_endpoint(endpoint):
    check_endpoint_usable(endpoint)


def start_meta_eval_run(*, endpoint, model, scope, threshold=selectors.DEFAULT_THRESHOLD, params=None, user=None,
                        only_open=True, temperature=0.0, max_tokens=2048, enqueue=True):
    """Queue the LLM meta-evaluator over a disagreement queue (cases still unclassified and
    without a usable proposal, unless `only_open` is false). Returns the run; with
    ``enqueue=False`` nothing is queued (call `run_meta_eval_inline` here)."""
    if not str(model or "").strip():
        raise RunRefused(gettext("Name the model the meta-evaluator should use."))
    _check_endpoint(endpoint)
    queue = selectors.disagreement_queue(scope, threshold, params or {})
    if only_open:
        queue = selectors.disagreement_queue(scope, threshold, {**(params or {}), "state": "todo"}).exclude(
            meta_evaluation__proposals__status=MetaEvalProposal.Status.OK
        )
    result_ids = list(queue.order_by("pk").values_list("pk", flat=True).distinct())
    if not result_ids:
        raise RunRefused(gettext("No case in this queue needs a proposal."))
    with transaction.atomic():
        MetaEvaluation.objects.bulk_create(
            [MetaEvaluation(result_id=pk) for pk in result_ids], ignore_conflicts=True, batch_size=500
        )
        run = MetaEvalRun.objects.create(
            endpoint=endpoint, model=model.strip(), temperature=temperature, max_tokens=max_tokens,
            prompt_version=PROMPT_VERSION, n_items=len(result_ids), result_ids=result_ids, chunk_size=CHUNK_SIZE,
            created_by=user,
            selection={**scope.query(), "threshold": threshold, **{k: v for k, v in (params or {}).items() if v}},
        )
        if enqueue:
            META_EVAL_RUNS.enqueue_on_commit(run)
    return run


def _answered(run_id):
    """Result ids with a readable or unreadable proposal of the run (a failed call is open)."""
    return set(
        MetaEvalProposal.objects.filter(run_id=run_id, status__in=ANSWERED).values_list(
            "meta_evaluation__result_id", flat=True
        )
    )


def _open_result_ids(run):
    answered = _answered(run.pk)
    return [pk for pk in run.result_ids if pk not in answered]


def _nothing_left(run_id):
    run = MetaEvalRun.objects.only("n_items").get(pk=run_id)
    return MetaEvalProposal.objects.filter(run_id=run_id).count() >= run.n_items


def _forget_failures(run):
    """Failed calls are asked again: until then the run is not complete."""
    MetaEvalProposal.objects.filter(run=run, status=MetaEvalProposal.Status.ERROR).delete()


META_EVAL_RUNS = RunEngine(
    run_model=MetaEvalRun, chunk_task=tasks.propose_meta_eval_chunk_task,
    open_ids=_open_result_ids, nothing_left=_nothing_left, on_resume=_forget_failures,
    name="grading.review.services.META_EVAL_RUNS",
    last_activity=lambda run: run.proposals.aggregate(last=Max("created"))["last"],
    endpoint_of=lambda run: run.endpoint,
)


def cancel_meta_eval_run(run: MetaEvalRun) -> MetaEvalRun:
    """Stop a pre-label run: chunks finish the calls in flight and start no new ones."""
    return META_EVAL_RUNS.cancel(run)


def resume_meta_eval_run(run: MetaEvalRun, *, enqueue: bool = True) -> MetaEvalRun:
    """Ask again about every case of the run without an answer (never asked, lost with a worker,
    or a failed call): a new epoch, so chunks queued before do nothing."""
    return META_EVAL_RUNS.resume(run, enqueue=enqueue)


def run_meta_eval_inline(run: MetaEvalRun, *, complete=None) -> MetaEvalRun:
    """Do a pre-label run's open work in this process (no Celery worker needed); `complete`
    stands in for the LLM client's ``complete`` (the demo's scripted model)."""
    return META_EVAL_RUNS.run_inline(run, process_meta_eval_chunk, complete=complete)


def process_meta_eval_chunk(run_id, epoch, result_ids, task_id=None, complete=None):
    """Ask the meta-evaluator about some cases of a run and store each answer (safe to repeat:
    a case that already has an answer from this run is skipped). Returns how many were written.
    `complete` stands in for the LLM client's ``complete`` (the demo's scripted model)."""
    run = META_EVAL_RUNS.live_run(run_id, epoch, select_related=["endpoint"])
    if run is None:
        return 0
    done = _answered(run.pk)
    results = list(
        JudgeResult.objects.select_related("response__question").filter(pk__in=result_ids).exclude(pk__in=done)
    )
    metas = {m.result_id: m for m in MetaEvaluation.objects.filter(result__in=results)}
    jobs = [(result, meta_eval_messages(result)) for result in results]
    endpoint = run.endpoint
    target = _endpoint_spec(endpoint)
    call = llm.CallSpec(model=run.model, temperature=run.temperature, max_tokens=run.max_tokens)
    limiter = llm.limiter_for(target)
    written = 0

    def record(job, answer):  # _ask never raises: a failure is an LlmCallFailed answer
        nonlocal written
        result = job[0]
        meta = metas.get(result.pk) or MetaEvaluation.objects.get_or_create(result=result)[0]
        written += _record_proposal(run, meta, answer)

    def ask(job):
        with llm.labelled(purposes.META_EVAL, answer_ids=[job[0].response_id]):
            return _ask(target, call, job[1], limiter, complete)

    call_each(jobs, ask, record,
              width=min(len(jobs), endpoint.max_concurrency, 8), is_live=lambda: META_EVAL_RUNS.is_live(run.pk, epoch))
    META_EVAL_RUNS.finish_if_complete(run.pk, epoch)
    return written


def _endpoint_spec(endpoint):
    return endpoint_spec(endpoint)


def _ask(target, call, messages, limiter, complete=None):
    try:
        return (complete or llm.complete)(target, call, messages, limiter=limiter)
    except llm.LlmCallFailed as exc:
        return exc
    except Exception as exc:  # anything unforeseen becomes a failed proposal, never a crashed chunk
        return llm.LlmCallFailed(str(exc), errors=[{"kind": "internal", "message": str(exc)[:500]}], attempts=1)


def _record_proposal(run, meta, answer):
    fields = {"model": run.model}
    if isinstance(answer, llm.LlmCallFailed):
        fields.update(status=MetaEvalProposal.Status.ERROR, error=str(answer)[:2000], errors=answer.errors,
                      latency_ms=answer.latency_ms or None)
    else:
        parsed = parse_meta_eval_output(answer.text)
        fields.update(
            status=MetaEvalProposal.Status.OK if parsed.category else MetaEvalProposal.Status.INVALID,
            category=parsed.category or "", analysis=parsed.analysis[:20000], is_ood=parsed.is_ood,
            data=parsed.data if isinstance(parsed.data, dict) else {}, raw_output=answer.text, error=parsed.error,
            errors=answer.errors, prompt_tokens=answer.prompt_tokens, completion_tokens=answer.completion_tokens,
            latency_ms=answer.latency_ms,
        )
    try:
        with transaction.atomic():
            MetaEvalProposal.objects.create(meta_evaluation=meta, run=run, **fields)
    except IntegrityError:  # asked before: a failed call is replaced, an answer is kept
        return MetaEvalProposal.objects.filter(
            meta_evaluation=meta, run=run, status=MetaEvalProposal.Status.ERROR
        ).update(**fields)
    return 1


# --- released labels -----------------------------------------------------------------------

class LabelImportRefused(ValueError):
    """The file is not a label file; nothing was imported."""


@dataclass
class LabelImportReport:
    records: int = 0
    matched: int = 0
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    results_created: int = 0
    kept_expert: list = field(default_factory=list)
    unmatched: list = field(default_factory=list)
    matches: list = field(default_factory=list)

    def as_dict(self):
        return dict(self.__dict__)


def read_label_records(raw):
    """The label records of a released file: {"detailed_results": [...]} or a bare array."""
    text = raw.decode("utf-8-sig") if isinstance(raw, bytes) else raw
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise LabelImportRefused(f"The file is not JSON: {exc}.") from exc
    except RecursionError:  # the decoder recurses once per level of [[[...]]]
        raise LabelImportRefused("The file's JSON is nested too deeply to read.") from None
    records = data.get("detailed_results") if isinstance(data, dict) else data
    if not isinstance(records, list):
        raise LabelImportRefused('Expected {"detailed_results": [...]} or a JSON array of label records.')
    for index, record in enumerate(records):
        if not isinstance(record, dict):
            raise LabelImportRefused(f"Record {index} is not a JSON object.")
    return records


def _float(value):
    """A finite float, else None (float(10**400) overflows; "nan" and "1e999" are no score)."""
    try:
        number = float(value) if value not in (None, "") else None
    except (TypeError, ValueError, OverflowError):
        return None
    return number if number is None or math.isfinite(number) else None


def _same(a, b):
    return a is not None and b is not None and abs(a - b) < _EPS


def _candidate_responses(record, input_records):
    """Responses a label may be about, and notes on how they were found (or why not)."""
    gt, notes = _float(record.get("gt")), []
    sample = record.get("sample_id")
    if input_records is not None and sample in input_records:
        found, reason = match_record(input_records[sample])
        fitting = [r for r in found if _same(_float(r.gold_score), gt)]
        if fitting:
            return fitting, f"sample_id {sample} of the input file"
        notes.append(
            f"sample_id {sample} of the input file is "
            + (", ".join(f"response #{r.pk} (gold {_number(_float(r.gold_score))})" for r in found) or f"nothing ({reason})")
            + f", not gold {_number(gt)}"
        )
    student = str(record.get("student_id_mapped") or record.get("student_id") or "").strip()
    if not student:
        notes.append("no student id")
        return [], "; ".join(notes)
    responses = list(Response.objects.select_related("question").filter(student_id=student))
    if not responses:
        notes.append(f"no response by student {student}")
        return [], "; ".join(notes)
    location = str(record.get("question_location_mapped") or record.get("question_location") or "").strip()
    at_location = [r for r in responses if location and r.question.location == location]
    pool = at_location or responses
    fitting = [r for r in pool if _same(_float(r.gold_score), gt)]
    if fitting:
        return fitting, f"student {student[:12]}" + (f" at {location}" if at_location else "")
    seen = ", ".join(f"response #{r.pk} at {r.question.location or '?'} (gold {_number(_float(r.gold_score))})" for r in pool)
    where = f" at {location}" if at_location else (f" (none at {location})" if location else "")
    notes.append(f"student {student[:12]} has {seen}{where}; none with gold {_number(gt)}")
    return [], "; ".join(notes)


def _results_fitting(responses, model_score, setting):
    results = JudgeResult.objects.select_related("setting").filter(
        response__in=responses, status=JudgeResult.Status.OK, score__isnull=False
    )
    if setting is not None:
        results = results.filter(setting__name=setting)
    return [r for r in results if _same(r.score, model_score)]


def _create_result(response, record, index, file_name, setting_name, user, report):
    name = setting_name or RELEASED_LABELS_SETTING
    payload = [{"response_id": response.pk, "model_score": record.get("model_score"), "gt": record.get("gt")}]
    outcome = import_judge_results(
        json.dumps(payload), f"{os.path.basename(file_name)} (record {index})", setting_name=name, user=user
    )
    report.results_created += outcome.created
    setting = JudgeSetting.objects.filter(name=name).order_by("-version").first()
    return JudgeResult.objects.filter(setting=setting, response=response).order_by("-id").first()


def import_meta_eval_labels(raw, file_name, *, user=None, setting=None, input_raw=None, create_results=True):
    """Attach released meta-evaluation labels to judge results (idempotent).

    A label is matched to its response by the input file's record with the same `sample_id`
    (when `input_raw`, the meta-evaluation input file, is given), else by `student_id_mapped`
    (narrowed by `question_location_mapped`); the response's gold must equal the label's `gt`.
    Its judge result is the one on that response with score `model_score` (of `setting`, if
    given). When the response has none and `create_results`, the label's `model_score` is stored
    as an imported result of the setting (default "released meta-eval labels"). A category a
    person confirmed is never overwritten. Every label that matches nothing is reported with why.
    """
    records = read_label_records(raw)
    input_records = None
    if input_raw is not None:
        input_records = {r.get("sample_id"): r for r in read_records(input_raw) if r.get("sample_id") is not None}
    report = LabelImportReport(records=len(records))
    with transaction.atomic():
        for index, record in enumerate(records):
            _import_one(record, index, file_name, input_records, setting, user, create_results, report)
    return report


def _import_one(record, index, file_name, input_records, setting, user, create_results, report):
    label = {"index": index, "sample_id": record.get("sample_id")}
    code = str(record.get("primary_category_code") or "").strip().upper()[:1]
    if code not in CATEGORIES:
        report.unmatched.append({**label, "reason": f"no usable category ({record.get('primary_category_code')!r})"})
        return
    model_score = _float(record.get("model_score"))
    if model_score is None or _float(record.get("gt")) is None:
        report.unmatched.append({**label, "reason": "gt or model_score missing"})
        return
    responses, how = _candidate_responses(record, input_records)
    if not responses:
        report.unmatched.append({**label, "reason": how})
        return
    results = _results_fitting(responses, model_score, setting)
    if len(results) > 1:
        names = ", ".join(sorted({str(r.setting) for r in results}))
        report.unmatched.append({**label, "reason": f"{len(results)} judge results fit ({names}); name one with --setting"})
        return
    if not results:
        if not create_results or len(responses) != 1:
            report.unmatched.append({**label, "reason": f"no judge result with score {_number(model_score)} on "
                                     + ", ".join(f"response #{r.pk}" for r in responses)})
            return
        created = _create_result(responses[0], record, index, file_name, setting, user, report)
        if created is None:
            report.unmatched.append({**label, "reason": "the judge score could not be stored"})
            return
        results = [created]
    _store_label(results[0], record, code, index, file_name, how, user, report)


def _store_label(result, record, code, index, file_name, how, user, report):
    provenance = {"file": os.path.basename(file_name), "record_index": index, "sample_id": record.get("sample_id")}
    analysis = record.get("analysis") if isinstance(record.get("analysis"), str) else ""
    ood = record.get("ood_details") if isinstance(record.get("ood_details"), dict) else {}
    is_ood = bool(record.get("is_ood") or ood.get("is_ood"))
    meta, created = MetaEvaluation.objects.select_for_update().get_or_create(result=result)
    report.matched += 1
    report.matches.append({"sample_id": record.get("sample_id"), "result": result.pk,
                           "response": result.response_id, "category": code, "how": how})
    if meta.category and (meta.confirmed_by_id is not None or meta.proposed_by != MetaEvaluation.Source.IMPORT):
        if meta.category != code:
            report.kept_expert.append({"sample_id": record.get("sample_id"), "result": result.pk,
                                       "expert": meta.category, "file": code})
        else:
            report.unchanged += 1
        return
    if meta.category == code and meta.provenance == provenance and meta.analysis == analysis:
        report.unchanged += 1
        return
    was_labelled = bool(meta.category)
    gt, model_score = _float(record.get("gt")), _float(record.get("model_score"))
    meta.category, meta.analysis, meta.is_ood = code, analysis, is_ood
    meta.proposed_by = MetaEvaluation.Source.IMPORT
    meta.judge_score, meta.gold_score = model_score, gt
    meta.direction = direction(model_score, gt)
    proposal = _latest_usable_proposal(meta)
    meta.proposal, meta.kept_proposal = proposal, (proposal.category == code) if proposal else None
    meta.confirmed_by, meta.confirmed_at = None, timezone.now()
    meta.provenance = provenance
    meta.version += 1
    meta._history_user = user
    meta.save()
    if was_labelled:
        report.updated += 1
    else:
        report.created += 1


# --- step-judge validation -----------------------------------------------------------------

def save_step_validations(response, marks, *, user, notes=None):
    """Record an expert's word on the verdicts of some step-judge results of one response.

    `marks` maps result id -> True (the verdict is right), False (wrong) or None (withdraw the
    mark). Results must belong to the response and be finished verdicts. Returns the count saved.
    """
    notes = notes or {}
    ids = [int(pk) for pk in marks]
    results = {
        r.pk: r for r in JudgeResult.objects.filter(pk__in=ids, response=response).select_related("setting")
    }
    missing = set(ids) - set(results)
    if missing:
        raise ValidationError(gettext("Results %(sorted)s are not judge results of response #%(pk)s.") % {"sorted": sorted(missing), "pk": response.pk})
    saved = 0
    with transaction.atomic():
        for pk, mark in marks.items():
            result = results[int(pk)]
            if mark is None:
                StepJudgeValidation.objects.filter(result=result).delete()
                continue
            if result.status != JudgeResult.Status.OK or result.score is None:
                raise ValidationError(gettext("Result #%(pk)s has no verdict to validate.") % {"pk": result.pk})
            validation = StepJudgeValidation.objects.filter(result=result).first() or StepJudgeValidation(result=result)
            validation.judge_says_pass = result.score >= 0.5
            validation.verdict_right = bool(mark)
            validation.note = str(notes.get(pk, notes.get(str(pk), validation.note)) or "")[:5000]
            validation.validated_by = user
            validation._history_user = user
            validation.save()
            saved += 1
    return saved


def endpoints():
    return list(LlmEndpoint.objects.order_by("name"))
