"""The answer-check page: paste two answers, see whether they are equivalent and why."""
from django import forms
from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from grading.equivalence import MAX_ANSWER_CHARS, check_equivalence

EXAMPLES = [
    (r"\frac{1}{\sqrt{2}}", r"\frac{\sqrt{2}}{2}"),
    (r"\cos^2 x - \sin^2 x", r"\cos 2x"),
    (r"x \geq 2", r"[2, +\infty)"),
    ("6.28318", r"2\pi"),
    (r"\frac{1}{2^{98}}", r"\frac{1}{2^{99}}"),
    (r"x = \pm 2", r"x = 2 \text{ or } x = -2"),
    ("50\\%", "0.5"),
    (r"30^\circ", r"\frac{\pi}{6}"),
]


class AnswerCheckForm(forms.Form):
    pred = forms.CharField(label="Predicted answer", max_length=MAX_ANSWER_CHARS, strip=False,
                           widget=forms.Textarea(attrs={"rows": 3, "autofocus": True, "spellcheck": "false"}))
    gold = forms.CharField(label="Gold answer", max_length=MAX_ANSWER_CHARS, strip=False,
                           widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false"}))
    mode = forms.ChoiceField(
        choices=[("default", "Default: decimals may round an exact value"),
                 ("strict", "Strict (IneqMath): a decimal must be the exact value")],
        initial="default", widget=forms.RadioSelect,
    )


@login_required
def answer_check(request):
    """Any logged-in user may check answers; nothing is stored."""
    verdict = None
    if request.method == "POST":
        form = AnswerCheckForm(request.POST)
        if form.is_valid():
            data = form.cleaned_data
            verdict = check_equivalence(data["pred"], data["gold"], mode=data["mode"])
    else:
        form = AnswerCheckForm(initial=_initial(request.GET))
    return render(request, "grading/equivalence.html", {"form": form, "verdict": verdict, "examples": EXAMPLES})


def _initial(params):
    initial = {"mode": params.get("mode") if params.get("mode") in ("default", "strict") else "default"}
    for field in ("pred", "gold"):
        if params.get(field):
            initial[field] = params[field][:MAX_ANSWER_CHARS]
    return initial
