"""The form that starts an error-geometry or step-surprisal run on the geometry page."""
from django import forms
from django.utils.translation import gettext_lazy as _

from annotation.models import Exam
from grading.models import LlmEndpoint

from .models import GeometryRun, GeometrySegment

MAX_SEGMENTS_FILE_BYTES = 20 * 1024 * 1024


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files in one field (Django's documented pattern): a list of uploads, empty when none."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        single = super().clean
        if isinstance(data, (list, tuple)):
            return [single(item, initial) for item in data if item]
        return [single(data, initial)] if data else []


class GeometryStartForm(forms.Form):
    kind = forms.ChoiceField(label=_("Study"), choices=GeometryRun.Kind.choices, initial=GeometryRun.Kind.GEOMETRY)
    backend = forms.ChoiceField(
        label=_("Vectors from"), choices=GeometryRun.Backend.choices, initial=GeometryRun.Backend.LEXICAL,
        help_text=_("The lexical baseline needs no model and is not semantic. Step surprisal always needs a served model."),
    )
    endpoint = forms.ModelChoiceField(label=_("Endpoint"), queryset=LlmEndpoint.objects.order_by("name"), required=False,
                                      empty_label=_("(none)"), help_text=_("One of the admin's endpoint records."))
    model = forms.CharField(label=_("Model"), max_length=200, required=False,
                            help_text=_("e.g. Qwen/Qwen3-Embedding-8B (geometry) or Qwen/Qwen3-8B (surprisal)."))
    exam = forms.ModelChoiceField(label=_("Exam"), queryset=Exam.objects.order_by("name"), required=False,
                                  empty_label=_("any exam"))
    sources = forms.MultipleChoiceField(
        label=_("Groups"), required=False, initial=["human", "synthetic"], widget=forms.CheckboxSelectMultiple,
        choices=[("human", _("human")), ("synthetic", _("synthetic")),
                 ("probe-derived", _("probe-derived (the errors sensitivity probes put into answers)"))],
        help_text=_("Ignored for a segments file, whose analysis_subset says each segment's group."),
    )
    unit = forms.ChoiceField(label=_("Segments"), choices=GeometrySegment.Unit.choices, initial=GeometrySegment.Unit.SUB_QUESTION)
    segments_file = MultipleFileField(
        label=_("Or segments files (JSONL)"), required=False,
        help_text=_("The paper's shape: segment_text, sample_id, question, sub_id, real_score, max_score, "
                    "analysis_subset (human, synthetic or probe-derived). The paper's bundle as released is read too "
                    "(human_error_segments.jsonl and llm_error_segments.jsonl: the group from the file name; their "
                    "step splits: the steps scored by step surprisal); choose several files at once."))
    segments_group = forms.ChoiceField(
        label=_("Group of the file's segments"), required=False, initial="",
        choices=[("", _("from each line's analysis_subset, else the file name")), ("human", _("human")),
                 ("synthetic", _("synthetic")), ("probe-derived", _("probe-derived"))],
        help_text=_("For lines without analysis_subset in files not named human_... or llm_...."))
    limit = forms.IntegerField(label=_("Limit"), required=False, min_value=1, max_value=1_000_000,
                               help_text=_("At most this many error segments, taken in turn from each question."))
    seed = forms.IntegerField(label=_("Seed"), initial=42, min_value=0, max_value=2**31 - 1)
    bootstrap = forms.IntegerField(label=_("Bootstrap resamples"), initial=1000, min_value=0, max_value=20_000)
    top_k = forms.IntegerField(label=_("Top-k log-probabilities"), initial=5, min_value=1, max_value=20)
    splitter = forms.ChoiceField(
        label=_("Steps split by"), initial="rule", required=False,
        choices=[("rule", _("rules (line and sentence breaks, ∴ / therefore / 所以, numbered steps)")),
                 ("llm", _("the model (\"Step 1: ...\" lines; kept only when they reproduce the text)"))],
        help_text=_("Step surprisal only."),
    )
    splitter_model = forms.CharField(label=_("Splitter model"), max_length=200, required=False,
                                     help_text=_("A chat model (default: the model above)."))
    splitter_endpoint = forms.ModelChoiceField(
        label=_("Splitter endpoint"), queryset=LlmEndpoint.objects.order_by("name"), required=False,
        empty_label=_("(the study's endpoint)"), help_text=_("Where the splitter model is served."))
    logprobs_shape = forms.ChoiceField(
        label=_("Log-probabilities asked as"), initial="echo", required=False,
        choices=[("echo", _("echo + logprobs (the OpenAI form; vLLM and others)")),
                 ("prompt_logprobs", _("prompt_logprobs (vLLM's own parameter)"))],
        help_text=_("Either answer is read."),
    )
    cluster = forms.BooleanField(label=_("UMAP + HDBSCAN clusters and the GMM sweep"), required=False, initial=True)

    def clean_segments_file(self):
        uploads = self.cleaned_data.get("segments_file") or []
        if sum(upload.size for upload in uploads) > MAX_SEGMENTS_FILE_BYTES:
            raise forms.ValidationError(_("The file is larger than 20 MB."))
        return uploads

    def clean(self):
        data = super().clean()
        served = data.get("backend") == GeometryRun.Backend.SERVED or data.get("kind") == GeometryRun.Kind.SURPRISAL
        if served and not data.get("endpoint"):
            self.add_error("endpoint", _("A served model needs an endpoint."))
        if served and not (data.get("model") or "").strip():
            self.add_error("model", _("A served model needs its name."))
        if not data.get("sources") and not data.get("segments_file"):
            self.add_error("sources", _("Choose at least one group."))
        if data.get("splitter") == "llm" and data.get("kind") != GeometryRun.Kind.SURPRISAL:
            self.add_error("splitter", _("The model splitter serves the step-surprisal study only."))
        return data
