"""The Answer check page (/grading/equivalence/): paste two answers, see whether they are equivalent and why."""
import re

from django import forms
from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.utils.translation import gettext_lazy
from django.utils.translation import gettext_lazy as _

from equivalence import MAX_SOLUTION_CHARS, check_equivalence, meaning_words

from .answer_messages import presented

# What each group of meaning-bearing words is about (the words themselves are data).
MEANING_GROUPS = {
    "extremum": _("maximum and minimum"), "monotonicity": _("increasing and decreasing"),
    "existence": _("exists or not"), "solvability": _("solutions or none"), "truth": _("yes and no"),
    "parity": _("odd and even"), "sufficiency": _("sufficient and necessary"), "bound": _("upper and lower"),
    "convexity": _("convex and concave"), "sign": _("positive and negative"), "parts": _("real and imaginary parts"),
}

EXAMPLES = [
    (r"\frac{1}{\sqrt{2}}", r"\frac{\sqrt{2}}{2}"),
    (r"\cos^2 x - \sin^2 x", r"\cos 2x"),
    (r"x \geq 2", r"[2, +\infty)"),
    ("6.28318", r"2\pi"),
    (r"\frac{1}{2^{98}}", r"\frac{1}{2^{99}}"),
    (r"x = \pm 2", r"x = 2 \text{ or } x = -2"),
    ("50\\%", "0.5"),
    (r"30^\circ", r"\frac{\pi}{6}"),
    ("[k\u03c0 + 5\u03c0/8, k\u03c0 + 9\u03c0/8], k \u2208 Z", r"\left[k\pi-\frac{3\pi}{8},k\pi+\frac{\pi}{8}\right], k\in\mathbb{Z}"),
    (r"(x-1)^{500}(x+1)^{500}", r"(x^2-1)^{500}"),
    (r"2\begin{pmatrix}1&2\\3&4\end{pmatrix}^T", r"\begin{bmatrix}2&6\\4&8\end{bmatrix}"),
    (r"5\,\mathrm{cm}", r"50 \text{ mm}"),
    (r"\text{the roots are } \boxed{2} \text{ and } \boxed{-3}", r"x=2 \text{ or } x=-3"),
    (r"\begin{cases} x, & x \ge 0 \\ -x, & x < 0 \end{cases}", r"|x|"),
    ("最大值为 2，最小值为 -1", "max 2, min -1"),
    ("x = 2 或 x = -1（舍去）", "x = 2"),
    ("12个", "12元"),
    ("3.14", r"\pi"),
    ("Step 1: $y = 12$.\nFinal Answer: The final answer is $\\frac{3}{4}$. I hope it is correct.", "0.75"),
    ("当 a>1 时，f(x) 在 (0,+∞) 上单调递增", "当 a>1 时，f(x) 在 (0,+\\infty) 上单调递减"),
    ("a>1 时单调递增", "a>1"),
    ("有且只有一个零点", "零点个数为1"),
]
MAX_DOMAIN_CHARS = 300


class AnswerCheckForm(forms.Form):
    pred = forms.CharField(label=gettext_lazy("Predicted answer"), max_length=MAX_SOLUTION_CHARS, strip=False,
                           widget=forms.Textarea(attrs={"rows": 3, "autofocus": True, "spellcheck": "false"}))
    gold = forms.CharField(label=gettext_lazy("Gold answer"), max_length=MAX_SOLUTION_CHARS, strip=False,
                           widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false"}))
    mode = forms.ChoiceField(
        choices=[("default", gettext_lazy("Default: decimals may round an exact value")),
                 ("strict", gettext_lazy("Strict (IneqMath): a decimal must be the exact value"))],
        initial="default", widget=forms.RadioSelect,
    )
    domain = forms.CharField(
        label=gettext_lazy("Domain stated by the question (optional)"), max_length=MAX_DOMAIN_CHARS, required=False,
        help_text=gettext_lazy("For example n \\ge 2, n \\in \\mathbb{N}^* or x > 0: point tests stay inside it."),
        widget=forms.TextInput(attrs={"spellcheck": "false", "placeholder": "n \\ge 2, n \\in \\mathbb{N}^*"}),
    )
    second_opinion = forms.BooleanField(
        label=gettext_lazy("Also ask Math-Verify (a second opinion; ours counts)"), required=False,
    )


@login_required
def answer_check(request):
    """Any logged-in user may check answers; nothing is stored."""
    verdict = None
    if request.method == "POST":
        form = AnswerCheckForm(request.POST)
        if form.is_valid():
            data = form.cleaned_data
            verdict = check_equivalence(data["pred"], data["gold"], mode=data["mode"],
                                        second_opinion=data["second_opinion"], domain=data["domain"])
    else:
        form = AnswerCheckForm(initial=_initial(request.GET))
    words = [(MEANING_GROUPS.get(group, group), ", ".join(found)) for group, found in meaning_words().items()]
    return render(request, "grading/judges/equivalence.html",
                  {"form": form, "verdict": verdict, "shown": presented(verdict) if verdict else None, "examples": [(p, g, _shown(p), _shown(g)) for p, g in EXAMPLES],
                   "meaning_words": words})


def _shown(answer):
    """How an example is shown: answers in words as text (KaTeX would set "max 2" as the product max2);
    a solution with $...$ formulas as its prose in \\text{} around the formulas, on one line."""
    if "$" in answer:
        pieces = re.split(r"\$([^$]*)\$", answer.replace("\n", " "))
        return "".join(r"\text{" + piece + "}" if index % 2 == 0 and piece else piece for index, piece in enumerate(pieces))
    if "\\" not in answer and re.search(r"[\u3400-\u9fff]|\b(?:max|min)\s", answer):
        return r"\text{" + answer + "}"
    return answer


def _initial(params):
    initial = {"mode": params.get("mode") if params.get("mode") in ("default", "strict") else "default"}
    if params.get("second_opinion") in ("1", "on", "true"):
        initial["second_opinion"] = True
    for field in ("pred", "gold"):
        if params.get(field):
            initial[field] = params[field][:MAX_SOLUTION_CHARS]
    if params.get("domain"):
        initial["domain"] = params["domain"][:MAX_DOMAIN_CHARS]
    return initial
