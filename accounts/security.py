"""Login throttling helpers for django-axes: the client address and the lockout log line."""
import logging

from axes.helpers import get_client_username
from axes.signals import user_locked_out
from django.conf import settings
from django.dispatch import receiver
from django.shortcuts import render

logger = logging.getLogger("accounts.security")


def client_ip(request):
    """The address a login attempt came from, for throttling per address.

    With DJANGO_PROXY_COUNT=n, the n trusted proxies in front of the app each appended the
    address they saw to X-Forwarded-For, so the client is the n-th entry from the right;
    entries further left were written by the client and are not trusted. Without proxies,
    REMOTE_ADDR is the client.
    """
    count = settings.TRUSTED_PROXY_COUNT
    if count:
        forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
        forwarded = [part for part in forwarded if part]
        if len(forwarded) >= count:
            return forwarded[-count]
    return request.META.get("REMOTE_ADDR", "")


@receiver(user_locked_out)
def log_lockout(sender, request, username, ip_address, **kwargs):
    """One warning per login refused (or locked) by the throttle, with who and from where."""
    logger.warning(
        "login locked out: username=%r address=%s path=%s",
        username, ip_address, getattr(request, "path", ""),
    )


def lockout_response(request, original_response=None, credentials=None):
    """The page for a refused login: 429, who is locked and for how long."""
    context = {
        "username": get_client_username(request, credentials) or "",
        "failure_limit": settings.AXES_FAILURE_LIMIT,
        "cooloff_minutes": round(settings.AXES_COOLOFF_TIME.total_seconds() / 60),
    }
    return render(request, "registration/locked_out.html", context, status=429)
