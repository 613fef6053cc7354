from django import forms
from django.conf import settings

from annotation.models import Exam

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
    exam = forms.ModelChoiceField(queryset=Exam.objects.all(), help_text="Questions are looked up in this exam.")
    engine = forms.ChoiceField()
    name = forms.CharField(required=False, max_length=200, help_text="Batch name (optional).")
    scans = MultipleFileField(help_text="JPEG, PNG, TIFF, HEIC or PDF; one or many.")

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
