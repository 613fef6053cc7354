"""extract_answer: boxed, answer sentences, Chinese markers, IneqMath relation and bound answers."""
import pytest

from equivalence import extract_answer


@pytest.mark.parametrize("text, expected", [
    (r"So we get \boxed{\frac{1}{2}}.", r"\frac{1}{2}"),
    (r"\boxed{\frac{\sqrt{3}}{\left(2+1\right)}} and then \boxed{x^{2}}", "x^{2}"),
    (r"First \boxed{1}, finally \boxed{\{1, 2\}}", r"\{1, 2\}"),
    (r"answer \boxed 5 done", "5"),
    ("Thus the final answer is $C = \\frac{27}{2}$.", r"C = \frac{27}{2}"),
    ("The answer is 42.", "42"),
    ("Therefore, the answer is: $x = 3$", "x = 3"),
    ("The answer is $x=1$ or $x=2$.", "x=1 or x=2"),
    ("所以 $f(x)$ 的最小正周期为 $\\pi$", r"\pi"),
    ("解得 x=2。\n故答案为 $\\frac{1}{3}$。", r"\frac{1}{3}"),
    ("综上所述，最大值为 5", "最大值为 5"),  # the label is part of the answer (issue 26)
    ("解：……所以最大值为 2，最小值为 -1。", "最大值为 2，最小值为 -1"),
    ("所以 f(x) 的单调递增区间为 (0, 1)，单调递减区间为 (1, +∞)。", "f(x) 的单调递增区间为 (0, 1)，单调递减区间为 (1, +∞)"),
    ("综上，当 a ≤ 1 时，x > 1；当 a > 1 时，x > a。", "当 a ≤ 1 时，x > 1；当 a > 1 时，x > a"),
    ("Therefore, the maximum value is 2 and the minimum value is -1.", "the maximum value is 2 and the minimum value is -1."),
    ("So x = 3.", "3"),  # an English conclusion without labels is read as before
    ("故 x = 2 或 x = -1（舍去）。", "x = 2 或 x = -1（舍去）"),
    ("答案：$(1, 2]$", "(1, 2]"),
    ("因此 x = 2 或 x = 3", "x = 2 或 x = 3"),
    ("∴ $a_n = 2n - 1$", "a_n = 2n - 1"),
    ("We compute $a = 3$ and then $$b = \\frac{a}{2}$$ as shown.", r"b = \frac{a}{2}"),
    ("No math here except the number 17 and then 23 at the end", "23"),
    ("the roots are $\\boxed{2}$ and $\\boxed{-3}$", "2 , -3"),
    ("so $x=\\boxed{1}$ or $x = \\boxed{-1}$.", "1 or -1"),
    ("方程的根为 $\\boxed{2}$ 和 $\\boxed{3}$", "2 , 3"),
    ("(1) \\boxed{\\frac12}. (2) The period is $\\pi$, so the answer is \\boxed{4}", "4"),
])
def test_general_extraction(text, expected):
    assert extract_answer(text) == expected


def test_nothing_to_extract():
    assert extract_answer("") is None
    assert extract_answer("no digits or formulas at all") is None
    assert extract_answer(None) is None


@pytest.mark.parametrize("text, expected", [
    ("... so the inequality holds. The answer is (B) $\\geq$.", "B"),
    ("Therefore the relation is $\\geq$.\nThe final answer is $\\geq$", r"\geq"),
    ("We conclude the answer is (A).", "A"),
    ("The answer is $\\leqslant$", r"\leq"),
    ("Line one\nLine two\nSo LHS ≥ RHS", r"\geq"),
    ("The answer is option (E) $>$", "E"),
    ("the final answer is \\boxed{(C) =}", "C"),
])
def test_relation_extraction(text, expected):
    assert extract_answer(text, kind="relation") == expected


@pytest.mark.parametrize("text, expected", [
    ("Equality holds at a=b=c. The answer is $C = \\frac{27}{2}$.", r"\frac{27}{2}"),
    ("Therefore the largest constant is C = 2 and it is attained.", "2"),
    ("So $C=\\sqrt{2}$\n", r"\sqrt{2}"),
    ("The final answer is \\boxed{C = 4}", "4"),
])
def test_bound_extraction(text, expected):
    assert extract_answer(text, kind="bound") == expected


def test_unknown_kind_is_an_error():
    with pytest.raises(ValueError):
        extract_answer("x", kind="matrix")
