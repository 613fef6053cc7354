from django import forms
from django.conf import settings
from django.utils.translation import gettext_lazy

from annotation.models import Exam
from core.form_fields import IdModelChoiceField, IdModelMultipleChoiceField

from .engines import engine_choices


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """A file field that takes several files at once (Django's documented pattern)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput(attrs={
            "accept": ".jpg,.jpeg,.png,.tif,.tiff,.heic,.heif,.pdf,image/*,application/pdf",
        }))
        # Empty files reach the service, which refuses them with a message beside the others.
        kwargs.setdefault("allow_empty_file", True)
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        single = super().clean
        if isinstance(data, (list, tuple)) and data:
            return [single(item, initial) for item in data]
        if isinstance(data, (list, tuple)):
            data = None
        return [single(data, initial)]


class EngineChoiceMixin:
    def _set_engine_choices(self):
        self.fields["engine"].choices = engine_choices()
        self.fields["engine"].initial = settings.OCR_DEFAULT_ENGINE


class UploadForm(EngineChoiceMixin, forms.Form):
    exam = IdModelChoiceField(queryset=Exam.objects.all(), help_text=gettext_lazy("Questions are looked up in this exam."))
    engine = forms.ChoiceField()
    name = forms.CharField(required=False, max_length=200, help_text=gettext_lazy("Batch name (optional)."))
    scans = MultipleFileField(help_text=gettext_lazy("JPEG, PNG, TIFF, HEIC or PDF; one or many."))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._set_engine_choices()


class AddFilesForm(forms.Form):
    scans = MultipleFileField()


class EngineForm(EngineChoiceMixin, forms.Form):
    engine = forms.ChoiceField()

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._set_engine_choices()


class ClassScanForm(EngineChoiceMixin, forms.Form):
    """One PDF of a whole class, cut into packets by a roster and a template (ocr/class_templates.py)."""

    exam = IdModelChoiceField(queryset=Exam.objects.all(), help_text=gettext_lazy("The template's labels name its questions."))
    engine = forms.ChoiceField()
    name = forms.CharField(required=False, max_length=200, help_text=gettext_lazy("Batch name (optional)."))
    pdf = forms.FileField(label=gettext_lazy("Class PDF"), allow_empty_file=True,
                          widget=forms.ClearableFileInput(attrs={"accept": ".pdf,application/pdf"}))
    roster = forms.FileField(label=gettext_lazy("ROSTER.csv"), allow_empty_file=True,
                             widget=forms.ClearableFileInput(attrs={"accept": ".csv,text/csv"}))
    template = forms.FileField(label=gettext_lazy("TEMPLATE.json"), allow_empty_file=True,
                               widget=forms.ClearableFileInput(attrs={"accept": ".json,application/json"}))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._set_engine_choices()


class AssignLabelsForm(forms.Form):
    """The Assign page's options, for the responses of one batch."""

    annotators = IdModelMultipleChoiceField(queryset=None, required=False)
    per_response = forms.IntegerField(min_value=1, max_value=20, initial=2)
    strategy = forms.ChoiceField()

    def __init__(self, *args, annotators=(), strategies=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["annotators"].queryset = annotators
        self.fields["strategy"].choices = strategies


class ClassRetryForm(EngineChoiceMixin, forms.Form):
    """Another try of a kept class upload (ocr.class_uploads): the choices again, and only the files to replace."""

    exam = IdModelChoiceField(queryset=Exam.objects.all(), help_text=gettext_lazy("The template's labels name its questions."))
    engine = forms.ChoiceField()
    name = forms.CharField(required=False, max_length=200, help_text=gettext_lazy("Batch name (optional)."))
    pdf = forms.FileField(label=gettext_lazy("Class PDF"), required=False, allow_empty_file=True,
                          widget=forms.ClearableFileInput(attrs={"accept": ".pdf,application/pdf"}))
    roster = forms.FileField(label=gettext_lazy("ROSTER.csv"), required=False, allow_empty_file=True,
                             widget=forms.ClearableFileInput(attrs={"accept": ".csv,text/csv"}))
    template = forms.FileField(label=gettext_lazy("TEMPLATE.json"), required=False, allow_empty_file=True,
                               widget=forms.ClearableFileInput(attrs={"accept": ".json,application/json"}))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._set_engine_choices()
