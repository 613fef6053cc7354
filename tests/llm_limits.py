"""
Rate limits as a provider enforces them, for the loopback server (tests/llm_server.py).

Per API key (the ``Authorization`` header), N requests and T tokens per minute, each a bucket
that holds a minute's budget and refills continuously at N (or T) per minute, as OpenAI describes
its limits (``x-ratelimit-reset-*`` is the time until the bucket is full again). A request costs
one request and its tokens as a provider counts them before answering: the prompt's estimate
(characters / 4 + 1, the server's own usage figure) plus ``max_tokens`` (``max_completion_tokens``;
DEFAULT_COMPLETION_TOKENS when neither is given). A request either budget cannot pay for is
answered 429 at once, with ``retry-after`` (whole seconds, rounded up), ``retry-after-ms`` and the
``x-ratelimit-*`` headers; every admitted answer carries the ``x-ratelimit-*`` headers too.

    server.limits = KeyLimits(requests_per_minute=600, tokens_per_minute=200_000)
    server.latency = uniform_latency(0.2, 0.8)
    ...
    server.limits.set(tokens_per_minute=100_000)   # the provider changes its limits mid-run

``window`` shortens the minute for tests (a budget per `window` seconds; the headers still name
it per minute of that window, as the client reads them with the same window). 0 for a limit: none,
and its headers are not sent.
"""
from __future__ import annotations

import math
import random
import threading
import time
from dataclasses import dataclass, field

DEFAULT_COMPLETION_TOKENS = 16


def format_duration(seconds: float) -> str:
    """Go's duration format, as OpenAI writes its reset headers: ``20ms``, ``1.5s``, ``6m0s``, ``1h2m3.5s``."""
    if seconds <= 0:
        return "0s"
    if seconds < 1:
        return f"{_trim(seconds * 1000)}ms"
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{int(hours)}h" if hours else ""
    if hours or minutes:
        text += f"{int(minutes)}m"
    return f"{text}{_trim(secs)}s"


def _trim(value):
    return f"{value:.3f}".rstrip("0").rstrip(".") or "0"


def uniform_latency(low: float, high: float, seed: int = 0):
    """A server latency: each call waits a time drawn uniformly from [low, high] seconds."""
    rng, lock = random.Random(seed), threading.Lock()

    def draw():
        with lock:
            return rng.uniform(low, high)

    return draw


def request_cost(payload: dict, prompt_text: str) -> int:
    """The tokens a provider charges before answering: the prompt's estimate plus the completion cap."""
    cap = payload.get("max_completion_tokens") or payload.get("max_tokens")
    cap = cap if isinstance(cap, int) and not isinstance(cap, bool) and cap > 0 else DEFAULT_COMPLETION_TOKENS
    return len(prompt_text) // 4 + 1 + (cap if ("messages" in payload or "prompt" in payload) else 0)


@dataclass
class Gate:
    """The verdict on one request: its headers, and a 429 body when it is refused."""

    headers: dict
    refused: dict | None = None


@dataclass
class _Bucket:
    capacity: float
    level: float
    stamp: float

    def refill(self, now, window):
        if self.capacity:
            self.level = min(self.capacity, self.level + (now - self.stamp) * self.capacity / window)
        self.stamp = now

    def wait_for(self, amount, window):
        """Seconds until `amount` is in the bucket (inf: never, it holds less)."""
        if amount > self.capacity:
            return math.inf
        return max(0.0, (amount - self.level) * window / self.capacity)

    def reset(self, window):
        return (self.capacity - self.level) * window / self.capacity if self.capacity else 0.0


@dataclass
class _Key:
    requests: _Bucket
    tokens: _Bucket


@dataclass
class KeyLimits:
    requests_per_minute: int = 0
    tokens_per_minute: int = 0
    window: float = 60.0
    clock: object = time.monotonic
    # Counters since the start: requests admitted and refused, tokens charged.
    admitted: int = 0
    rejected: int = 0
    charged_tokens: int = 0  # of the admitted requests
    _keys: dict = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def set(self, requests_per_minute: int | None = None, tokens_per_minute: int | None = None) -> None:
        """Change the limits now (None: keep that one). A lower limit caps what is left at once;
        a higher one refills at its new rate from now."""
        with self._lock:
            now = self.clock()
            if requests_per_minute is not None:
                self.requests_per_minute = int(requests_per_minute)
            if tokens_per_minute is not None:
                self.tokens_per_minute = int(tokens_per_minute)
            for key in self._keys.values():
                for bucket, capacity in ((key.requests, self.requests_per_minute), (key.tokens, self.tokens_per_minute)):
                    bucket.refill(now, self.window)
                    bucket.capacity = float(capacity)
                    bucket.level = min(bucket.level, bucket.capacity)

    def admit(self, api_key: str, tokens: int) -> Gate:
        """Charge one request of `tokens` tokens to `api_key`, or refuse it (429)."""
        with self._lock:
            now = self.clock()
            key = self._keys.get(api_key)
            if key is None:
                rpm, tpm = float(self.requests_per_minute), float(self.tokens_per_minute)
                key = self._keys[api_key] = _Key(_Bucket(rpm, rpm, now), _Bucket(tpm, tpm, now))
            key.requests.refill(now, self.window)
            key.tokens.refill(now, self.window)
            waits = []
            if key.requests.capacity:
                waits.append(("requests", key.requests.wait_for(1, self.window)))
            if key.tokens.capacity:
                waits.append(("tokens", key.tokens.wait_for(tokens, self.window)))
            short = [(kind, wait) for kind, wait in waits if wait > 0]
            if not short:
                key.requests.level -= 1 if key.requests.capacity else 0
                key.tokens.level -= tokens if key.tokens.capacity else 0
                self.admitted += 1
                self.charged_tokens += tokens
                return Gate(self._headers(key))
            self.rejected += 1
            kind, wait = max(short, key=lambda pair: pair[1])
            headers = self._headers(key)
            if math.isinf(wait):
                message = (f"Request too large for {kind} per min: Limit {int(key.tokens.capacity)}, "
                           f"Requested {tokens}.")
                return Gate(headers, {"error": {"message": message, "type": kind, "code": "rate_limit_exceeded"}})
            headers["retry-after"] = str(max(1, math.ceil(wait)))
            headers["retry-after-ms"] = str(max(1, math.ceil(wait * 1000)))
            limit = int(key.requests.capacity if kind == "requests" else key.tokens.capacity)
            message = (f"Rate limit reached on {kind} per min: Limit {limit}. "
                       f"Please try again in {format_duration(wait)}.")
            return Gate(headers, {"error": {"message": message, "type": kind, "code": "rate_limit_exceeded"}})

    def _headers(self, key):
        headers = {}
        for kind, bucket in (("requests", key.requests), ("tokens", key.tokens)):
            if bucket.capacity:
                headers[f"x-ratelimit-limit-{kind}"] = str(int(bucket.capacity))
                headers[f"x-ratelimit-remaining-{kind}"] = str(max(0, int(bucket.level)))
                headers[f"x-ratelimit-reset-{kind}"] = format_duration(bucket.reset(self.window))
        return headers

    def stats(self) -> dict:
        with self._lock:
            return {"requests_per_minute": self.requests_per_minute, "tokens_per_minute": self.tokens_per_minute,
                    "admitted": self.admitted, "rejected": self.rejected, "charged_tokens": self.charged_tokens}


def api_key_of(headers) -> str:
    """The key a request names (``Authorization: Bearer <key>``), '' when none."""
    value = headers.get("Authorization") or ""
    return value[7:].strip() if value.lower().startswith("bearer ") else value.strip()
