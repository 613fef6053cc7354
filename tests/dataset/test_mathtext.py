"""Bare LaTeX delimited for KaTeX and the math-normalised transcript search (annotation.mathtext)."""
import pytest

from annotation.mathtext import delimit_bare_latex, search_form


@pytest.mark.parametrize("text, expected", [
    ("已知函数f(x)=e^{x}-\\frac{3}{2}x^{2}-ax，讨论f(x)的单调性。",
     "已知函数\\(f(x)=e^{x}-\\frac{3}{2}x^{2}-ax\\)，讨论f(x)的单调性。"),
    ("find the minimum of \\sqrt{a^{2}+1}.", "find the minimum of \\(\\sqrt{a^{2}+1}\\)."),
    ("(1) 求 \\cos\\alpha 的值; (2) 若 a_{n}=2^{n}, 则", "(1) 求 \\(\\cos\\alpha\\) 的值; (2) 若 \\(a_{n}=2^{n}\\), 则"),
    ("so a \\geq b is true", "so \\(a \\geq b\\) is true"),
    ("the set \\{x | x > 1\\} of reals", "the set \\(\\{x | x > 1\\}\\) of reals"),
    ("(1) f'(x)=e^{x}-3x-a ------5 points", "(1) \\(f'(x)=e^{x}-3x-a\\) ------5 points"),  # marker and label stay text
])
def test_bare_formulas_are_wrapped(text, expected):
    assert delimit_bare_latex(text) == expected


@pytest.mark.parametrize("text", [
    "Let $a \\geq b$ and $$\\frac{1}{2}$$ hold, and \\(x^{2}\\) too, and \\[y_{1}\\].",  # already delimited
    "f(x) = cos x (sin x + cos x) - 1/2 and √2/2",  # unicode math: readable as it is
    "plain prose without any formula",
    "a^{ {b} unbalanced",  # never wrap what KaTeX could not parse as one formula
    "",
])
def test_text_without_bare_latex_is_unchanged(text):
    assert delimit_bare_latex(text) == text


def test_search_form_drops_spacing_backslashes_braces_and_case():
    assert search_form("\\ln 3") == search_form("LN3") == "ln3"
    assert search_form("$\\frac{1}{2}$") == "frac12"


@pytest.mark.django_db
def test_response_search_finds_math_written_differently(reviewer_client):
    from django.urls import reverse

    from tests.factories import make_question, make_responses

    question = make_question()
    [with_ln, other] = make_responses(question, 2)
    with_ln.transcript = "所以 $x = \\ln 3$，舍去负根"
    with_ln.save()
    for query in ("ln3", "\\ln 3", "x=ln3"):
        page = reviewer_client.get(reverse("annotation:response_list"), {"q": query}).content.decode()
        assert f"/responses/{with_ln.pk}/" in page and f"/responses/{other.pk}/" not in page, query
