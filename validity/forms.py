from django import forms
from django.utils.translation import gettext_lazy

from annotation.selectors import exam_choices

from . import stats
from .report import SIGNALS

SOURCE_CHOICES = [("", gettext_lazy("all sources")), ("human", gettext_lazy("human answers")),
                  ("synthetic", gettext_lazy("synthetic answers"))]
SIGNAL_CHOICES = [("", gettext_lazy("the first available")), ("spread", gettext_lazy("spread over the judge's samples")),
                  ("boundary", gettext_lazy("closeness to the pass mark")),
                  ("second", gettext_lazy("disagreement with a second setting"))]
assert [c for c, _ in SIGNAL_CHOICES[1:]] == list(SIGNALS)


class ValidityForm(forms.Form):
    """The selection and the methods' parameters, read from the query string (so a figure's
    address reproduces it)."""

    setting = forms.ChoiceField(label=gettext_lazy("Judge setting"))
    exam = forms.ChoiceField(label=gettext_lazy("Exam"), required=False)
    question = forms.IntegerField(label=gettext_lazy("Question id"), required=False, min_value=1, max_value=2**63 - 1)
    source = forms.ChoiceField(label=gettext_lazy("Source of the answers"), choices=SOURCE_CHOICES, required=False)
    second = forms.ChoiceField(label=gettext_lazy("Second setting (a deferral signal)"), required=False)
    epsilon = forms.FloatField(label=gettext_lazy("ε (cost-benefit margin)"), initial=stats.AAT_EPSILON,
                               min_value=0, max_value=1, required=False)
    alpha = forms.FloatField(label=gettext_lazy("α (share allowed off)"), initial=0.1, min_value=0.001, max_value=0.5,
                             required=False)
    delta = forms.FloatField(label=gettext_lazy("δ (1 − confidence)"), initial=0.1, min_value=0.001, max_value=0.5,
                             required=False)
    d = forms.FloatField(label=gettext_lazy("d (points off)"), initial=2, min_value=0.5, max_value=1000, required=False)
    pass_mark = forms.FloatField(label=gettext_lazy("Pass mark (share of the full score)"), initial=0.6, min_value=0.01,
                                 max_value=1, required=False)
    width = forms.FloatField(label=gettext_lazy("Planner: interval width (share of the full score)"), initial=0.05,
                             min_value=0.001, max_value=1, required=False)
    budget = forms.IntegerField(label=gettext_lazy("Simulate a gold budget of"), required=False, min_value=2,
                                max_value=10**6)
    signal = forms.ChoiceField(label=gettext_lazy("Deferral signal"), choices=SIGNAL_CHOICES, required=False)
    seed = forms.IntegerField(label=gettext_lazy("Seed"), initial=0, min_value=0, max_value=2**31 - 1, required=False)

    def __init__(self, *args, settings=(), **kwargs):
        super().__init__(*args, **kwargs)
        choices = [(str(s.pk), f"{s.name} v{s.version}") for s in settings]
        self.fields["setting"].choices = choices
        self.fields["second"].choices = [("", "—"), *choices]
        self.fields["exam"].choices = [("", gettext_lazy("every exam"))] + [
            (str(e.pk), e.name) for e in exam_choices().order_by("name")]

    def parameters(self):
        from .report import Parameters

        data = self.cleaned_data
        defaults = Parameters()
        return Parameters(
            epsilon=defaults.epsilon if data.get("epsilon") is None else data["epsilon"],
            alpha=data.get("alpha") or defaults.alpha, delta=data.get("delta") or defaults.delta,
            d=data.get("d") or defaults.d, pass_mark=data.get("pass_mark") or defaults.pass_mark,
            width=data.get("width") or defaults.width, seed=data.get("seed") or 0, budget=data.get("budget"),
            signal=data.get("signal") or "",
        )
