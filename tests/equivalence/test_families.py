"""Solution families (k ∈ ℤ): declarations, the issue's examples, and properties.

Properties: shifting k, writing the period as a multiple, or splitting by parity never changes
the set (equivalent); changing the period or the phase always does (not equivalent).
"""
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from equivalence.declarations import strip_declarations
from equivalence.engine import configure_process, judge
from equivalence.lexer import tokenize
from equivalence.normalize import normalize

configure_process()

GOLD_3_07 = "[kπ - 3π/8, kπ + π/8], k ∈ Z"  # RealMath-Eval question 3-07, as written in the record


def check(pred, gold, mode="default"):
    return judge(pred, gold, mode, 5.0)


@pytest.mark.parametrize("text, params", [
    (r"x = k\pi, k \in \mathbb{Z}", {"k"}),
    ("x = kπ, k ∈ Z", {"k"}),
    (r"x = k\pi\ (k\in\mathbf Z)", {"k"}),
    ("x = nπ, n ∈ ℤ", {"n"}),
    (r"x = k\pi + n, k, n \in \mathbb{Z}", {"k", "n"}),
    (r"x = k\pi\text{, where } k \text{ is an integer}", {"k"}),
    ("x = 2kπ for any integer k", {"k"}),
    ("x = kπ，k为整数", {"k"}),
    (r"x = \frac{k\pi}{2}\ (k = 0, \pm 1, \pm 2, \ldots)", {"k"}),
    (r"k \in \mathbb{Z}, x = k\pi", {"k"}),
    (r"\{x \mid x = k\pi, k \in \mathbb{Z}\}", {"k"}),
    # Not declarations: the answer itself, or a condition on the set-builder variable.
    (r"x \in \mathbb{Z}", set()),
    (r"\{x \mid x \in \mathbb{Z}, x > 0\}", set()),
    (r"x = 2 + k", set()),
])
def test_declarations(text, params):
    _, found = strip_declarations(tokenize(normalize(text)))
    assert found == params


@pytest.mark.parametrize("pred, gold, expected", [
    # The examples, each checked by hand.
    (GOLD_3_07, r"\left[k\pi-\frac{3\pi}{8},k\pi+\frac{\pi}{8}\right],k\in\mathbb{Z}", True),
    (GOLD_3_07, r"\left[k\pi-\frac{3\pi}{8},k\pi+\frac{\pi}{8}\right](k\in\mathbf Z)", True),
    ("[kπ+5π/8, kπ+9π/8], k ∈ Z", GOLD_3_07, True),  # 5π/8 - (-3π/8) = π: k shifted by 1
    (r"x = \frac{\pi}{6} + 2k\pi \text{ or } x = \frac{5\pi}{6} + 2k\pi, k \in \mathbb{Z}",
     r"x = (-1)^k \frac{\pi}{6} + k\pi, k \in \mathbb{Z}", True),
    ("[2kπ - 3π/8, 2kπ + π/8], k ∈ Z", GOLD_3_07, False),  # another period
    ("[kπ - π/8, kπ + 3π/8], k ∈ Z", GOLD_3_07, False),  # another phase
    ("[kπ + π/8, kπ + 5π/8], k ∈ Z", GOLD_3_07, False),  # the decreasing intervals
    ("(kπ - 3π/8, kπ + π/8), k ∈ Z", GOLD_3_07, False),  # open ends
    (r"k\pi - \frac{3\pi}{8} \le x \le k\pi + \frac{\pi}{8}, k \in \mathbb{Z}", GOLD_3_07, True),
    (r"2k\pi - \frac{\pi}{2} \le 2x + \frac{\pi}{4} \le 2k\pi + \frac{\pi}{2}, k \in \mathbb{Z}", GOLD_3_07, True),
    (r"[-\frac{3\pi}{8}, \frac{\pi}{8}]", GOLD_3_07, False),  # one period only
    (r"[k\pi, k\pi + \pi], k \in \mathbb{Z}", r"(-\infty, +\infty)", True),
    (r"x = k\pi \pm \frac{\pi}{3}, k \in \mathbb{Z}", r"x = \frac{\pi}{3} + k\pi \text{ or } x = \frac{2\pi}{3} + k\pi, k \in \mathbb{Z}", True),
    (r"\frac{k\pi}{2} + \frac{\pi}{4}, k \in \mathbb{Z}", r"\frac{\pi}{4} + k\pi, k \in \mathbb{Z}", False),
    (r"x = \frac{\pi}{4} + k\pi, k \in \mathbb{Z}", r"x = \frac{\pi}{4}", False),
    (r"x = k\pi + \frac{\pi}{4}", r"x = \frac{\pi}{4} + k\pi, k \in \mathbb{Z}", True),  # k undeclared on one side
    (r"(\frac{k\pi}{2} + \frac{\pi}{8}, 0), k \in \mathbb{Z}", r"(\frac{k\pi}{2} - \frac{3\pi}{8}, 0), k \in \mathbb{Z}", True),
    (r"(\frac{k\pi}{2} + \frac{\pi}{8}, 0), k \in \mathbb{Z}", r"(k\pi + \frac{\pi}{8}, 0), k \in \mathbb{Z}", False),
    (r"x = k, k \in \mathbb{Z}", r"x = k\pi, k \in \mathbb{Z}", False),  # periods 1 and π: sampled
    (r"x = k \text{ or } x = k\pi, k \in \mathbb{Z}", r"x = k\pi \text{ or } x = k, k \in \mathbb{Z}", True),
])
def test_family_examples(pred, gold, expected):
    verdict = check(pred, gold)
    assert verdict["equivalent"] is expected, verdict["explanation"]
    reverse = check(gold, pred)
    assert reverse["equivalent"] is expected, reverse["explanation"]


def test_verdict_explains_the_set_modulo_the_period():
    verdict = check("[kπ+5π/8, kπ+9π/8], k ∈ Z", GOLD_3_07)
    assert verdict["method"] == "family"
    assert "[-3π/8, π/8] + π·k" in verdict["explanation"]
    assert verdict["gold_kind"] == verdict["pred_kind"] == "family"
    verdict = check("[kπ + π/8, kπ + 5π/8], k ∈ Z", GOLD_3_07)
    assert "is in the" in verdict["explanation"] and "answer only" in verdict["explanation"]


# --- properties ---------------------------------------------------------------------------------

def _multiple_of_pi(value):
    """LaTeX for value·π with value a Fraction: ``-\\frac{3\\pi}{8}``."""
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    value = abs(value)
    if value.denominator == 1:
        return f"{sign}{value.numerator}\\pi"
    return f"{sign}\\frac{{{value.numerator}\\pi}}{{{value.denominator}}}"


def _plus(text):
    return text if text.startswith("-") else "+ " + text


def _interval_family(phase, width, period, left="[", right="]"):
    lo = _multiple_of_pi(phase)
    hi = _multiple_of_pi(phase + width)
    step = _multiple_of_pi(period)
    return f"{left}{lo} + k \\cdot {step}, {hi} + k \\cdot {step}{right}, k \\in \\mathbb{{Z}}"


def _point_family(phase, period):
    return f"x = {_multiple_of_pi(phase)} + k \\cdot {_multiple_of_pi(period)}, k \\in \\mathbb{{Z}}"


fractions = st.builds(Fraction, st.integers(-12, 12), st.integers(1, 8))
periods = st.builds(Fraction, st.integers(1, 6), st.integers(1, 4))
shifts = st.integers(-4, 4)
brackets = st.sampled_from([("[", "]"), ("(", ")"), ("[", ")"), ("(", "]")])


@settings(max_examples=40, deadline=None)
@given(phase=fractions, period=periods, share=st.integers(0, 3), shift=shifts, ends=brackets)
def test_shifting_k_keeps_an_interval_family(phase, period, share, shift, ends):
    width = period * Fraction(share, 4)  # shorter than a period (a point when share is 0)
    if width == 0:
        ends = ("[", "]")
    first = _interval_family(phase, width, period, *ends)
    second = _interval_family(phase + shift * period, width, period, *ends)
    verdict = check(first, second)
    assert verdict["equivalent"] is True, (first, second, verdict["explanation"])


@settings(max_examples=40, deadline=None)
@given(phase=fractions, period=periods, share=st.integers(0, 2), factor=st.sampled_from([2, 3, Fraction(1, 2), Fraction(1, 3)]))
def test_another_period_is_another_family(phase, period, share, factor):
    width = period * Fraction(share, 8)  # less than a third of either period
    first = _interval_family(phase, width, period)
    second = _interval_family(phase, width, period * factor)
    verdict = check(first, second)
    assert verdict["equivalent"] is False, (first, second, verdict["explanation"])


@settings(max_examples=30, deadline=None)
@given(phase=fractions, period=periods, offset=st.integers(1, 7), shift=shifts)
def test_another_phase_is_another_family(phase, period, offset, shift):
    moved = phase + period * Fraction(offset, 8) + shift * period  # not a whole number of periods
    verdict = check(_point_family(phase, period), _point_family(moved, period))
    assert verdict["equivalent"] is False, verdict["explanation"]


@settings(max_examples=30, deadline=None)
@given(angle=st.builds(Fraction, st.integers(1, 11), st.integers(2, 12)).filter(lambda f: f.denominator != 1), shift=shifts)
def test_parity_form_equals_its_two_branches(angle, shift):
    """x = (-1)^k a + kπ is x = a + 2kπ or x = π - a + 2kπ, whatever k is shifted by."""
    a = _multiple_of_pi(angle)
    parity = f"x = (-1)^k {a} + k\\pi, k \\in \\mathbb{{Z}}"
    shifted_a = _multiple_of_pi(angle + 2 * shift)
    shifted_b = _multiple_of_pi(1 - angle)
    branches = f"x = {shifted_a} + 2k\\pi \\text{{ or }} x = {shifted_b} + 2k\\pi, k \\in \\mathbb{{Z}}"
    verdict = check(branches, parity)
    assert verdict["equivalent"] is True, (branches, parity, verdict["explanation"])
    wrong = f"x = {shifted_a} + 2k\\pi \\text{{ or }} x = {_multiple_of_pi(1 + angle)} + 2k\\pi, k \\in \\mathbb{{Z}}"
    assert check(wrong, parity)["equivalent"] is False
