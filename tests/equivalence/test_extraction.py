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
    ("So x = 3.", "x = 3"),  # an English conclusion: the sentence after the marker (issue 41)
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


# --- issue 41: the final answer inside a whole solution --------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from equivalence.extraction import drop_chat_tail, final_answer  # noqa: E402


@pytest.mark.parametrize("text, expected, source", [
    ("Step 1: $x = 5$.\nFinal Answer: The final answer is $\\frac{1}{2}$. I hope it is correct.", r"\frac{1}{2}", "answer-is"),
    ("We had $y = 12$ earlier.\nTherefore, the altitude to side $BC$ is $\\sqrt{3}$.", r"\sqrt{3}", "conclusion"),
    ("The answer is $5$.<|im_end|>\n<|im_start|>user\nWhat is $\\boxed{7}$?", "5", "answer-is"),
    ("所以$\\triangle DMN$面积的最大值为$\\frac{48}{5}$，此时$m=\\pm\\frac{\\sqrt{34}}{4}$", r"最大值为 \frac{48}{5}", "conclusion"),
    ("所以 $x = 4$ 或 $x = -1$，经检验 $x = -1$ 不符合题意，舍去。", "x = 4 或 x = -1（舍去）", "conclusion"),
    ("综上，实数 $a$ 的取值范围是 $(-\\infty, 1]$。", r"(-\infty, 1]", "conclusion"),
    ("答：这批零件共有 $360$ 个。", "360", "conclusion"),
    ("Thus the two solutions are $x = 2$ and $x = \\frac{1}{3}$.", r"x = 2, x = \frac{1}{3}", "conclusion"),
    ("Thus $x = 2$ or $x = 3$.", "x = 2 或 x = 3", "conclusion"),
    ("Therefore $f(x)$ is increasing on $(0, 1)$.", "$f(x)$ is increasing on $(0, 1)$", "conclusion"),
    ("Therefore the function is $f(x) = x^2$, and $f$ is increasing on $(0, 1)$.", "increasing on (0, 1)", "conclusion"),
    ("Hence $x = 3$, which satisfies the equation.", "x = 3", "conclusion"),
    ("Answer: $\\boxed{12}$ and $\\boxed{20}$", "12 , 20", "boxed"),
    ("Some work with $7$ and $8$.\nThe result is the matrix $\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}$.",
     r"\begin{pmatrix}1&2\\3&4\end{pmatrix}", "last-formula"),
    ("We compute $2 + 3 = 5$.\nSo the total is 17 apples", "the total is 17 apples", "conclusion"),
    ("x = 3\n\nThe length is 42", "42", "last-line"),
    ("Thus, the value of $k$ is $-3$, and the value of $m$ is $5$.", "k = -3, m = 5", "conclusion"),
    ("所以 $a$ 为 $2$，$b$ 为 $3$。", "a = 2, b = 3", "conclusion"),
    ("Work.\n**Final Answer**\n\n$$x = 3$$", "x = 3", "last-formula"),
    ("Work here.\nSo the final answer is: **42**", "42", "answer-is"),
    ("综上所述，$a$ 的取值范围是 $a\\geq 2$ 或 $a \\leq -1$。", "a\\geq 2 或 a \\leq -1", "conclusion"),
])
def test_final_answer_of_a_whole_solution(text, expected, source):
    found = final_answer(text)
    assert (found.answer, found.source) == (expected, source)


def test_a_number_on_an_earlier_line_is_never_taken():
    assert final_answer("We find $y = 12$ and then 7.\nThe triangle is right-angled.").answer is None
    assert extract_answer("Line one has 3 and $4$.\n\nNothing to conclude here") is None


def test_a_value_said_to_be_wrong_is_not_taken():
    assert final_answer("We try it.\nTherefore, $x = 2$ is not a solution.").answer is None
    assert final_answer("所以 $x = 1$ 不是方程的解。").answer is None
    assert final_answer("We try it.\nTherefore, $x = 2$ is the answer.").answer == "x = 2"


def test_a_whole_conversation_is_read_from_its_first_assistant_turn():
    text = ("<|im_start|>system\nBe brief<|im_end|>\n<|im_start|>user\nIs it $\\boxed{9}$?<|im_end|>\n"
            "<|im_start|>assistant\nWe get $x = 2$.\nThe answer is $2$.<|im_end|>")
    assert final_answer(text).answer == "2"
    # A second assistant turn (the model went on to invent the dialogue) is not the answer.
    text += "\n<|im_start|>user\nAgain<|im_end|>\n<|im_start|>assistant\nThe answer is $7$.<|im_end|>"
    assert final_answer(text).answer == "2"


def test_chat_template_tails_are_dropped():
    assert drop_chat_tail("<|im_start|>assistant\nThe answer is 4<|im_end|>\n<|im_start|>user\n5") == ("The answer is 4", True)
    assert final_answer("\\boxed{4}</s>[INST] and \\boxed{9} [/INST]").answer == "4"
    assert final_answer("So the answer is 3.<|eot_id|><|start_header_id|>user<|end_header_id|>\\boxed{8}").dropped_tail


def test_extraction_is_linear_on_long_hostile_text():
    import time

    hostile = ["\\boxed{" * 2800, "$" * 20000, "所以" * 10000, "$x" * 10000, "\\(" * 10000, "the answer is " * 1400,
               ("x = 1, " * 2000)[:20000], "\\boxed{1}$ and $" * 1250, ("a" * 50 + "\n") * 390]
    for text in hostile:
        started = time.monotonic()
        final_answer(text)
        assert time.monotonic() - started < 1.0, text[:20]  # about 0.05 s on an idle machine


PROSE_EN = ["We start from the given data", "Note that the triangle is isosceles", "Adding the two equations gives",
            "By symmetry the other case is the same", "Let us check the boundary", "This completes the computation"]
PROSE_ZH = ["由题意可知", "两边同时平方", "设公差为 d", "因为函数在区间上连续", "代入原式化简", "由余弦定理可得"]
ENDINGS = [
    "Final Answer: The final answer is ${}$. I hope it is correct.", "Therefore, the required value is ${}$.",
    "Hence the answer is ${}$.", "So we get $\\boxed{{{}}}$.", "所以所求的值为 ${}$。", "故答案为 ${}$。",
    "综上，$m$ 的值是 ${}$。", "答：${}$", "因此 $S = {}$", "The answer is: ${}$",
]
answers = st.one_of(st.integers(-999, 999).map(str), st.tuples(st.integers(1, 99), st.integers(2, 99)).map(lambda t: f"\\frac{{{t[0]}}}{{{t[1]}}}"))


@settings(max_examples=120, deadline=None)
@given(answer=answers, decoys=st.lists(st.integers(-9999, 9999), min_size=1, max_size=6),
       prose=st.lists(st.sampled_from(PROSE_EN + PROSE_ZH), min_size=1, max_size=40),
       ending=st.sampled_from(ENDINGS), tail=st.booleans())
def test_an_answer_in_random_prose_is_found_and_no_earlier_number_is_taken(answer, decoys, prose, ending, tail):
    lines = [f"{sentence} ${decoy}$ 。" if index % 2 else sentence
             for index, (sentence, decoy) in enumerate(zip(prose, decoys * len(prose)))]
    text = "\n".join(lines) + "\n" + ending.format(answer)
    if tail:
        text += "<|im_end|>\n<|im_start|>user\nNext question: compute $\\boxed{31337}$."
    found = final_answer(text).answer
    assert found is not None and (found == answer or found.endswith("= " + answer) or found.endswith(" " + answer)), found


@settings(max_examples=60, deadline=None)
@given(decoys=st.lists(st.integers(-9999, 9999), min_size=1, max_size=6),
       prose=st.lists(st.sampled_from(PROSE_EN + PROSE_ZH), min_size=1, max_size=20))
def test_without_a_stated_answer_no_number_from_an_earlier_line_is_taken(decoys, prose):
    lines = [f"{sentence} ${decoy}$" for sentence, decoy in zip(prose, decoys * len(prose))]
    text = "\n".join(lines) + "\nThe proof is complete"
    assert final_answer(text).answer is None


@settings(max_examples=60, deadline=None)
@given(first=st.integers(-99, 99), second=st.integers(-99, 99), joiner=st.sampled_from([" and ", " or ", " 和 ", " 或 ", "，", ", "]),
       prose=st.lists(st.sampled_from(PROSE_EN + PROSE_ZH), min_size=1, max_size=10),
       opening=st.sampled_from(["Therefore the solutions are ", "So ", "所以 ", "综上，", "故方程的解为 "]))
def test_several_answers_joined_in_the_conclusion_are_kept_together(first, second, joiner, prose, opening):
    text = "\n".join(f"{sentence} $y = 7$" for sentence in prose) + f"\n{opening}$x = {first}$" + joiner + f"$x = {second}$."
    found = final_answer(text).answer
    assert found is not None and f"x = {first}" in found and f"x = {second}" in found, found
