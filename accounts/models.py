"""Per-person settings kept on the user: the interface language."""
from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class Preference(models.Model):
    """One row per user who chose something; no row means "the browser's language"."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="preference", verbose_name=_("user")
    )
    language = models.CharField(
        _("interface language"), max_length=16, blank=True, choices=settings.LANGUAGES,
        help_text=_("Empty: the language the browser asks for."),
    )

    class Meta:
        verbose_name = _("preference")
        verbose_name_plural = _("preferences")

    def __str__(self):
        return f"{self.user} ({self.language or '-'})"
