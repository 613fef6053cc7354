"""The Django side of the `llm` transport: its config built from settings, in one place.

`llm` reads no settings itself. `install()` (called by the apps that use it: grading and ocr, at
start) gives it `from_settings` as its config source, and rebuilds the config whenever a setting
changes at run time (Django's `setting_changed`: test overrides).
"""
from django.conf import settings
from django.core.signals import setting_changed

import llm


def from_settings() -> llm.LlmConfig:
    return llm.LlmConfig(
        key_env_allowed=tuple(settings.LLM_KEY_ENV_ALLOWED),
        allowed_hosts=tuple(settings.LLM_ALLOWED_HOSTS),
        max_output_chars=int(settings.LLM_MAX_OUTPUT_CHARS),
        max_reply_bytes=int(settings.LLM_MAX_REPLY_BYTES),
        redis_url=settings.REDIS_URL or "",
        ratelimit_dir=str(settings.LLM_RATELIMIT_DIR),
        ratelimit_prefix=settings.LLM_RATELIMIT_PREFIX,
        ratelimit_window_seconds=float(settings.LLM_RATELIMIT_WINDOW_SECONDS),
        retry_base_seconds=float(settings.LLM_RETRY_BASE_SECONDS),
        retry_max_seconds=float(settings.LLM_RETRY_MAX_SECONDS),
        provider_limits=bool(settings.LLM_PROVIDER_LIMITS),
        rate_limit_max_wait_seconds=float(settings.LLM_RATE_LIMIT_MAX_WAIT_SECONDS),
    )


def _settings_changed(**kwargs):
    llm.refresh()


def install() -> None:
    """Idempotent: the config source is set again and the receiver connected once."""
    llm.configure(source=from_settings)
    setting_changed.connect(_settings_changed, dispatch_uid="core.llm_settings")
