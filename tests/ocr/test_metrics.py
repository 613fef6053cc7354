"""CER: a plain Levenshtein distance (no edit-distance library is installed), checked against a reference DP."""
from hypothesis import given, settings
from hypothesis import strategies as st

from ocr.metrics import cer, char_errors, levenshtein, normalise, normalise_math


def reference_levenshtein(a, b):
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab解题$x^2 ", max_size=14), st.text(alphabet="ab解题$x^2 ", max_size=14))
def test_levenshtein_matches_the_textbook_dynamic_programme(a, b):
    assert levenshtein(a, b) == reference_levenshtein(a, b)
    assert levenshtein(a, b) == levenshtein(b, a)


def test_known_distances():
    assert levenshtein("kitten", "sitting") == 3
    assert levenshtein("", "abc") == 3
    assert levenshtein("解题", "解题") == 0
    assert levenshtein("由题意得", "由题竟得") == 1


def test_cer_ignores_whitespace_and_full_width_forms():
    assert normalise("解：a ，b\n c") == "解:a,bc"
    assert cer("解: f(x) = 1,", "解：f(x)=1，") == 0.0
    assert char_errors("abcd", "abce") == (1, 4)
    assert cer("", "") == 0.0
    assert cer("xyz", "") == 3.0
    assert cer("", "abcd") == 1.0


def test_long_pages_are_fast_enough():
    page = "解：由题意得 f(x)=x^2+2x+1，所以 f(1)=4。" * 40
    noisy = page.replace("意", "竟")
    assert levenshtein(page, noisy) == 40


def test_math_normalised_cer_forgives_markup_people_add_but_not_wrong_symbols():
    assert normalise_math(r"$x^{2}$ + \left( a_n \right) \, \quad y") == "x2+(an)y"
    assert char_errors("x2", "$x^2$") == (3, 5)  # raw: $, ^ and $ are three edits
    assert char_errors("x2", "$x^2$", math=True) == (0, 2)
    assert char_errors("x3", "$x^{2}$", math=True) == (1, 2)  # a wrong digit still counts
    assert cer("解:由 a1=1 得 S5=15", r"解：由 $a_{1}=1$ 得 $S_5 = 15$", math=True) == 0.0
    assert cer("解:由 a1=1 得 S5=15", r"解：由 $a_{1}=1$ 得 $S_5 = 15$") > 0.2
    assert normalise_math(r"\frac{a}{b}") == r"\fracab"  # only markup goes; commands stay
    assert normalise_math(r"\quadrant") == r"\quadrant"  # not the \quad command
