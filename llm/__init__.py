"""The transport to OpenAI-compatible LLM servers: one way to call, whatever the caller.

Public API::

    import llm

    llm.configure(source=build_config)          # once, by the host application (core/llm_settings.py)
    endpoint = llm.EndpointSpec(key="local", base_url="http://127.0.0.1:8001/v1")
    done = llm.complete(endpoint, llm.CallSpec(model="m"), [{"role": "user", "content": "hi"}])
    done.text, done.attempts, done.errors       # or llm.LlmCallFailed with .errors
    sent = llm.send_request(endpoint, lambda client: read(client.post("/embeddings", ...)), estimate)  # any request
    llm.set_observer(record)                    # once, by the host: every request's CallRecord (no content)
    with llm.labelled("judge", answer_ids=[12]):  # what the calls inside are for
        ...

Modules: `client` (the call with retries and the `openai` client per endpoint; `retrying`, the
same retry rules for a caller with its own client: the vision OCR engine, the Batch API), `batches` (the
Batch API: files, batches, result lines), `access` (which
key variables and hosts are allowed, the output cap), `ratelimit` (limits shared across
threads, processes and machines, typed or learned from answers), `headers` (a provider's
rate-limit headers read), `senders` (the threads that send an endpoint's calls),
`reply_limit` (how much of an answer is read, within one deadline per request; the transport that
reports each request), `observe` (what leaves the machine: call labels, the records given to the
host's observer), `tokens` (token counts before sending: tiktoken for OpenAI's models, a stated
per-character estimate otherwise), `pool` (the process's threads for batches of calls), `cancel`
(a run's cancel and a process's shutdown reaching calls that wait: `CancelToken`, `with_cancel`,
`shut_down`), `config` (what the host application tells the transport).

This package imports no Django and no project app (an import-linter contract in pyproject.toml
holds it to that): judges, generation, the meta-evaluator and the OCR vision engine use it.
"""
from . import access, cancel, observe, tokens
from .batches import (
    BatchApiError,
    BatchClient,
    BatchState,
    BatchUnsupported,
    ResultLine,
    body_line,
    read_result_line,
    request_line,
)
from .cancel import CancelToken, cancellable, shut_down, with_cancel
from .client import (
    MISSING_KEY_HINT,
    BadResponse,
    CallCancelled,
    CallSpec,
    Completion,
    EndpointRefused,
    EndpointSpec,
    EndpointUnusable,
    LlmCallFailed,
    MissingApiKey,
    NonFiniteResponse,
    ReplyTooLarge,
    backoff_delay,
    bounded_http_client,
    check_connection,
    check_endpoint,
    check_finite,
    complete,
    first_choice,
    limiter_for,
    read_api_key,
    read_reply,
    redirect_problem,
    request_body,
    retrying,
    send_request,
    warm_up,
)
from .config import LlmConfig, configure, refresh
from .headers import parse_retry_after
from .observe import CallRecord, labelled, set_observer, with_label
from .pool import call_pool

__all__ = [
    "access", "cancel", "observe", "tokens", "CancelToken", "cancellable", "with_cancel", "shut_down", "CallCancelled", "CallRecord", "labelled", "with_label", "set_observer", "LlmConfig", "configure",
    "refresh", "call_pool",
    "EndpointSpec", "CallSpec", "Completion", "complete", "check_connection", "send_request", "check_endpoint", "read_api_key", "limiter_for",
    "bounded_http_client", "warm_up", "parse_retry_after", "backoff_delay", "MISSING_KEY_HINT",
    "LlmCallFailed", "ReplyTooLarge", "EndpointUnusable", "MissingApiKey", "EndpointRefused",
    "BadResponse", "NonFiniteResponse", "check_finite", "first_choice", "redirect_problem", "request_body", "read_reply", "retrying",
    "BatchClient", "BatchState", "BatchApiError", "BatchUnsupported", "ResultLine", "request_line", "body_line", "read_result_line",
]
