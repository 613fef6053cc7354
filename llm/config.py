"""What the transport is told by its host application: allow-lists, caps, rate-limit store, retries.

`llm` reads no environment variable and no Django setting. The application hands it an
`LlmConfig`, either once (`configure(config)`) or as a *source*, a function that builds the
current one (`configure(source=...)`): the source is called on first use and again after
`refresh()`, so a host whose settings can change at run time (Django's test settings) calls
`refresh()` when they do. The Django side is `core/llm_settings.py`. Without either, the defaults below
apply (a script using the transport on its own).
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class LlmConfig:
    # Which environment variables may name an API key (a trailing * is a prefix).
    key_env_allowed: tuple[str, ...] = ("OPENAI_API_KEY", "REALMATH_LLM_KEY_*")
    # The hosts calls may go to (Django ALLOWED_HOSTS syntax); empty: any host.
    allowed_hosts: tuple[str, ...] = ()
    # Longer answers are cut to this many characters (head and tail kept).
    max_output_chars: int = 50_000
    # An answer larger than this on the wire is not read.
    max_reply_bytes: int = 16_000_000
    # Where the rate limits keep their shared state: Redis when a URL is given, else files here.
    redis_url: str = ""
    ratelimit_dir: str = "var/ratelimit"
    ratelimit_prefix: str = "realmath:rl:"
    ratelimit_window_seconds: float = 60.0
    # Exponential back-off between attempts: the first wait and the cap, in seconds.
    retry_base_seconds: float = 1.0
    retry_max_seconds: float = 60.0
    # Read every answer's x-ratelimit-* headers and pace by the limits they name (llm.ratelimit).
    provider_limits: bool = True
    # A call answered 429 (rate limited) is sent again without using up an attempt until it has
    # waited this long in all; then 429s count as failed attempts like any other.
    rate_limit_max_wait_seconds: float = 900.0


_lock = threading.Lock()
_config = LlmConfig()
_source: Callable[[], LlmConfig] | None = None
_stale = False


def configure(config: LlmConfig | None = None, *, source: Callable[[], LlmConfig] | None = None) -> None:
    """Give the transport its settings: a fixed `config`, or a `source` that builds them."""
    global _config, _source, _stale
    if (config is None) == (source is None):
        raise TypeError("give either a config or a source")
    with _lock:
        _source = source
        if config is not None:
            _config, _stale = config, False
        else:
            _stale = True


def refresh() -> None:
    """The host's settings changed: build the config from the source again on next use."""
    global _stale
    _stale = _source is not None


def current() -> LlmConfig:
    """The settings in force (cheap: a module global unless a refresh is pending)."""
    global _config, _stale
    if _stale:
        with _lock:
            if _stale and _source is not None:
                _config = _source()
            _stale = False
    return _config
