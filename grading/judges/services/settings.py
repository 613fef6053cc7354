"""Endpoints and judge settings: saving them (a used setting is never changed: editing makes a
new version), what a run needs of them (`judge_spec`, `endpoint_spec`), and whether an endpoint
can be called from here (`check_endpoint_usable`, `endpoint_warnings`)."""
from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils.translation import gettext

import llm
from egress import purposes
from llm import access

from ...models import JudgeSetting, LlmEndpoint
from .. import calibration, prompts, strategies
from ..kinds import KINDS, JudgeSpec


class RunRefused(ValidationError):
    """A run cannot start as asked (the message says why); nothing was created."""


# --- endpoints and judge settings ----------------------------------------------------------

ENDPOINT_FIELDS = (
    "name", "base_url", "api_key_env", "max_concurrency", "requests_per_minute", "tokens_per_minute",
    "timeout_seconds", "max_attempts",
)
SETTING_FIELDS = (
    "kind", "endpoint", "model", "temperature", "max_tokens", "reasoning_effort", "samples", "aggregate",
    "system_prompt", "prompt_template", "extra_body", "parse_retries", "price_input_per_1k",
    "price_output_per_1k", "notes", "answer_tolerance", "second_opinion", "approximate_answers",
    # issue 27: prompt strategies, few-shot calibration, prompt sets (grading/judges/strategies.py)
    "strategy", "strategy_version", "few_shot_k", "split_rule", "few_shot_seed", "few_shot_comments",
    "calibration", "prompt_set", "few_shot_source",
    "step_report",  # issue 37: the rubric judge's first wrong step and checkpoints reached
)


def save_endpoint(endpoint: LlmEndpoint | None = None, **fields) -> LlmEndpoint:
    """Create or change an endpoint (admins only: it says where keys are sent). Limits may change
    at any time: they do not change results. The key variable and host must be allowed
    (LlmEndpoint.clean); a key variable that is allowed but not set saves, see `endpoint_warnings`."""
    endpoint = endpoint or LlmEndpoint()
    for name, value in fields.items():
        if name not in ENDPOINT_FIELDS:
            raise ValidationError(gettext("Unknown endpoint field %(name)s.") % {"name": name})
        setattr(endpoint, name, value)
    endpoint.full_clean()
    endpoint.save()
    return endpoint


def find_or_create_endpoint(base_url: str, api_key_env: str) -> LlmEndpoint:
    """The endpoint for (base URL, key variable): the oldest existing one with exactly these two
    values (its limits kept as they are), else a new one with the default limits, named after the
    URL's host and port and the key variable ("127.0.0.1:8001 (no key)"), made unique with a
    number. Validated as the endpoint page validates (LlmEndpoint.clean: host and key variable
    allow-lists); the scripted setup (manage.py judge_setting add) uses it."""
    base_url = (base_url or "").strip()
    api_key_env = (api_key_env or "").strip()
    existing = LlmEndpoint.objects.filter(base_url=base_url, api_key_env=api_key_env).order_by("pk").first()
    if existing is not None:
        return existing
    problem = access.url_problem(base_url)
    if problem:
        raise ValidationError({"base_url": problem})
    parts = urlsplit(base_url)
    stem = f"{parts.hostname}{f':{parts.port}' if parts.port else ''} ({api_key_env or 'no key'})"[:90]
    name, number = stem, 1
    while LlmEndpoint.objects.filter(name=name).exists():
        number += 1
        name = f"{stem} {number}"
    return save_endpoint(name=name, base_url=base_url, api_key_env=api_key_env)


def test_endpoint(endpoint: LlmEndpoint):
    """"Test connection": {"models": [...]} when the endpoint answers, else why not, in words
    (a host outside the allow-list is refused before any request; the key is never in the answer)."""
    with llm.labelled(purposes.CONNECTION_CHECK):
        return llm.check_connection(endpoint_spec(endpoint))


def endpoint_warnings(endpoint: LlmEndpoint) -> list[str]:
    """Why runs on a saved endpoint would be refused from this process right now (empty: none)."""
    if not (endpoint.base_url or settings.OPENAI_BASE_URL):
        return ["No base URL, and OPENAI_BASE_URL is not set: runs on this endpoint will be refused."]
    try:
        llm.check_endpoint(endpoint_spec(endpoint))
    except llm.MissingApiKey:
        return [
            f"The API key variable {endpoint.api_key_env} is not set in the web server's environment (nor as a "
            "mounted secret): runs on this endpoint will be refused until it is set where the web server and "
            "the workers run. Leave the variable blank if the server needs no key."
        ]
    except llm.EndpointUnusable as exc:
        return [str(exc)]
    return []


def setting_is_used(setting: JudgeSetting) -> bool:
    """A setting that has produced results or runs is frozen: every result names what made it."""
    return setting.results.exists() or setting.runs.exists()


def _check_setting(setting):
    unknown = prompts.unknown_placeholders(setting.prompt_template) + prompts.unknown_placeholders(
        setting.system_prompt
    )
    if unknown:
        raise ValidationError({"prompt_template": gettext("Unknown placeholders: %(join)s.") % {"join": ", ".join(unknown)}})
    if setting.kind not in (JudgeSetting.Kind.CAS_FINAL_ANSWER, JudgeSetting.Kind.EXTERNAL):
        errors = {}
        if setting.endpoint_id is None:
            errors["endpoint"] = gettext("This kind of judge calls an LLM: choose an endpoint.")
        if not setting.model:
            errors["model"] = gettext("Name the model to call.")
        if errors:
            raise ValidationError(errors)
    if not isinstance(setting.extra_body, dict):
        raise ValidationError({"extra_body": gettext("Give a JSON object.")})
    setting.full_clean(validate_unique=False)


def create_judge_setting(*, name: str, user=None, **fields) -> JudgeSetting:
    """A new setting (version 1). The name must be new; edit an existing setting instead."""
    if JudgeSetting.objects.filter(name=name).exists():
        raise ValidationError({"name": gettext("A setting named %(name)s exists; edit it to make a new version.")
                                       % {"name": repr(name)}})
    setting = JudgeSetting(name=name, version=1, created_by=user)
    _apply_setting_fields(setting, fields)
    _check_setting(setting)
    _apply_strategy(setting)
    setting.save()
    return setting


def update_judge_setting(setting: JudgeSetting, *, user=None, **fields) -> JudgeSetting:
    """Change a setting: in place while unused, else as a new version (returned).

    Imported (external) settings describe results made elsewhere and are never changed."""
    if setting.kind == JudgeSetting.Kind.EXTERNAL:
        raise ValidationError(gettext("Imported settings describe results made elsewhere and cannot be edited or versioned."))
    if not _calls_llm(fields.get("kind", setting.kind)) and "temperature" in fields:
        fields = {**fields, "temperature": None}  # ignored by the kind: never a reason for a new version
    changed = {k: v for k, v in fields.items() if getattr(setting, k) != v}
    if not changed:
        return setting
    if not setting_is_used(setting):
        _apply_setting_fields(setting, changed)
        _check_setting(setting)
        _apply_strategy(setting, recalibrate=True)
        setting.save()
        return setting
    with transaction.atomic():
        latest = JudgeSetting.objects.filter(name=setting.name).aggregate(v=Max("version"))["v"] or setting.version
        new = JudgeSetting(name=setting.name, version=latest + 1, previous=setting, created_by=user)
        for name in SETTING_FIELDS:
            setattr(new, name, getattr(setting, name))
        _apply_setting_fields(new, changed)
        _check_setting(new)
        _apply_strategy(new, recalibrate=bool(set(changed) & strategies_calibration_fields()))
        new.save()
    return new


def strategies_calibration_fields():
    return {"strategy", "few_shot_k", "split_rule", "few_shot_seed", "few_shot_comments", "few_shot_source"}


def _apply_strategy(setting, recalibrate=False):
    """Issue 27: a strategy's template becomes the prompt of a rubric setting that left it blank
    (recorded with its version); a few-shot setting's examples are chosen (or kept) and recorded."""
    if setting.kind != JudgeSetting.Kind.RUBRIC:
        setting.strategy = setting.strategy or strategies.DEFAULT
        if setting.kind != JudgeSetting.Kind.REPLAY:
            setting.prompt_set = None
        return
    setting.prompt_set = None
    strategy = strategies.get(setting.strategy)
    setting.strategy = strategy.key
    stock = {s.template for s in strategies.STRATEGIES.values() if s.template}
    if setting.prompt_template in stock and setting.prompt_template != strategy.template:
        setting.prompt_template = ""  # another strategy's unedited template: take this strategy's
        setting.system_prompt = "" if setting.system_prompt == prompts.RUBRIC_SYSTEM else setting.system_prompt
    if not setting.prompt_template and strategy.template:
        setting.system_prompt = setting.system_prompt or strategy.system
        setting.prompt_template = strategy.template
        setting.strategy_version = strategy.version
    if strategy.key != strategies.FEW_SHOT:
        setting.calibration = {}
        return
    if "{{ examples }}" not in (setting.prompt_template or "").replace("{{examples}}", "{{ examples }}"):
        raise ValidationError({"prompt_template": gettext("A few-shot prompt must hold the {{ examples }} placeholder.")})
    if recalibrate or not (setting.calibration or {}).get("examples"):
        try:
            setting.calibration = calibration.choose_examples(
                k=setting.few_shot_k, rule=setting.split_rule or "student", seed=setting.few_shot_seed,
                comments=setting.few_shot_comments, source=setting.few_shot_source or calibration.HUMAN)
        except calibration.CalibrationError as exc:
            raise ValidationError({"split_rule": str(exc)}) from exc
        if not setting.calibration["examples"]:
            if setting.few_shot_source == calibration.HUMAN:
                raise ValidationError({"few_shot_source": gettext(
                    "No real student's answer with a gold score qualifies as a few-shot example under this split "
                    "rule: import or adjudicate gold scores of human answers, or take the examples from another source.")})
            raise ValidationError({"strategy": gettext("No answer with a gold score qualifies as a few-shot example under "
                                                       "this split rule: import or adjudicate gold scores first.")})


def _apply_setting_fields(setting, fields):
    for name, value in fields.items():
        if name not in SETTING_FIELDS:
            raise ValidationError(gettext("Unknown setting field %(name)s.") % {"name": name})
        setattr(setting, name, value)
    if not _calls_llm(setting.kind):
        setting.temperature = None  # a kind that calls no LLM has no temperature to record


def _calls_llm(kind):
    """Whether a kind of judge calls an LLM (imported results: unknown, kept as the file said)."""
    judge = KINDS.get(kind)
    return judge is None or judge.uses_llm


def judge_spec(setting: JudgeSetting) -> JudgeSpec:
    return JudgeSpec(
        kind=setting.kind,
        model=setting.model,
        temperature=setting.temperature,
        max_tokens=setting.max_tokens,
        reasoning_effort=setting.reasoning_effort,
        samples=setting.samples,
        aggregate=setting.aggregate,
        system_prompt=setting.system_prompt,
        prompt_template=setting.prompt_template,
        extra_body=dict(setting.extra_body or {}),
        parse_retries=setting.parse_retries,
        answer_tolerance=setting.answer_tolerance,
        second_opinion=setting.second_opinion,
        approximate_answers=setting.approximate_answers,
        step_report=setting.step_report and setting.kind == JudgeSetting.Kind.RUBRIC,
    )


def endpoint_spec(endpoint: LlmEndpoint) -> llm.EndpointSpec:
    return llm.EndpointSpec(
        key=f"endpoint:{endpoint.pk}",
        base_url=endpoint.base_url or settings.OPENAI_BASE_URL,
        api_key_env=endpoint.api_key_env,
        timeout=endpoint.timeout_seconds,
        max_attempts=endpoint.max_attempts,
        max_concurrency=endpoint.max_concurrency,
        requests_per_minute=endpoint.requests_per_minute,
        tokens_per_minute=endpoint.tokens_per_minute,
    )


def check_endpoint_usable(endpoint: LlmEndpoint) -> None:
    """Refuse a run whose endpoint cannot be called from here (no URL, host or key not allowed, key unset)."""
    if not (endpoint.base_url or settings.OPENAI_BASE_URL):
        raise RunRefused(gettext("Endpoint %(endpoint)s has no base URL and OPENAI_BASE_URL is not set.") % {"endpoint": endpoint})
    try:
        llm.check_endpoint(endpoint_spec(endpoint))
    except llm.MissingApiKey as exc:
        raise RunRefused(f"{exc} {llm.MISSING_KEY_HINT}") from exc
    except llm.EndpointUnusable as exc:
        raise RunRefused(gettext("Endpoint %(endpoint)s: %(exc)s") % {"endpoint": endpoint, "exc": exc}) from exc


def batch_client(endpoint: LlmEndpoint) -> llm.BatchClient:
    """The endpoint's Batch API client: files and batches within LLM_BATCH_FILE_TIMEOUT_SECONDS,
    a result file read up to four times the largest input file (and never less than a live answer)."""
    return llm.BatchClient(
        endpoint_spec(endpoint), timeout=float(settings.LLM_BATCH_FILE_TIMEOUT_SECONDS),
        max_download_bytes=max(int(settings.LLM_MAX_REPLY_BYTES), 4 * int(settings.LLM_BATCH_MAX_BYTES)),
    )


def check_batch_endpoint(endpoint: LlmEndpoint) -> None:
    """Refuse a batch run whose endpoint serves no Batch API (asked once: its batch and file lists)."""
    try:
        batch_client(endpoint).check()
    except llm.BatchUnsupported as exc:
        raise RunRefused(gettext("Endpoint %(endpoint)s cannot run batches: %(exc)s") % {"endpoint": endpoint, "exc": exc}) from exc
    except (llm.BatchApiError, llm.LlmCallFailed) as exc:
        raise RunRefused(gettext("Endpoint %(endpoint)s did not answer the Batch API check: %(exc)s")
                         % {"endpoint": endpoint, "exc": exc}) from exc
