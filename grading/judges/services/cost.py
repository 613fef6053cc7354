"""What a judge run would cost before it starts: calls, input and output tokens, cost live and
at the Batch API's price. Reads only; `start_judge_run` stores the estimate on the run (made
as the run is queued, its own results left out), whose page compares it with what was spent.

How the figures are made (docs/judges.md, "Cost before the run"):

- **Calls.** The answers a run would judge (`selection.selected_ids`: the filters, the
  setting's hold-outs left out) are taken as a run takes them: an answer whose cache key has a
  finished result of this setting version is answered from the cache (no call, counted apart);
  answers with the same content in the selection are judged once (the others copy it); a kind
  that calls no LLM (CAS final answer), a replay answer without a prompt and an IneqMath final
  answer with no gold answer or matching it as written make no call. Each remaining answer
  sends ``samples`` calls. An IneqMath final-answer setting asks the LLM only where the CAS
  cannot decide: its calls are an upper bound (the CAS is not run for an estimate). Retries
  after an unreadable answer (``parse_retries``) and HTTP retries are not counted: the maximum
  with parse retries is given beside.
- **Input tokens.** The real prompts are built (strategies, few-shot examples, sub-question
  requests) and counted with `llm.tokens` (tiktoken for OpenAI's models, the per-character
  rule otherwise), times the samples. Over `EXACT_LIMIT` answers, an evenly spaced sample of
  `SAMPLE_SIZE` of them is built and every count is scaled to the selection.
- **Output tokens per call.** The median completion tokens per sample of this setting
  version's past results (their own calls, not copies), else the setting's ``max_tokens`` cap
  (an upper bound), else `DEFAULT_OUTPUT_TOKENS`.
- **Cost.** Tokens times the setting's prices per 1,000 tokens; the batch figure is that times
  ``settings.LLM_BATCH_PRICE_FACTOR``.
"""
from __future__ import annotations

import logging
import statistics
from decimal import Decimal

from django.conf import settings
from django.utils.translation import gettext, ngettext

from annotation.models import Response
from llm import tokens

from ...models import JudgeResult, JudgeRun, JudgeSetting
from .. import strategies
from ..kinds import CasFinalAnswerKind, extract_final_answer, get_kind, same_text
from .cache_keys import input_cache_key, judge_input
from .selection import FINAL_RESULT, selected_ids
from .settings import RunRefused, judge_spec

EXACT_LIMIT = 1000  # answers counted one by one up to here (about a second); above, a sample
SAMPLE_SIZE = 1000
DEFAULT_OUTPUT_TOKENS = 512
PAST_RESULTS = 2000  # the newest results the output median is taken over
_CHUNK = 500

logger = logging.getLogger(__name__)


def estimate_judge_run(setting: JudgeSetting | None, *, params=None, response_ids=None, ids=None,
                       run: JudgeRun | None = None) -> dict:
    """The estimate of a run of `setting` over a selection (filters `params` and/or
    `response_ids`, or the fixed `ids`), as a dict of plain values (JSON-ready; money as
    strings). With `run`, the results that run has made so far are left out (the estimate as
    of its start). RunRefused (a clear message) for no setting, an imported setting or an empty
    selection."""
    if setting is None:
        raise RunRefused(gettext("Choose a judge setting to estimate."))
    if setting.kind == JudgeSetting.Kind.EXTERNAL:
        raise RunRefused(gettext("Imported (external) settings cannot be run."))
    if ids is None:
        ids = selected_ids(setting, params=params, response_ids=response_ids)
    if not ids:
        raise RunRefused(gettext("No response matches this selection."))
    kind, spec = get_kind(setting.kind), judge_spec(setting)
    counted = _sample(ids)
    scale = len(ids) / len(counted)
    figures = _count_calls(setting, kind, spec, counted, _results(setting, run))
    samples = max(1, spec.samples) if kind.uses_llm else 0
    call_items = _scaled(figures["call_items"], scale)
    calls = call_items * samples
    input_tokens = round(figures["prompt_tokens"] * scale) * samples
    per_call, basis, past_n = _output_per_call(setting, _results(setting, run))
    output_tokens = calls * per_call
    price_in, price_out = setting.price_input_per_1k, setting.price_output_per_1k
    live = (Decimal(input_tokens) * price_in + Decimal(output_tokens) * price_out) / Decimal(1000)
    factor = Decimal(str(settings.LLM_BATCH_PRICE_FACTOR))
    n_cached = _scaled(figures["cached"], scale)
    n_same = _scaled(figures["same_content"], scale)
    return {
        "setting": setting.pk,
        "model": setting.model,
        "uses_llm": kind.uses_llm,
        "n_items": len(ids),
        "counted": len(counted),
        "cached": n_cached,
        "same_content": n_same,
        "no_call": max(0, len(ids) - n_cached - n_same - call_items),
        "call_items": call_items,
        "samples": samples,
        "calls": calls,
        "max_calls": calls * (1 + max(0, spec.parse_retries)),
        "calls_upper_bound": isinstance(kind, CasFinalAnswerKind) and kind.uses_llm,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "output_per_call": per_call,
        "output_basis": basis,
        "output_past_results": past_n,
        "token_method": tokens.method(setting.model) if kind.uses_llm else "",
        "price_input_per_1k": _plain(price_in),
        "price_output_per_1k": _plain(price_out),
        "priced": bool(price_in or price_out),
        "cost_live": str(live.quantize(Decimal("0.0001"))),
        "cost_batch": str((live * factor).quantize(Decimal("0.0001"))),
        "batch_factor": str(factor),
    }


def stored_estimate(setting: JudgeSetting, ids: list[int], run: JudgeRun | None = None) -> dict:
    """The estimate `start_judge_run` keeps on the run; {} (shown as "no estimate") if it
    cannot be made, which never stops a run from starting."""
    try:
        return estimate_judge_run(setting, ids=ids, run=run)
    except Exception:  # an estimate is advice: a bug here must not refuse the run
        logger.exception("No cost estimate for a run of setting %s", setting.pk)
        return {}


def _plain(price):
    """A price as written, without the column's trailing zeros (1.000000 -> 1)."""
    return f"{price.normalize():f}"


def _results(setting, run):
    """The finished results of `setting` an estimate may count (none made by `run`)."""
    results = JudgeResult.objects.filter(setting=setting, status__in=FINAL_RESULT)
    return results.exclude(run=run) if run is not None else results


def _sample(ids):
    if len(ids) <= EXACT_LIMIT:
        return list(ids)
    step = len(ids) / SAMPLE_SIZE
    return [ids[int(i * step)] for i in range(SAMPLE_SIZE)]


def _scaled(count, scale):
    return round(count * scale)


def _count_calls(setting, kind, spec, ids, results):
    """Per answer, as a run takes it: its cache key, whether it calls, its prompt's tokens."""
    rows = []
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start:start + _CHUNK]
        by_id = {
            # questions prefetched, not joined: the answers share a few questions (as a run's chunk does)
            r.pk: r for r in Response.objects.filter(pk__in=chunk).prefetch_related("question__sub_questions")
        }
        for pk in chunk:
            response = by_id.get(pk)
            if response is None:  # deleted since the selection was fixed
                continue
            the_input = strategies.prepare(setting, judge_input(response), response)
            key = input_cache_key(setting, kind, spec, the_input)
            rows.append((key, _prompt_tokens(setting, kind, spec, the_input)))
    finished = set()
    keys = [key for key, _ in rows]
    for start in range(0, len(keys), _CHUNK):
        finished.update(results.filter(cache_key__in=keys[start:start + _CHUNK]).values_list("cache_key", flat=True))
    figures = {"cached": 0, "same_content": 0, "call_items": 0, "prompt_tokens": 0}
    seen = set()
    for key, prompt_tokens in rows:
        if key in finished:
            figures["cached"] += 1
        elif key in seen:
            figures["same_content"] += 1
        else:
            seen.add(key)
            if prompt_tokens is not None:
                figures["call_items"] += 1
                figures["prompt_tokens"] += prompt_tokens
    return figures


def _prompt_tokens(setting, kind, spec, the_input):
    """The prompt tokens of one answer's call, or None when it makes no call."""
    if not kind.uses_llm:
        return None
    if isinstance(kind, CasFinalAnswerKind):  # the LLM only where exact match and CAS fail
        if not the_input.gold_answer.strip():
            return None
        if same_text(extract_final_answer(the_input.response, the_input.question_kind), the_input.gold_answer):
            return None
    messages = kind.messages(spec, the_input)
    if messages is None:  # a replay answer without a prompt
        return None
    return tokens.count_messages(messages, setting.model)


def _output_per_call(setting, results):
    """(completion tokens per call, basis, how many past results): "past", "cap" or "default"."""
    past = (
        results.filter(copied_from__isnull=True, completion_tokens__gt=0)
        .order_by("-id").values_list("completion_tokens", "samples")[:PAST_RESULTS]
    )
    per_sample = [completion / max(1, len(samples) if isinstance(samples, list) else 1) for completion, samples in past]
    if per_sample:
        return round(statistics.median(per_sample)), "past", len(per_sample)
    if setting.max_tokens:
        return int(setting.max_tokens), "cap", 0
    return DEFAULT_OUTPUT_TOKENS, "default", 0


def describe(estimate: dict) -> list[str]:
    """The estimate's assumptions, in the reader's language (the page, the command)."""
    if not estimate:
        return [gettext("No estimate was made for this run.")]
    lines = []
    if not estimate["uses_llm"]:
        lines.append(gettext("This kind of judge calls no LLM: the run costs nothing."))
        return lines
    if estimate["counted"] < estimate["n_items"]:
        lines.append(gettext("Counted on an evenly spaced sample of %(counted)s of the %(n)s answers, scaled to all "
                             "of them.") % {"counted": estimate["counted"], "n": estimate["n_items"]})
    if estimate["cached"]:
        lines.append(ngettext(
            "%(n)s answer already has a result of this setting version: from the cache, no call.",
            "%(n)s answers already have a result of this setting version: from the cache, no call.",
            estimate["cached"]) % {"n": estimate["cached"]})
    if estimate["same_content"]:
        lines.append(ngettext("%(n)s answer repeats the content of another in the selection: judged once.",
                              "%(n)s answers repeat the content of others in the selection: judged once.",
                              estimate["same_content"]) % {"n": estimate["same_content"]})
    if estimate["no_call"]:
        lines.append(ngettext(
            "%(n)s answer needs no call (decided without the LLM, or nothing to send).",
            "%(n)s answers need no call (decided without the LLM, or nothing to send).",
            estimate["no_call"]) % {"n": estimate["no_call"]})
    lines.append(ngettext("%(samples)s call per answer (samples).", "%(samples)s calls per answer (samples).",
                          estimate["samples"]) % {"samples": estimate["samples"]})
    if estimate["calls_upper_bound"]:
        lines.append(gettext("An upper bound: this judge asks the LLM only where the CAS cannot decide, which is "
                             "not known before the run."))
    if estimate["max_calls"] > estimate["calls"]:
        lines.append(gettext("Up to %(max)s calls if every answer needs its retries after unreadable output (not "
                             "counted above).") % {"max": estimate["max_calls"]})
    if estimate["token_method"] == tokens.PER_CHARACTER:
        lines.append(gettext("Input tokens are estimated per character (this model's tokenizer is not known here): "
                             "a CJK character counts 1 token, other text 4 characters a token, plus 3 tokens a "
                             "message."))
    else:
        lines.append(gettext("Input tokens are counted with %(method)s, the model's own encoding, on the prompts "
                             "the run would send.") % {"method": estimate["token_method"]})
    basis = estimate["output_basis"]
    if basis == "past":
        lines.append(ngettext(
            "Output: %(per)s tokens a call, the median of this setting version's %(n)s past result.",
            "Output: %(per)s tokens a call, the median of this setting version's %(n)s past results.",
            estimate["output_past_results"]) % {"per": estimate["output_per_call"], "n": estimate["output_past_results"]})
    elif basis == "cap":
        lines.append(gettext("Output: %(per)s tokens a call, the setting's max_tokens cap (no past results yet): an "
                             "upper bound.") % {"per": estimate["output_per_call"]})
    else:
        lines.append(gettext("Output: %(per)s tokens a call, a default (no past results and no max_tokens cap).")
                     % {"per": estimate["output_per_call"]})
    if estimate["priced"]:
        lines.append(gettext("Cost: tokens times the setting's prices per 1,000 tokens (input %(pin)s, output "
                             "%(pout)s); batch: times %(factor)s (LLM_BATCH_PRICE_FACTOR).")
                     % {"pin": estimate["price_input_per_1k"], "pout": estimate["price_output_per_1k"],
                        "factor": estimate["batch_factor"]})
    else:
        lines.append(gettext("No prices set on this setting: the cost is not estimated (set its prices per 1,000 "
                             "tokens, input and output)."))
    return lines
