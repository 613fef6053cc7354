from django import forms
from django.utils.translation import gettext_lazy

from . import purposes
from .selectors import UNLABELLED_PARAM, CallFilter


class CallFilterForm(forms.Form):
    """The log's filters from a query string; a value that is not valid is reported and not applied."""

    purpose = forms.ChoiceField(required=False, label=gettext_lazy("Purpose"))
    host = forms.CharField(required=False, max_length=255, label=gettext_lazy("Host"))
    since = forms.DateField(required=False, label=gettext_lazy("From"), widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(required=False, label=gettext_lazy("To"), widget=forms.DateInput(attrs={"type": "date"}))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["purpose"].choices = [("", gettext_lazy("All purposes"))] + [
            (code or UNLABELLED_PARAM, label) for code, label in purposes.CHOICES]

    def call_filter(self) -> CallFilter:
        """The valid filters (call after is_valid(); fields with errors are left out)."""
        data = getattr(self, "cleaned_data", {})
        purpose = data.get("purpose") or None
        if purpose == UNLABELLED_PARAM:
            purpose = ""
        since, until = data.get("since"), data.get("until")
        return CallFilter(purpose=purpose, host=(data.get("host") or "").strip() or None, since=since, until=until)

    def clean(self):
        cleaned = super().clean()
        since, until = cleaned.get("since"), cleaned.get("until")
        if since and until and since > until:
            self.add_error("until", gettext_lazy("The end date is before the start date."))
            cleaned.pop("until", None)
        return cleaned
