"""The form that starts a probe run on the probe page."""
from django import forms
from django.utils.text import format_lazy
from django.utils.translation import gettext, gettext_lazy, pgettext_lazy

from annotation.models import Exam, Question
from core.form_fields import IdModelChoiceField
from grading.models import JudgeSetting

from . import probes, selectors


class ProbeStartForm(forms.Form):
    setting = IdModelChoiceField(queryset=JudgeSetting.objects.none(), help_text=gettext_lazy("The newest version of each setting that can judge text."))
    probes = forms.MultipleChoiceField(
        choices=[(name, format_lazy(pgettext_lazy("a probe and its family", "{probe} ({family})"), probe=p.label, family=p.family_label))
                 for name, p in probes.PROBES.items()]
        + [(probes.RAW_OCR, gettext_lazy("Raw OCR text of scanned answers (OCR-vs-judge attribution)"))],
        widget=forms.CheckboxSelectMultiple, initial=[],  # nothing ticked: each probe costs judge calls
    )
    exam = IdModelChoiceField(queryset=Exam.objects.all(), required=False, empty_label=gettext_lazy("any exam"))
    question = IdModelChoiceField(
        queryset=Question.objects.only("id", "location", "external_id").order_by("location", "id"),
        required=False, empty_label=gettext_lazy("any question"),
    )
    limit = forms.IntegerField(required=False, min_value=1, max_value=100_000, help_text=gettext_lazy("At most this many answers."))
    seed = forms.IntegerField(initial=0, min_value=0, max_value=2**31 - 1)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        choices = selectors.settings_to_probe()
        self.fields["setting"].queryset = JudgeSetting.objects.filter(
            pk__in=[s.pk for s in choices]
        ).order_by("name")
        self.fields["question"].label_from_instance = lambda q: gettext("%(location)s (question #%(pk)s)") % {
            "location": q.location or q.external_id, "pk": q.pk}


class StyleRewriteForm(forms.Form):
    """Issue 27: rewrite answers into textbook style with an LLM (our default prompt)."""

    endpoint = forms.ModelChoiceField(queryset=None)
    model = forms.CharField(max_length=200)
    exam = forms.ModelChoiceField(queryset=Exam.objects.all(), required=False, empty_label=gettext_lazy("any exam"))
    limit = forms.IntegerField(required=False, min_value=1, max_value=100_000)

    def __init__(self, *args, **kwargs):
        from grading.models import LlmEndpoint  # noqa: PLC0415

        super().__init__(*args, **kwargs)
        self.fields["endpoint"].queryset = LlmEndpoint.objects.all()


class StyleImportForm(forms.Form):
    file = forms.FileField(help_text=gettext_lazy(
        "The paper's style-transferred file as released (realmath_eval_gemini3pro_hard_cases_ge2_style_transferred_72"
        ".json: release records, the rewrite in student_response), or a JSON list of records with the answer's "
        "response_id (or its student_id and question_location) and the rewritten text under rewritten."))


class StyleRunForm(forms.Form):
    """Judge originals and their unflagged rewrites with one setting version."""

    setting = forms.ModelChoiceField(queryset=JudgeSetting.objects.none())
    exam = forms.ModelChoiceField(queryset=Exam.objects.all(), required=False, empty_label=gettext_lazy("any exam"))
    limit = forms.IntegerField(required=False, min_value=1, max_value=100_000)
    include_flagged = forms.BooleanField(
        required=False, label=gettext_lazy("Also judge the flagged rewrites, in a second analysis"),
        help_text=gettext_lazy("The main analysis stays on unflagged rewrites; the run page adds a second table, "
                               "labelled, with the flagged ones included."),
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["setting"].queryset = JudgeSetting.objects.filter(
            pk__in=[s.pk for s in selectors.settings_to_probe()]).order_by("name")
