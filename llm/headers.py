"""What a provider says of its rate limits in an answer's headers. Pure functions: no I/O, no clock
except where an HTTP date must be turned into seconds.

OpenAI and the providers that copy its API (Azure OpenAI, Groq, Together, OpenRouter, LiteLLM and
vLLM routers) send on every answer, successful or 429::

    x-ratelimit-limit-requests: 600        requests per minute allowed to this key
    x-ratelimit-limit-tokens: 200000       tokens per minute
    x-ratelimit-remaining-requests: 599    what is left now
    x-ratelimit-remaining-tokens: 198200
    x-ratelimit-reset-requests: 100ms      until the budget is whole again (Go durations: 1s, 6m0s,
    x-ratelimit-reset-tokens: 540ms        20ms, 1h2m3.5s; some servers send plain seconds: 0.5)

and on a 429 ``Retry-After`` (seconds or an HTTP date) and/or ``retry-after-ms``. A value that does
not read as what it should be (a negative count, "soon", "1x") is ignored, never an error: the
headers come from outside and only steer the pace.
"""
from __future__ import annotations

import email.utils
import math
import re
import time
from dataclasses import dataclass

MAX_RETRY_AFTER = 300.0  # no header makes a call wait longer than this at once
MAX_COUNT = 10**12  # a limit or remaining count above this is not believed

_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "\u00b5s": 1e-6, "\u03bcs": 1e-6, "ns": 1e-9}
_NUMBER_TEXT = r"[0-9]+(?:\.[0-9]*)?|\.[0-9]+"  # ASCII digits only: "²".isdigit() is True
_PART = re.compile(rf"({_NUMBER_TEXT})(ms|us|\u00b5s|\u03bcs|ns|h|m|s)")
_NUMBER = re.compile(_NUMBER_TEXT)


def parse_duration(value) -> float | None:
    """Seconds in a duration header: Go's format (``1s``, ``6m0s``, ``20ms``, ``1h2m3.5s``,
    ``1.5µs``) or a plain number of seconds (``0.5``). None for anything else (empty, negative,
    ``soon``, ``5d``, ``1s2``, NaN)."""
    if not isinstance(value, str):
        return None
    text = value.strip().lower()
    if _NUMBER.fullmatch(text):
        seconds = float(text)
    else:
        parts, end = [], 0
        for match in _PART.finditer(text):
            if match.start() != end:
                return None
            parts.append(float(match.group(1)) * _UNITS[match.group(2)])
            end = match.end()
        if not parts or end != len(text):
            return None
        seconds = sum(parts)
    return seconds if math.isfinite(seconds) else None


def parse_count(value) -> int | None:
    """A non-negative whole number of requests or tokens (``600``, ``198200``; ``600.0`` too);
    None for anything else."""
    number = _number(value)
    if number is None or number != int(number) or number > MAX_COUNT:
        return None
    return int(number)


def parse_retry_after(headers) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date), at most
    MAX_RETRY_AFTER; None when neither says."""
    if not headers:
        return None
    millis = _number(headers.get("retry-after-ms"))
    if millis is not None:
        return min(millis / 1000.0, MAX_RETRY_AFTER)
    value = headers.get("retry-after")
    if not isinstance(value, str) or not value.strip():
        return None
    seconds = _number(value)
    if seconds is not None:
        return min(seconds, MAX_RETRY_AFTER)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return min(max(when.timestamp() - time.time(), 0.0), MAX_RETRY_AFTER)


def _number(value):
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not _NUMBER.fullmatch(text):
        return None
    number = float(text)
    return number if math.isfinite(number) else None


@dataclass(frozen=True)
class ProviderLimits:
    """One answer's account of the key's limits; a field is None when the answer did not say
    (or said something unreadable)."""

    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None
    remaining_requests: int | None = None
    remaining_tokens: int | None = None
    reset_requests: float | None = None  # seconds until the request budget is whole again
    reset_tokens: float | None = None
    retry_after: float | None = None

    @property
    def says_limits(self) -> bool:
        """Whether the answer named a per-minute limit (the provider paces by headers)."""
        return bool(self.requests_per_minute) or bool(self.tokens_per_minute)

    def pause_for(self, tokens: int = 0) -> float:
        """How long every caller should wait before the next call, by what is left: 0 while the
        budget has room for one more request of `tokens` tokens.

        A provider's budget refills continuously (OpenAI's ``reset`` is the time until it is whole
        again), so an exhausted budget is waited out for the time the missing part takes to
        refill at the limit's rate, at most its reset time.
        """
        waits = [0.0]
        if self.remaining_requests is not None and self.remaining_requests < 1:
            waits.append(_refill_time(1, self.requests_per_minute, self.reset_requests))
        if self.remaining_tokens is not None and tokens and self.remaining_tokens < tokens:
            waits.append(_refill_time(tokens - self.remaining_tokens, self.tokens_per_minute, self.reset_tokens))
        return min(max(waits), MAX_RETRY_AFTER)

    def retry_wait(self) -> float | None:
        """How long a 429 asks to wait: its Retry-After, else the reset of the budget it says is
        empty; None when it says neither."""
        if self.retry_after is not None:
            return self.retry_after
        resets = []
        if self.remaining_requests == 0 and self.reset_requests is not None:
            resets.append(self.reset_requests)
        if self.remaining_tokens == 0 and self.reset_tokens is not None:
            resets.append(self.reset_tokens)
        return min(max(resets), MAX_RETRY_AFTER) if resets else None


def _refill_time(missing, per_minute, reset):
    if per_minute:
        wait = missing * 60.0 / per_minute
        return min(wait, reset) if reset is not None else wait
    return reset if reset is not None else 1.0


def read_limits(headers) -> ProviderLimits:
    """The rate-limit headers of an answer (any mapping with case-insensitive ``get``, such as
    httpx's ``Headers``; a plain dict must have lower-case names). Never raises on their values."""
    if not headers:
        return ProviderLimits()
    get = headers.get
    return ProviderLimits(
        requests_per_minute=parse_count(get("x-ratelimit-limit-requests")) or None,
        tokens_per_minute=parse_count(get("x-ratelimit-limit-tokens")) or None,
        remaining_requests=parse_count(get("x-ratelimit-remaining-requests")),
        remaining_tokens=parse_count(get("x-ratelimit-remaining-tokens")),
        reset_requests=parse_duration(get("x-ratelimit-reset-requests")),
        reset_tokens=parse_duration(get("x-ratelimit-reset-tokens")),
        retry_after=parse_retry_after(headers),
    )
