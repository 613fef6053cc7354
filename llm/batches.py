"""The Batch API of OpenAI-compatible providers: `/v1/files` and `/v1/batches`, through the `openai` client.

A batch is a JSONL file of requests, one a line (``{"custom_id", "method", "url", "body"}``, the
body exactly what a live call sends: `client.request_body`), uploaded with purpose ``batch``;
a batch made from it (``completion_window`` ``24h``, our ``metadata``) goes through
validating, in_progress, finalizing to completed (or failed, expired, cancelling, cancelled);
its ``output_file_id`` holds a line per answered request and its ``error_file_id`` a line per
request that failed, each naming its ``custom_id``.

This module only talks to the provider; what a run does with it (parts, lines, retries, the
results) is the host application's (grading/judges/services/batches.py). It imports no Django.

    client = llm.BatchClient(endpoint, timeout=900, max_download_bytes=800_000_000)
    client.check()                                    # BatchUnsupported when there is no /v1/batches
    file_id = client.find_file(name) or client.upload(name, path)
    batch = client.find_batch({"realmath_token": t, "realmath_part": "1"}) or client.create(file_id, metadata)
    batch = client.retrieve(batch.id); client.download(batch.output_file_id, out_path)
    for raw in open(out_path, "rb"): line = read_result_line(raw)
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from . import access
from .client import (
    BadResponse,
    Completion,
    EndpointUnusable,
    LlmCallFailed,
    ReplyTooLarge,
    bounded_http_client,
    check_endpoint,
    read_reply,
    request_body,
    retrying,
)

BATCH_URL = "/v1/chat/completions"  # the `url` of every line and the batch's `endpoint` (OpenAI's spelling)
COMPLETION_WINDOW = "24h"
STATUSES = ("validating", "failed", "in_progress", "finalizing", "completed", "expired", "cancelling", "cancelled")
TERMINAL = ("completed", "failed", "expired", "cancelled")
LIST_SCAN = 2000  # how many of the provider's newest files or batches are looked through for ours


class BatchApiError(Exception):
    """A request to /files or /batches failed; `status` is the HTTP status (None: no answer)."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


class BatchUnsupported(BatchApiError):
    """The endpoint does not serve the Batch API (no /v1/files or /v1/batches)."""


@dataclass(frozen=True)
class BatchState:
    """What the provider says of one batch."""

    id: str
    status: str
    input_file_id: str = ""
    output_file_id: str = ""
    error_file_id: str = ""
    request_counts: dict = field(default_factory=dict)  # total, completed, failed
    errors: list = field(default_factory=list)  # [{"code", "message", "line"}] of a batch that failed validation
    times: dict = field(default_factory=dict)  # created_at, in_progress_at, expires_at, ... (Unix seconds)
    metadata: dict = field(default_factory=dict)

    @property
    def terminal(self):
        return self.status in TERMINAL


@dataclass(frozen=True)
class ResultLine:
    """One line of an output or error file: the answer (a Completion) or the error, by custom_id."""

    custom_id: str
    completion: Completion | None = None
    error: dict | None = None


def request_line(custom_id, call, messages) -> bytes:
    """One JSONL line of a batch's input file, with its newline: the body a live call sends."""
    return body_line(custom_id, request_body(call, messages))


def body_line(custom_id, body) -> bytes:
    """The JSONL line of a request whose body is already made (`request_body`)."""
    line = {"custom_id": custom_id, "method": "POST", "url": BATCH_URL, "body": body}
    return (json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def read_result_line(raw) -> ResultLine | None:
    """A line of an output or error file; None for a blank line. Never raises on the provider's text:
    a line that cannot be read is an error of kind ``bad_response`` (with its custom_id if readable)."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    if not text.strip():
        return None
    try:
        data = json.loads(text)
    except ValueError as exc:
        return ResultLine("", error={"kind": "bad_response", "message": f"unreadable result line: {exc}"[:300]})
    if not isinstance(data, dict):
        return ResultLine("", error={"kind": "bad_response", "message": "a result line that is not an object"})
    custom_id = str(data.get("custom_id") or "")
    response = data.get("response") if isinstance(data.get("response"), dict) else None
    error = data.get("error") if isinstance(data.get("error"), dict) else None
    status = response.get("status_code") if response else None
    if response is not None and status == 200 and error is None:
        try:
            return ResultLine(custom_id, completion=_completion(response.get("body")))
        except (BadResponse, TypeError, ValueError) as exc:
            return ResultLine(custom_id, error={"kind": "bad_response", "message": str(exc)[:500], "status": 200})
    body = response.get("body") if response else None
    detail = error or (body.get("error") if isinstance(body, dict) and isinstance(body.get("error"), dict) else {}) or {}
    found = {"kind": "batch", "code": str(detail.get("code") or ""),
             "message": str(detail.get("message") or "the batch returned no answer for this request")[:500]}
    if status is not None:
        found["status"] = status
    return ResultLine(custom_id, error=found)


def _completion(body):
    from openai.types.chat import ChatCompletion  # slow import: only where results are read

    if not isinstance(body, dict):
        raise BadResponse("The result line's body is not a chat completion.")
    reply = read_reply(ChatCompletion.construct(**body))
    text, cut_from = access.cap_output(reply.text)
    errors = []
    if cut_from:
        errors.append({"attempt": 1, "kind": "truncated", "chars": cut_from,
                       "message": f"The answer had {cut_from:,} characters; {len(text):,} were kept, head and tail."})
    return Completion(text, reply.prompt_tokens, reply.completion_tokens, 0, 1, errors, reply.finish_reason, cut_from)


RETRIES = 2  # attempts after the first of each request (429s waited out aside: llm.client.RetryPlan)


class BatchClient:
    """The /files and /batches requests of one endpoint (an `EndpointSpec`), on the transport's
    bounded HTTP client (no redirects, no proxy from the environment, one deadline per request):
    `timeout` bounds each request (an upload of a large file too), `max_download_bytes` a result file.

    The `openai` client retries nothing (``max_retries=0``): each request is retried by the
    transport's rules (`llm.retrying`: 429s, 5xx, timeouts and dropped connections, `retries`
    attempts after the first, the waits at least what a Retry-After asks), every wait through
    `llm.cancel.pause`, so the caller's cancel (`llm.cancellable`) or the worker's shutdown
    (`llm.shut_down`) ends it at once with `llm.CallCancelled` and nothing, an upload included,
    is sent after it. The SDK's own retries slept out a Retry-After that nothing could wake, and
    sent a cancelled run's upload again."""

    def __init__(self, endpoint, *, timeout=900.0, max_download_bytes=None, retries=RETRIES):
        from openai import OpenAI  # imported here: ~2 s; processes that never call an LLM skip it

        try:
            api_key = check_endpoint(endpoint)
        except EndpointUnusable as exc:
            raise LlmCallFailed(str(exc), errors=[{"kind": "config", "message": str(exc)}], attempts=0) from exc
        self.endpoint = endpoint
        self.retries = retries
        self._client = OpenAI(base_url=endpoint.base_url, api_key=api_key, timeout=timeout, max_retries=0,
                              http_client=bounded_http_client(max_reply_bytes=max_download_bytes))

    def _call(self, what, request):
        from openai import APIConnectionError, APIStatusError, APITimeoutError  # slow import, as above

        try:
            return retrying(request, retries=self.retries)  # CallCancelled (an LlmCallFailed) goes through
        except APIStatusError as exc:
            if exc.status_code in (404, 405, 501) and what in ("files", "batches"):
                raise BatchUnsupported(
                    f"The endpoint has no Batch API: {self.endpoint.base_url.rstrip('/')}/{what} answered "
                    f"HTTP {exc.status_code}. Run this setting live, or use a provider that serves /v1/files "
                    "and /v1/batches.", exc.status_code) from exc
            raise BatchApiError(f"{what}: HTTP {exc.status_code}: {str(exc)[:300]}", exc.status_code) from exc
        except (APITimeoutError, APIConnectionError) as exc:
            raise BatchApiError(f"{what}: {type(exc).__name__}: {str(exc)[:300]}") from exc
        except (ValueError, BadResponse) as exc:
            raise BatchApiError(f"{what}: an answer that is not the Batch API's: {str(exc)[:300]}") from exc
        except ReplyTooLarge as exc:
            raise BatchApiError(f"{what}: {exc}") from exc

    def check(self):
        """Raise BatchUnsupported unless the endpoint lists its batches and its files."""
        self._call("batches", lambda: self._client.batches.list(limit=1))
        self._call("files", lambda: self._client.files.list(purpose="batch", limit=1))

    def find_file(self, filename) -> str | None:
        """The id of an uploaded batch file of this name (a worker that died after uploading it)."""
        def scan():
            for seen, item in enumerate(self._client.files.list(purpose="batch")):
                if seen >= LIST_SCAN:
                    return None
                if getattr(item, "filename", None) == filename:
                    return item.id
            return None

        return self._call("files", scan)

    def upload(self, filename, path) -> str:
        with open(path, "rb") as handle:
            def send():
                handle.seek(0)  # each attempt sends the whole file
                return self._client.files.create(file=(filename, handle, "application/jsonl"), purpose="batch")

            uploaded = self._call("files", send)
        return uploaded.id

    def find_batch(self, metadata) -> BatchState | None:
        """The newest batch whose metadata holds every key of `metadata` (our run and part)."""
        def scan():
            for seen, item in enumerate(self._client.batches.list(limit=100)):
                if seen >= LIST_SCAN:
                    return None
                found = dict(getattr(item, "metadata", None) or {})
                if all(found.get(k) == v for k, v in metadata.items()):
                    return _state(item)
            return None

        return self._call("batches", scan)

    def create(self, file_id, metadata) -> BatchState:
        return _state(self._call("batches", lambda: self._client.batches.create(
            input_file_id=file_id, endpoint=BATCH_URL, completion_window=COMPLETION_WINDOW, metadata=metadata)))

    def retrieve(self, batch_id) -> BatchState:
        return _state(self._call("batches", lambda: self._client.batches.retrieve(batch_id)))

    def cancel(self, batch_id) -> BatchState:
        return _state(self._call("batches", lambda: self._client.batches.cancel(batch_id)))

    def download(self, file_id, path) -> int:
        """Write a file's content to `path` as it streams in; returns its size in bytes."""
        def fetch():
            size = 0
            with self._client.files.with_streaming_response.content(file_id) as response, open(path, "wb") as out:
                for chunk in response.iter_bytes():
                    out.write(chunk)
                    size += len(chunk)
            return size

        return self._call("files", fetch)


def _state(batch) -> BatchState:
    counts = getattr(batch, "request_counts", None)
    errors = getattr(getattr(batch, "errors", None), "data", None) or []
    times = {name: getattr(batch, name, None) for name in (
        "created_at", "in_progress_at", "expires_at", "finalizing_at", "completed_at", "failed_at", "expired_at",
        "cancelling_at", "cancelled_at")}
    return BatchState(
        id=batch.id, status=str(batch.status), input_file_id=getattr(batch, "input_file_id", "") or "",
        output_file_id=getattr(batch, "output_file_id", None) or "", error_file_id=getattr(batch, "error_file_id", None) or "",
        request_counts={"total": getattr(counts, "total", 0) or 0, "completed": getattr(counts, "completed", 0) or 0,
                        "failed": getattr(counts, "failed", 0) or 0} if counts is not None else {},
        errors=[{"code": getattr(e, "code", "") or "", "message": (getattr(e, "message", "") or "")[:500],
                 "line": getattr(e, "line", None)} for e in errors],
        times={k: v for k, v in times.items() if v}, metadata=dict(getattr(batch, "metadata", None) or {}),
    )
