"""
What the app may send where: which environment variables may hold an LLM API key, which hosts
may be called, and how much model output is kept.

An endpoint names the variable its key is read from and the URL the key is sent to, so both
are checked when an endpoint is saved and again, from the settings of the calling process,
right before a key is read or a call is made (a row may come from an import or an older
version). The OCR vision engine reads its key through the same rules. The lists and caps come
from the host application (`llm.config`); the messages name the environment variables an admin
sets them with.
"""
import re
from urllib.parse import urlsplit

from .config import current

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# The app's own secrets: never read as an API key, whatever the allow-list says.
NEVER_KEYS = frozenset({"DJANGO_SECRET_KEY", "DATABASE_URL", "CELERY_BROKER_URL", "REDIS_URL"})


def allowed_key_names():
    """The allow-list: exact names, and prefixes written with a trailing ``*``."""
    return list(current().key_env_allowed)


def key_name_problem(name):
    """Why `name` may not name an API key variable; "" when it may (blank: no key at all)."""
    if not name:
        return ""
    if not ENV_NAME.match(name):
        return "Give the name of an environment variable (letters, digits, underscores), not a key."
    patterns = allowed_key_names()
    allowed = name not in NEVER_KEYS and any(
        name.startswith(p[:-1]) if p.endswith("*") else name == p for p in patterns
    )
    if allowed:
        return ""
    listed = ", ".join(patterns) or "none"
    return (
        f"{name} is not an allowed API key variable (allowed: {listed}; "
        "an admin changes the list with REALMATH_LLM_KEY_ENV_ALLOWED)."
    )


def allowed_hosts():
    """The hosts LLM calls may go to; empty: any host."""
    return list(current().allowed_hosts)


def url_problem(url):
    """Why the app may not call `url`; "" when it may."""
    try:
        parts = urlsplit(url or "")
        host = parts.hostname or ""
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError:
        return f"{url!r} is not a valid URL."
    if parts.scheme not in ("http", "https") or not host:
        return "Give an http:// or https:// URL, e.g. http://127.0.0.1:8001/v1."
    hosts = allowed_hosts()
    if hosts and not validate_host(f"[{host}]" if ":" in host else host, hosts):
        return f"The host {host} is not in REALMATH_LLM_ALLOWED_HOSTS ({', '.join(hosts)})."
    return ""


def validate_host(host, allowed_hosts):
    """Whether `host` (lower case, IPv6 in brackets) matches a pattern of `allowed_hosts`, as
    Django's ``django.http.request.validate_host`` decides it: ``*`` is any host, ``.example.org``
    is example.org and its subdomains, anything else must be equal (tests/llm compare the two)."""
    return any(pattern == "*" or _same_domain(host, pattern) for pattern in allowed_hosts)


def _same_domain(host, pattern):
    if not pattern:
        return False
    pattern = pattern.lower()
    return (pattern[0] == "." and (host.endswith(pattern) or host == pattern[1:])) or pattern == host


def max_output_chars():
    return int(current().max_output_chars)


def max_reply_bytes():
    return int(current().max_reply_bytes)


def cap_output(text, limit=None):
    """`text` cut to about `limit` characters, keeping its head and its tail (where judges put
    their score and models their final answer), and the length it had; (text, 0) when it fits."""
    limit = max_output_chars() if limit is None else limit
    if limit <= 0 or len(text) <= limit:
        return text, 0
    tail = limit // 4
    marker = f"\n\n[… {len(text) - limit:,} characters cut: the answer had {len(text):,} …]\n\n"
    return text[: limit - tail] + marker + (text[-tail:] if tail else ""), len(text)
