"""Forms of the judge pages: endpoints, judge settings, starting runs."""
import json

from django import forms
from django.utils.translation import gettext, gettext_lazy
from django.utils.translation import gettext_lazy as _

from core.form_fields import IdModelChoiceField
from llm import access

from ..models import JudgeRun, JudgeSetting, LlmEndpoint
from . import prompts
from .kinds import KINDS


class EndpointForm(forms.ModelForm):
    """An endpoint (admins only). The key variable must be on the allow-list (LlmEndpoint.clean)."""

    class Meta:
        model = LlmEndpoint
        fields = [
            "name", "base_url", "api_key_env", "max_concurrency", "requests_per_minute", "tokens_per_minute",
            "timeout_seconds", "max_attempts",
        ]
        labels = {
            "name": gettext_lazy("Name"), "base_url": gettext_lazy("Base URL"),
            "api_key_env": gettext_lazy("API key variable"), "max_concurrency": gettext_lazy("Max concurrency"),
            "requests_per_minute": gettext_lazy("Requests per minute"),
            "tokens_per_minute": gettext_lazy("Tokens per minute"), "timeout_seconds": gettext_lazy("Timeout seconds"),
            "max_attempts": gettext_lazy("Max attempts"),
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.instance.pk:
            self.initial["api_key_env"] = ""  # a local server needs none; a remote one names its own
        self.fields["api_key_env"].help_text = gettext(
            "Name of the environment variable holding the key; blank if the server needs none. Allowed: %(names)s."
        ) % {"names": ", ".join(access.allowed_key_names())}


class JudgeSettingForm(forms.ModelForm):
    """A judge setting. Saving a used setting makes a new version (see services.update_judge_setting)."""

    extra_body = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 2, "class": "mono"}),
        help_text=gettext_lazy('Extra request fields as a JSON object, e.g. {"top_p": 0.9}.'),
    )

    class Meta:
        model = JudgeSetting
        fields = [
            "name", "kind", "endpoint", "model", "temperature", "max_tokens", "reasoning_effort", "samples",
            "aggregate", "parse_retries", "price_input_per_1k", "price_output_per_1k", "system_prompt",
            "prompt_template", "extra_body", "notes", "answer_tolerance", "second_opinion", "approximate_answers",
            "strategy", "few_shot_k", "split_rule", "few_shot_seed", "few_shot_comments", "prompt_set",
            "few_shot_source", "step_report",
        ]
        widgets = {
            "system_prompt": forms.Textarea(attrs={"rows": 2}),
            "prompt_template": forms.Textarea(attrs={"rows": 14, "class": "mono"}),
            "notes": forms.Textarea(attrs={"rows": 2}),
        }

    def __init__(self, *args, editing=False, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["kind"].choices = [(k, label) for k, label in JudgeSetting.Kind.choices if k != JudgeSetting.Kind.EXTERNAL]
        self.fields["prompt_template"].help_text = gettext("Leave empty for the kind's default. Placeholders: %(names)s") % {
            "names": ", ".join(f"{{{{ {name} }}}}" for name in prompts.VARIABLES)}
        self.fields["temperature"].help_text = gettext(
            "Ignored, and saved empty, for kinds that call no LLM (the CAS-only final-answer check)."
        )
        self.fields["answer_tolerance"].required = False  # absent: the IneqMath rule (strict)
        # Issue 27: absent (an older client, another kind) means the defaults.
        for name in ("strategy", "few_shot_k", "split_rule", "few_shot_seed", "few_shot_source"):
            self.fields[name].required = False
        self.fields["few_shot_source"].help_text = _(
            "Few-shot: the paper shows real students' answers (its 28 hold-outs, 2 per problem) as examples to every "
            "answer it judges, human or synthetic. Examples are always answers with a gold score."
        )
        self.fields["strategy"].help_text = _(
            "Rubric judge only. Verification-First, Follow-Through-First and few-shot fill in their own template "
            "when the prompt is left empty; few-shot chooses its examples from the experts' gold scores when saved."
        )
        self.fields["split_rule"].help_text = _(
            "Few-shot: what an example may share with an answer judged beside it. Class: the answer's scan "
            "batch, else its import file."
        )
        self.fields["approximate_answers"].required = False  # absent: approximations are not credited
        if self.instance.pk:
            self.initial["extra_body"] = json.dumps(self.instance.extra_body or {})
        if editing:
            self.fields["name"].disabled = True
            self.fields["kind"].disabled = True

    def clean_extra_body(self):
        raw = (self.cleaned_data.get("extra_body") or "").strip()
        if not raw:
            return {}
        try:
            value = json.loads(raw)
        except ValueError as exc:
            raise forms.ValidationError(gettext("Not valid JSON: %(exc)s.") % {"exc": exc}) from exc
        if not isinstance(value, dict):
            raise forms.ValidationError(gettext("Give a JSON object."))
        return value

    def clean_answer_tolerance(self):
        return self.cleaned_data.get("answer_tolerance") or JudgeSetting.AnswerTolerance.STRICT

    def clean_strategy(self):
        return self.cleaned_data.get("strategy") or JudgeSetting.Strategy.REASON_THEN_SCORE

    def clean_split_rule(self):
        return self.cleaned_data.get("split_rule") or JudgeSetting.SplitRule.STUDENT

    def clean_few_shot_source(self):
        return self.cleaned_data.get("few_shot_source") or JudgeSetting.ExampleSource.HUMAN

    def clean_few_shot_k(self):
        value = self.cleaned_data.get("few_shot_k")
        return 2 if value is None else value

    def clean_few_shot_seed(self):
        value = self.cleaned_data.get("few_shot_seed")
        return 0 if value is None else value

    def clean(self):
        cleaned = super().clean()
        kind = cleaned.get("kind") or (self.instance.kind if self.instance.pk else "")
        if kind and kind != JudgeSetting.Kind.RUBRIC and cleaned.get("strategy") not in (None, "", "reason-then-score"):
            self.add_error("strategy", _("Prompt strategies are presets of the rubric judge; this kind has none."))
        if cleaned.get("step_report") and kind and kind != JudgeSetting.Kind.RUBRIC:
            self.add_error("step_report", _("Only a rubric judge is asked for steps and checkpoints."))
        if cleaned.get("prompt_set") is not None and kind != JudgeSetting.Kind.REPLAY:
            self.add_error("prompt_set", _("Only a replay setting sends a prompt set."))
        return cleaned

    def clean_approximate_answers(self):
        return self.cleaned_data.get("approximate_answers") or JudgeSetting.ApproximateAnswers.NOT_CREDITED

    def clean_prompt_template(self):
        template = self.cleaned_data.get("prompt_template") or ""
        unknown = prompts.unknown_placeholders(template)
        if unknown:
            raise forms.ValidationError(gettext("Unknown placeholders: %(join)s.") % {"join": ', '.join(unknown)})
        return template

    def setting_fields(self):
        """The cleaned values the services take (everything but the name)."""
        return {k: v for k, v in self.cleaned_data.items() if k != "name"}

    def validate_unique(self):
        """Versions share a name; the services check names."""


class RunStartForm(forms.Form):
    config = IdModelChoiceField(queryset=JudgeSetting.objects.none(), label=gettext_lazy("Judge setting"))
    note = forms.CharField(max_length=300, required=False)
    mode = forms.ChoiceField(
        choices=JudgeRun.Mode.choices, initial=JudgeRun.Mode.LIVE, widget=forms.RadioSelect, label=gettext_lazy("Calls"),
        required=False,
        help_text=gettext_lazy("Batch: the calls go to the endpoint's Batch API at its batch price; answers come back "
                               "within its completion window (up to 24 hours)."),
    )
    batch_retry = forms.ChoiceField(
        choices=JudgeRun.BatchRetry.choices, initial=JudgeRun.BatchRetry.LIVE, label=gettext_lazy("Lines a batch fails"),
        required=False,
        help_text=gettext_lazy("Batch runs only: send them again live (at once, full price) or in a next batch."),
    )

    def __init__(self, *args, judge_settings=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["config"].queryset = judge_settings if judge_settings is not None else JudgeSetting.objects.all()

    def clean_mode(self):
        return self.cleaned_data.get("mode") or JudgeRun.Mode.LIVE

    def clean_batch_retry(self):
        return self.cleaned_data.get("batch_retry") or JudgeRun.BatchRetry.LIVE


KIND_HELP = {key: kind.help for key, kind in KINDS.items()}


class PromptSetImportForm(forms.Form):
    """Issue 27: a release-format file whose records match existing answers, kept as a named prompt set."""

    name = forms.SlugField(max_length=60, label=_("Prompt set name"), help_text=_("A short name: letters, digits, hyphens and underscores."))
    file = forms.FileField(label=_("Release-format file (JSON array)"))
    holdout_absent = forms.BooleanField(
        required=False, label=_("Answers absent from the file are hold-outs"),
        help_text=_("For a few-shot variant file: the answers of its questions that it has no record for are "
                    "its calibration examples, never judged or counted for this set."),
    )
    manifest = forms.FileField(
        required=False, label=_("Hold-out manifest (optional)"),
        help_text=_("The release's few-shot manifest (realmath_eval_fewshot_manifest.json: hold-outs by index in "
                    "its source file), or a JSON list of {student_id, question_location}."),
    )
    manifest_source = forms.FileField(
        required=False, label=_("The manifest's source file (optional)"),
        help_text=_("realmath_eval.json, only when its answers came into the tool from a file of another name: "
                    "the manifest's indices are matched to its records."),
    )
    exam = forms.CharField(max_length=200, required=False, label=_("Only answers of this exam (optional)"))
