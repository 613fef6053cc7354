"""Reads of the accounts app."""
from django.conf import settings
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token

from .models import Preference
from .roles import ANNOTATOR


def active_annotators():
    """The people who may be given labels to make: active members of the annotator group, by name."""
    return get_user_model().objects.filter(groups__name=ANNOTATOR, is_active=True).order_by("username")


def stored_language(user) -> str:
    """The interface language a user chose ("" when none: the browser's then applies)."""
    cached = getattr(user, "_realmath_language", None)
    if cached is not None:
        return cached
    language = Preference.objects.filter(user=user).values_list("language", flat=True).first() or ""
    if language not in dict(settings.LANGUAGES):
        language = ""
    user._realmath_language = language
    return language


def api_token_of(user):
    """The user's API token (only when it was made), or None: its key is never shown again."""
    return Token.objects.filter(user=user).only("created").first()
