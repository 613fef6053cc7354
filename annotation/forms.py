from django import forms
from django.utils.translation import gettext, gettext_lazy

from .importers.placement import ASK, OVERLAP_CHOICES
from .rubric import read_rubric


class DatasetImportForm(forms.Form):
    FORMATS = [
        ("realmath", gettext_lazy("RealMath-Eval release (JSON array)")),
        ("ineqmath", gettext_lazy("IneqMath records (JSON array)")),
        ("dataset", gettext_lazy("Full JSONL export of this tool (dataset.jsonl, or the export's zip)")),
    ]

    format = forms.ChoiceField(choices=FORMATS)
    file = forms.FileField()
    exam = forms.CharField(required=False, max_length=200, help_text=gettext_lazy("Exam / batch name (optional)."))
    overlap = forms.ChoiceField(
        choices=OVERLAP_CHOICES, initial=ASK, required=False, widget=forms.RadioSelect,
        label=gettext_lazy("Questions of the file already in another exam"),
        help_text=gettext_lazy("RealMath-Eval releases: one release stays in one exam."),
    )

    def clean_overlap(self):
        return self.cleaned_data.get("overlap") or ASK


class RubricEditForm(forms.Form):
    """A question's rubric: the reference solution with its markers, the full score, and one
    maximum per sub-question (fields ``max_<sub-question id>``)."""

    reference_solution = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 14, "class": "mono"}), required=False, max_length=200_000,
        help_text=gettext_lazy('Markers such as "------3 points" end each checkpoint; the points are cumulative.'),
    )
    full_score = forms.DecimalField(min_value=0.01, max_digits=7, decimal_places=2)
    note = forms.CharField(required=False, max_length=300, help_text=gettext_lazy("What changed and why (kept with the version)."))

    def __init__(self, *args, question, **kwargs):
        super().__init__(*args, **kwargs)
        self.question = question
        self.sub_questions = list(question.sub_questions.all())
        for sub in self.sub_questions:
            self.fields[f"max_{sub.pk}"] = forms.DecimalField(
                label=gettext("Maximum of %(label)s") % {"label": sub.label}, required=False, min_value=0, max_digits=7, decimal_places=2,
            )
        if not self.is_bound:
            # A maximum not set yet starts as the one the markers give (a question imported by an
            # earlier reader): saving the form unchanged sets it.
            read = read_rubric(question.reference_solution, [s.label for s in self.sub_questions],
                               question.full_score).maxima
            self.initial.update({
                "reference_solution": question.reference_solution, "full_score": question.full_score,
                **{f"max_{sub.pk}": sub.max_points if sub.max_points is not None else read.get(sub.label)
                   for sub in self.sub_questions},
            })

    def max_point_fields(self):
        return [self[f"max_{sub.pk}"] for sub in self.sub_questions]

    def sub_question_max_points(self):
        return {sub.label: self.cleaned_data.get(f"max_{sub.pk}") for sub in self.sub_questions}
