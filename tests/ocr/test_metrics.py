"""CER: a plain Levenshtein distance (no edit-distance library is installed), checked against a reference DP."""
from hypothesis import given, settings
from hypothesis import strategies as st

from ocr.metrics import cer, char_errors, levenshtein, normalise


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
