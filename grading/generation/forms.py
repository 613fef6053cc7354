"""The form that starts a generation run."""
from django import forms
from django.utils.translation import gettext, gettext_lazy

from annotation.models import Question
from core.form_fields import IdModelChoiceField, IdModelMultipleChoiceField

from ..judges import prompts
from ..judges.models import LlmEndpoint
from .prompts import GENERATION_SYSTEM, GENERATION_TEMPLATE


def _split(value):
    return [part.strip() for part in (value or "").replace("\n", ",").split(",") if part.strip()]


class GenerationRunForm(forms.Form):
    name = forms.CharField(max_length=200, required=False)
    endpoint = IdModelChoiceField(queryset=LlmEndpoint.objects.all())
    models = forms.CharField(help_text=gettext_lazy("Model names, comma separated."), widget=forms.TextInput(attrs={"size": 60}))
    temperatures = forms.CharField(initial="0, 0.5, 1", help_text=gettext_lazy("Comma separated, between 0 and 2."))
    per_cell = forms.IntegerField(min_value=1, max_value=100, initial=1, label=gettext_lazy("Answers per model × temperature"))
    questions = IdModelMultipleChoiceField(queryset=Question.objects.none(), widget=forms.SelectMultiple(attrs={"size": 8}))
    max_tokens = forms.IntegerField(min_value=16, max_value=200000, initial=4096)
    price_input_per_1k = forms.DecimalField(min_value=0, initial=0, decimal_places=6, max_digits=12)
    price_output_per_1k = forms.DecimalField(min_value=0, initial=0, decimal_places=6, max_digits=12)
    system_prompt = forms.CharField(required=False, initial=GENERATION_SYSTEM, widget=forms.Textarea(attrs={"rows": 2}))
    prompt_template = forms.CharField(
        initial=GENERATION_TEMPLATE, widget=forms.Textarea(attrs={"rows": 8, "class": "mono"}),
        help_text=gettext_lazy("Placeholders: {{ problem }}, {{ choices }}, {{ answer_format }}, {{ full_score }}."),
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["questions"].queryset = Question.objects.select_related("exam").order_by("exam__name", "location", "id")
        self.fields["questions"].label_from_instance = lambda q: f"{q.exam.name} · {q.location or q.external_id or q.pk}: {q.statement[:70]}"

    def clean_models(self):
        models = _split(self.cleaned_data["models"])
        if not models:
            raise forms.ValidationError(gettext("Name at least one model."))
        return models

    def clean_temperatures(self):
        try:
            values = [float(v) for v in _split(self.cleaned_data["temperatures"])]
        except ValueError as exc:
            raise forms.ValidationError(gettext("Temperatures are numbers, e.g. 0, 0.5, 1.")) from exc
        if not values or any(v < 0 or v > 2 for v in values):
            raise forms.ValidationError(gettext("Give temperatures between 0 and 2."))
        return values

    def clean_prompt_template(self):
        template = self.cleaned_data["prompt_template"]
        unknown = prompts.unknown_placeholders(template)
        if unknown:
            raise forms.ValidationError(gettext("Unknown placeholders: %(join)s.") % {"join": ', '.join(unknown)})
        return template
