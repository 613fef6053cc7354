"""Forms of labelling pages."""
import random

from django import forms
from django.utils.translation import gettext_lazy

from .services import MAX_ANCHORING_SEED


class AnchoringForm(forms.Form):
    """Start the anchoring experiment on an exam: which setting's pre-grade, and the seed of the half."""

    setting = forms.ChoiceField(label=gettext_lazy("Judge setting"),
                                help_text=gettext_lazy("Its newest ok score of an answer is the pre-grade shown."))
    seed = forms.IntegerField(label=gettext_lazy("Seed"), min_value=0, max_value=MAX_ANCHORING_SEED,
                              help_text=gettext_lazy("Picks the shown half; the same seed always picks the same half."))

    def __init__(self, *args, choices=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["setting"].choices = [
            (name, gettext_lazy("%(name)s (%(n)s answers scored)") % {"name": name, "n": n}) for name, n in choices
        ]
        if not self.is_bound and "seed" not in self.initial:
            self.initial["seed"] = random.SystemRandom().randint(0, 9999)
