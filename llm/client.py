"""
The one way this project talks to an LLM: the `openai` client against any OpenAI-compatible
endpoint, with our own retries.

The client is built with ``max_retries=0``; `complete` retries 429s, 5xx answers, timeouts,
dropped connections and unreadable bodies itself, with exponential backoff and jitter, waiting
at least as long as a ``Retry-After`` (or ``retry-after-ms``, or the reset of the budget a 429
says is spent) asks, and telling the endpoint's limiter to pause every worker for that long. A
429 is the provider pacing us, not a failure: it does not use up an attempt until the call has
waited ``rate_limit_max_wait_seconds`` in all (an exhausted quota, ``insufficient_quota``, is not
retried). Every answer's ``x-ratelimit-*`` headers reach the limiter (llm.ratelimit), which paces
all workers by the limits they name. Each attempt is sent by one of the
process's sender threads for the endpoint (llm.senders), which holds a limiter slot
while the HTTP call runs and sends the next queued call on it. Every failed attempt is written
down in the result.

Before a key is read or a call made, the key variable and the host are checked against the
allow-lists (llm.access); an answer longer than REALMATH_LLM_MAX_OUTPUT_CHARS is cut
to it, and the cut is written down beside the failed attempts (kind "truncated").

Redirects are never followed (a 3xx would send the prompt to a host the allow-list never saw):
a 3xx is an error of kind "redirect", not retried. Each attempt has one deadline, its timeout,
for connecting, sending and reading together (reply_limit.DeadlineTransport), so a trickling
server cannot hold a call beyond it. A 200 whose body is not a chat completion (an HTML page,
JSON without `choices`) is kind "bad_response" and retried.
"""
import functools
import math
import os
import random
import threading
import time
from dataclasses import dataclass, field
from typing import NamedTuple
from urllib.parse import urlsplit

from . import access, cancel, ratelimit, tokens
from . import headers as limit_headers
from .config import current
from .senders import senders_for

RETRYABLE_STATUS = {408, 409, 425, 429}


@dataclass(frozen=True)
class EndpointSpec:
    """Where to call and how hard: a plain snapshot of an LlmEndpoint row."""

    key: str
    base_url: str
    api_key_env: str = ""
    timeout: float = 120.0
    max_attempts: int = 5
    max_concurrency: int = 8
    requests_per_minute: int = 0
    tokens_per_minute: int = 0


@dataclass(frozen=True)
class CallSpec:
    model: str
    temperature: float | None = None
    max_tokens: int | None = None
    reasoning_effort: str = ""
    extra_body: dict = field(default_factory=dict)


@dataclass
class Completion:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: int = 0
    attempts: int = 1
    errors: list = field(default_factory=list)
    finish_reason: str = ""
    truncated_from: int = 0  # the answer's length in characters when it was cut to the cap


class LlmCallFailed(Exception):
    """Every attempt failed (or the failure cannot be retried); `errors` says how."""

    def __init__(self, message, *, errors, attempts, latency_ms=0):
        super().__init__(message)
        self.errors = errors
        self.attempts = attempts
        self.latency_ms = latency_ms


class CallCancelled(LlmCallFailed):
    """The call stopped before its next attempt: its run was cancelled or its process is shutting
    down (llm.cancel). Nothing more was sent; `errors` ends with one of kind "cancelled"."""


class ReplyTooLarge(Exception):
    """An answer over REALMATH_LLM_MAX_REPLY_BYTES, or compressed though none was asked for: not read."""


class BadResponse(Exception):
    """A 200 whose body is not a chat completion (an HTML page, JSON without `choices`)."""


class NonFiniteResponse(BadResponse):
    """An answer whose numbers (embedding vectors, log-probabilities) are NaN, infinite or beyond
    MAX_MAGNITUDE: a bad response of its own kind ("non_finite"), retried like one. Python's JSON
    reader accepts ``NaN``, ``Infinity`` and ``1e400`` (read as infinity); stored or analysed, such
    numbers poison every figure computed from them and cannot be written as JSON."""


# Larger than any embedding component or log-probability a real model gives, small enough that
# a sum of squares over 10^4 dimensions stays finite in float32 (the vectors are stored as float32).
MAX_MAGNITUDE = 1e12


def check_finite(values, what):
    """Raise NonFiniteResponse unless every number of `values` (an iterable of numbers, None
    allowed and skipped) is finite and within ±MAX_MAGNITUDE; `what` names them in the message."""
    for index, value in enumerate(values):
        if value is None:
            continue
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise NonFiniteResponse(f"The answer's {what} hold a value that is not a number at "
                                    f"position {index}: {repr(value)[:40]}.") from None
        if not math.isfinite(number) or abs(number) > MAX_MAGNITUDE:
            raise NonFiniteResponse(f"The answer's {what} are not usable numbers: {number!r} at position {index} "
                                    f"(NaN, infinite or beyond ±{MAX_MAGNITUDE:.0e}).")


class EndpointUnusable(Exception):
    """The endpoint cannot be called as configured; the message says why (and holds no secret)."""


class MissingApiKey(EndpointUnusable):
    """The key variable is allowed but set neither in the environment nor as a mounted secret."""


class EndpointRefused(EndpointUnusable):
    """The key variable or the host is not allowed (see llm.access)."""


def read_api_key(name):
    """The key named by an endpoint: an environment variable, else a mounted secret file.

    A blank name means the endpoint needs no key (local servers); the client still needs
    some string. A name off the allow-list is refused before anything is read.
    """
    if not name:
        return "not-needed"
    problem = access.key_name_problem(name)
    if problem:
        raise EndpointRefused(problem)
    value = os.environ.get(name, "").strip()
    if value:
        return value
    for directory in (os.environ.get("CREDENTIALS_DIRECTORY", ""), "/run/secrets"):
        if directory:
            path = os.path.join(directory, name)
            if os.path.isfile(path):
                with open(path, encoding="utf-8") as handle:
                    value = handle.read().strip()
                if value:
                    return value
    raise MissingApiKey(f"The API key variable {name} is not set in this process's environment.")


MISSING_KEY_HINT = (
    "Set it where the web server and the workers run, or leave the endpoint's API key variable blank "
    "if the server needs no key."
)

_clients = {}
_clients_lock = threading.Lock()
_tls = []  # one TLS context per process tree: building one costs ~40 ms, a forked child inherits it


def check_endpoint(endpoint):
    """Raise EndpointUnusable unless `endpoint` (an EndpointSpec) may be called now; return its key."""
    problem = access.url_problem(endpoint.base_url)
    if problem:
        raise EndpointRefused(problem)
    return read_api_key(endpoint.api_key_env)


def openai_client(endpoint):
    """One `openai.OpenAI` per process and endpoint (it is safe to share between threads)."""
    from openai import OpenAI  # imported here: ~2 s; web processes that never call an LLM skip it

    api_key = check_endpoint(endpoint)
    key = (os.getpid(), endpoint.base_url, api_key, endpoint.timeout)
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            client = OpenAI(base_url=endpoint.base_url, api_key=api_key, timeout=endpoint.timeout, max_retries=0,
                            http_client=bounded_http_client())
            _clients[key] = client
        return client


def check_connection(endpoint):
    """Ask an endpoint for its model list once (no retries, the endpoint's timeout): None when it
    answers, else what went wrong in words. The key is read as for a call and never shown."""
    try:
        client = openai_client(endpoint)
        models = client.models.list()
        names = [m.id for m in getattr(models, "data", [])][:5]
    except EndpointUnusable as exc:
        return str(exc)
    except Exception as exc:  # noqa: BLE001 - any failure of the call is the answer
        status = getattr(exc, "status_code", None)
        return f"{type(exc).__name__}{f' (HTTP {status})' if status else ''}: the endpoint did not answer as expected."
    return {"models": names}


def bounded_http_client(max_reply_bytes=None):
    """The `openai` package's own default HTTP client, on the process's shared TLS context
    (what httpx would build itself: the same CA bundle), reading at most
    REALMATH_LLM_MAX_REPLY_BYTES of an answer (or `max_reply_bytes`: the Batch API's result
    files, llm.batches) (`reply_limit.bound_reply`), following no redirect, each request within
    one deadline (`reply_limit.DeadlineTransport`)."""
    import httpx2  # the HTTP library of this `openai` release (requirements.txt pins both)
    from openai import DefaultHttpxClient  # lazy: the openai package loads on the first call

    from .reply_limit import (  # imports httpx: only where a client is built
        DeadlineTransport,
        bound_reply,
        start_deadline,
    )

    if not _tls:
        _tls.append(httpx2.create_ssl_context())
    # Uncompressed answers only: a byte cap on a compressed body would not bound what it inflates to.
    # No redirects (a 3xx is an error: `redirect_problem`), and no proxy or .netrc from the
    # environment: a call goes to the allowed host it names, within one deadline per request.
    # The limits are the openai client's own defaults (a given transport ignores the client's).
    transport = DeadlineTransport(verify=_tls[0], limits=httpx2.Limits(max_connections=1000, max_keepalive_connections=100))
    return DefaultHttpxClient(verify=_tls[0], headers={"Accept-Encoding": "identity"}, transport=transport,
                              follow_redirects=False, trust_env=False,
                              event_hooks={"request": [start_deadline],
                                           "response": [ratelimit.observe_response,
                                                        functools.partial(bound_reply, limit=max_reply_bytes)]})


def redirect_problem(exc):
    """What to say of an answer with a 3xx status (an openai APIStatusError), after "The endpoint ";
    None for other answers."""
    status = getattr(exc, "status_code", 0) or 0
    if not 300 <= status < 400:
        return None
    location = exc.response.headers.get("location", "") if getattr(exc, "response", None) is not None else ""
    target = ""
    if location:
        parts = urlsplit(location)
        target = f" to {parts.scheme}://{parts.netloc}" if parts.netloc else " to a path on the same host"
    return (f"answered {status}, a redirect{target}; redirects are not followed for LLM calls "
            "(set the URL to where the server really answers).")


def warm_up():
    """Build what a process's first call needs (the TLS context, the client's lazily imported
    modules), so that worker processes forked after this start calling at once (~0.12 s sooner)."""
    from openai import OpenAI  # lazy: the openai package loads on the first call

    with _clients_lock:
        warm = OpenAI(base_url="http://127.0.0.1/v1", api_key="warm-up", http_client=bounded_http_client())
        return warm.chat.completions  # the attribute imports the resource modules


def limiter_for(endpoint):
    return ratelimit.Limiter(
        ratelimit.Limits(
            key=endpoint.key,
            max_concurrency=endpoint.max_concurrency,
            requests_per_minute=endpoint.requests_per_minute,
            tokens_per_minute=endpoint.tokens_per_minute,
            # A call cannot outlive its timeout; a killed worker's slot frees itself after this.
            lease_seconds=endpoint.timeout * 1.5 + 5.0,
            window=float(current().ratelimit_window_seconds),
        )
    )


def estimate_tokens(messages, max_tokens, model=""):
    """The tokens the per-minute budget reserves before the real usage is known (llm.tokens)."""
    return tokens.estimate_request(messages, max_tokens, model)


def complete(endpoint, call, messages, *, limiter=None, sleep=time.sleep):
    """Send one chat completion; retry what can be retried; return a Completion or raise LlmCallFailed."""
    from openai.types.chat import ChatCompletion  # slow import: only where a call is made

    kwargs = request_body(call, messages)

    def request(client):
        # The client's raw POST (its documented way to send any request) rather than
        # `chat.completions.create`: the same request and parsed reply, without walking the
        # typed parameters to rewrite them, which cost a third of each call's CPU (our
        # bodies are plain JSON already). Measured in docs/judges.md, "Fifth round".
        return read_reply(client.post("/chat/completions", body=kwargs, cast_to=ChatCompletion))

    sent = send_request(endpoint, request, estimate_tokens(messages, call.max_tokens, call.model), limiter=limiter, sleep=sleep)
    text, prompt_tokens, completion_tokens, finish = sent.reply
    text, cut_from = access.cap_output(text)
    if cut_from:
        sent.errors.append(_truncation_note(sent.attempts, cut_from, len(text)))
    return Completion(text, prompt_tokens, completion_tokens, sent.latency_ms, sent.attempts, sent.errors, finish,
                      cut_from)


@dataclass
class Sent:
    """What `send_request` got: the reply of the attempt that succeeded and the failed attempts before it."""

    reply: object
    latency_ms: int
    attempts: int
    errors: list


def send_request(endpoint, request, estimate, *, limiter=None, sleep=time.sleep):
    """Send one request with the endpoint's retries, limits and sender threads; return a `Sent`.

    `request(client)` makes the call on the process's `openai.OpenAI` for the endpoint (e.g.
    ``client.post(path, body=..., cast_to=...)``) and returns the reply read into an object with
    a ``tokens`` attribute (the usage the limiter settles with). Used by chat completions
    (`complete`) and by the studies' embeddings and completions calls. Raises LlmCallFailed.
    """
    limiter = limiter or limiter_for(endpoint)
    try:
        client = openai_client(endpoint)
    except EndpointUnusable as exc:
        raise LlmCallFailed(str(exc), errors=[{"attempt": 0, "kind": "config", "message": str(exc)}], attempts=0) from exc
    errors, spent_ms = [], 0
    plan = RetryPlan(endpoint.max_attempts)
    senders = senders_for(limiter)

    def send(pending):
        with limiter.watching(pending.tokens):  # the answer's rate-limit headers reach the limiter
            reply = request(client)
        pending.actual_tokens = reply.tokens
        return reply

    attempt = 0
    token = cancel.current()  # the caller's cancel: checked before each attempt and during every wait

    def pause(seconds):
        if sleep is time.sleep:
            cancel.pause(seconds, token)
        else:  # a test's clock
            sleep(seconds)
            cancel.raise_if_cancelled(token)

    while True:
        attempt += 1
        started = time.monotonic()
        try:
            cancel.raise_if_cancelled(token)  # no new attempt after a cancel
            sent = senders.run(send, estimate, token)  # on a thread holding one of the endpoint's slots
            started = sent.started or time.monotonic()
            reply = sent.outcome()
            elapsed = int((time.monotonic() - started) * 1000)
            return Sent(reply, elapsed, attempt, errors)
        except cancel.Cancelled as exc:
            errors.append(_error(attempt, time.monotonic(), "cancelled", str(exc)[:500]))
            raise CallCancelled(f"cancelled after {attempt - 1} attempt(s): {exc}", errors=errors,
                                attempts=attempt - 1, latency_ms=spent_ms) from None
        except Exception as exc:  # noqa: BLE001 - what is not a failed attempt is raised again below
            failed = failed_attempt(exc, attempt, started)
            if failed is None:
                raise
        spent_ms += failed.error["latency_ms"]
        errors.append(failed.error)
        if not failed.retryable:
            break
        try:
            wait = plan.next_wait(failed)
            if wait is None:
                break
            if wait.paced:  # paced, not failed: no attempt used
                limiter.throttled(failed.retry_after)
            elif failed.retry_after is not None:
                limiter.cooldown(failed.retry_after)
            pause(wait.seconds)  # wakes on a cancel or a shutdown
        except cancel.Cancelled as exc:
            errors.append(_error(attempt + 1, time.monotonic(), "cancelled", str(exc)[:500]))
            raise CallCancelled(f"cancelled after {attempt} attempt(s): {exc}", errors=errors, attempts=attempt,
                                latency_ms=spent_ms) from None
    last = errors[-1]
    raise LlmCallFailed(
        f"{last['kind']} error after {len(errors)} attempt(s): {last['message']}",
        errors=errors, attempts=len(errors), latency_ms=spent_ms,
    )


class FailedAttempt(NamedTuple):
    """One attempt that failed, as the retry rules see it."""

    error: dict  # what is recorded: attempt, kind, message, latency_ms, at (status, retry_after)
    retry_after: float | None  # what the answer asked to wait (Retry-After, or a spent budget's reset)
    retryable: bool
    rate_limited: bool  # a 429 that may be waited out without using up an attempt


def failed_attempt(exc, attempt, started):
    """The retry rules' reading of an exception raised by an attempt (an `openai` client built with
    ``max_retries=0``, on `bounded_http_client`); None for an exception that is no failed attempt
    (a bug, a cancel): the caller raises it again.

    Retried: 429 and 408/409/425, 5xx, timeouts, dropped connections, bodies that are not the JSON
    the API promises (kind ``bad_response``, ``non_finite``). Not retried: a redirect (never
    followed), other 4xx, an exhausted quota (``insufficient_quota``: no wait refills it), an
    answer too large to read."""
    from openai import APIConnectionError, APIStatusError, APITimeoutError, OpenAIError  # slow import, as above

    if isinstance(exc, APIStatusError):
        moved = redirect_problem(exc)
        if moved:  # never followed, and the same request would be redirected again
            error = _error(attempt, started, "redirect", f"The endpoint {moved}"[:500], status=exc.status_code)
            return FailedAttempt(error, None, False, False)
        error = _error(attempt, started, "http", str(exc)[:500], status=exc.status_code)
        said = limit_headers.read_limits(exc.response.headers if exc.response is not None else {})
        retry_after = said.retry_wait()
        if retry_after is not None:
            error["retry_after"] = retry_after
        retryable = exc.status_code in RETRYABLE_STATUS or exc.status_code >= 500
        if getattr(exc, "code", None) == "insufficient_quota":  # no wait refills it
            retryable = False
        return FailedAttempt(error, retry_after, retryable, exc.status_code == 429 and retryable)
    if isinstance(exc, APITimeoutError):
        cause = f" ({exc.__cause__})" if exc.__cause__ is not None and str(exc.__cause__) else ""
        return FailedAttempt(_error(attempt, started, "timeout", f"{exc}{cause}"[:500]), None, True, False)
    if isinstance(exc, ReplyTooLarge):  # the same request would get the same answer: not retried
        return FailedAttempt(_error(attempt, started, "too_large", str(exc)), None, False, False)
    if isinstance(exc, APIConnectionError):
        return FailedAttempt(_error(attempt, started, "connection", str(exc)[:500]), None, True, False)
    if isinstance(exc, NonFiniteResponse):  # NaN, Infinity or overflowing numbers: retried as a bad body is
        return FailedAttempt(_error(attempt, started, "non_finite", str(exc)[:500]), None, True, False)
    if isinstance(exc, (ValueError, OpenAIError, BadResponse)):
        # A body that is not the JSON the API promises (a proxy's error page, a cut stream).
        error = _error(attempt, started, "bad_response", f"{type(exc).__name__}: {exc}"[:500])
        return FailedAttempt(error, None, True, False)
    return None


class Wait(NamedTuple):
    seconds: float
    paced: bool  # a 429 waited out without using up an attempt


class RetryPlan:
    """The waits between the attempts of one call: exponential back-off with jitter
    (LlmConfig.retry_base_seconds, retry_max_seconds), never shorter than what the answer asked
    (Retry-After, at most headers.MAX_RETRY_AFTER). A 429 uses up no attempt until the call has
    waited LlmConfig.rate_limit_max_wait_seconds for 429s in all; then it counts like any failure."""

    def __init__(self, attempts, config=None):
        config = config or current()
        self.base, self.cap = float(config.retry_base_seconds), float(config.retry_max_seconds)
        self.attempts = max(1, int(attempts))
        self.max_limited_wait = float(config.rate_limit_max_wait_seconds)
        self.failures, self.limited, self.limited_wait = 0, 0, 0.0  # attempts used up; 429s waited out, and for how long

    def next_wait(self, failed: FailedAttempt) -> Wait | None:
        """How long to wait before the next attempt after `failed` (a retryable one); None when the
        call has used up its attempts."""
        if failed.rate_limited and self.limited_wait < self.max_limited_wait:
            self.limited += 1
            delay = backoff_delay(min(self.limited, 4), failed.retry_after, base=self.base, cap=self.cap)
            self.limited_wait += delay
            return Wait(delay, True)
        self.failures += 1
        if self.failures >= self.attempts:
            return None
        return Wait(backoff_delay(self.failures, failed.retry_after, base=self.base, cap=self.cap), False)


def retrying(request, *, retries, max_wait=None):
    """``request()`` with the transport's retry rules, for a caller that makes its own request on
    its own `openai` client (built with ``max_retries=0``, on `bounded_http_client`) and reads its
    own errors: the vision OCR engine, the Batch API (llm.batches). No limiter or sender threads.

    `retries` is how many attempts may follow the first (429s waited out aside, as `RetryPlan`
    says); `max_wait`, when given, caps the seconds spent waiting in all (a wait that would go past
    it ends the call). Each wait goes through `cancel.pause` and the caller's cancel
    (`cancel.current()`) and the process's shutdown are checked before every attempt: nothing is
    sent after a cancel, which raises CallCancelled (its errors: the failed attempts, then one of
    kind "cancelled"). When the attempts are used up, or a failure cannot be retried, the last
    attempt's exception is raised as it was, for the caller's own message."""
    token = cancel.current()
    plan = RetryPlan(int(retries) + 1)
    errors, waited, attempt = [], 0.0, 0
    while True:
        attempt += 1
        started = time.monotonic()
        try:
            cancel.raise_if_cancelled(token)  # no new attempt after a cancel
        except cancel.Cancelled as exc:
            errors.append(_error(attempt, started, "cancelled", str(exc)[:500]))
            raise CallCancelled(f"cancelled after {attempt - 1} attempt(s): {exc}", errors=errors,
                                attempts=attempt - 1) from None
        try:
            return request()
        except Exception as exc:  # noqa: BLE001 - what is not a failed attempt is raised again
            failed = failed_attempt(exc, attempt, started)
            if failed is None or not failed.retryable:
                raise
            errors.append(failed.error)
            wait = plan.next_wait(failed)
            if wait is None or (max_wait is not None and waited + wait.seconds > max_wait):
                raise
        waited += wait.seconds
        try:
            cancel.pause(wait.seconds, token)  # wakes on a cancel or a shutdown
        except cancel.Cancelled as exc:
            errors.append(_error(attempt + 1, time.monotonic(), "cancelled", str(exc)[:500]))
            raise CallCancelled(f"cancelled after {attempt} attempt(s): {exc}", errors=errors,
                                attempts=attempt) from None


def request_body(call, messages):
    """The JSON body of a chat completion (a live call's, and a Batch API line's `body`)."""
    kwargs = {"model": call.model, "messages": messages}
    if call.temperature is not None:
        kwargs["temperature"] = call.temperature
    if call.max_tokens:
        kwargs["max_tokens"] = call.max_tokens
    if call.reasoning_effort:
        kwargs["reasoning_effort"] = call.reasoning_effort
    if call.extra_body:
        kwargs.update(call.extra_body)  # as the client merges `extra_body`: its keys win
    return kwargs


class Reply(NamedTuple):
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str

    @property
    def tokens(self):
        return self.prompt_tokens + self.completion_tokens


def first_choice(response):
    """The first choice of a parsed chat completion; BadResponse when the body was not one (the
    client hands back a string for a non-JSON content type, and builds objects without checking
    them, so `choices` may be missing, empty or of any type)."""
    from openai.types.chat import ChatCompletion  # lazy: the openai package loads on the first call

    if not isinstance(response, ChatCompletion):
        shown = repr(response)[:120]
        raise BadResponse(f"The answer is not a chat completion: {type(response).__name__} {shown}")
    choices = response.choices
    if not isinstance(choices, list) or not choices:
        raise BadResponse(f"The answer has no choices (choices = {repr(choices)[:80]}).")
    choice = choices[0]
    message = getattr(choice, "message", None)
    content = getattr(message, "content", None)
    if message is None or not (content is None or isinstance(content, str)):
        raise BadResponse(f"The answer's first choice has no message text ({repr(choice)[:120]}).")
    return choice


def _count(value):
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def read_reply(response):
    """The text, token counts and finish reason of a parsed chat completion (BadResponse if it is none)."""
    choice = first_choice(response)
    text = choice.message.content or ""
    usage = getattr(response, "usage", None)
    prompt_tokens = _count(getattr(usage, "prompt_tokens", 0)) if usage else 0
    completion_tokens = _count(getattr(usage, "completion_tokens", 0)) if usage else 0
    finish = getattr(choice, "finish_reason", "")
    return Reply(text, prompt_tokens, completion_tokens, finish if isinstance(finish, str) else "")


def _error(attempt, started, kind, message, status=None):
    error = {
        "attempt": attempt,
        "kind": kind,
        "message": message,
        "latency_ms": int((time.monotonic() - started) * 1000),
        "at": round(time.time(), 3),
    }
    if status is not None:
        error["status"] = status
    return error


def _truncation_note(attempt, length, kept):
    """Recorded with the failed attempts, so that every copy of the answer carries it."""
    return {
        "attempt": attempt,
        "kind": "truncated",
        "message": f"The answer had {length:,} characters; {kept:,} were kept, head and tail "
                   f"(REALMATH_LLM_MAX_OUTPUT_CHARS = {access.max_output_chars():,}).",
        "chars": length,
        "at": round(time.time(), 3),
    }


def is_truncation(error):
    return isinstance(error, dict) and error.get("kind") == "truncated"


def backoff_delay(attempt, retry_after=None, *, base=1.0, cap=60.0):
    """Exponential backoff with jitter; never shorter than the server's Retry-After."""
    delay = min(cap, base * (2 ** (attempt - 1)))
    delay = random.uniform(delay / 2, delay)
    if retry_after is not None:
        delay = max(delay, retry_after * random.uniform(1.0, 1.1))
    return delay
