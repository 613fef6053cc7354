"""Reads of the accounts app."""
from django.conf import settings


def stored_language(user) -> str:
    """The interface language a user chose ("" when none: the browser's then applies)."""
    cached = getattr(user, "_realmath_language", None)
    if cached is not None:
        return cached
    from .models import Preference

    language = Preference.objects.filter(user=user).values_list("language", flat=True).first() or ""
    if language not in dict(settings.LANGUAGES):
        language = ""
    user._realmath_language = language
    return language
