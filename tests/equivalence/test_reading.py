"""Answers written in words: the reading before the parser, the meaning guard, units in words."""
import time

import pytest

from equivalence import meaning
from equivalence.engine import configure_process, judge
from equivalence.reading import read
from equivalence.units import compound_amounts, known_dimensions_differ

configure_process()


@pytest.mark.parametrize("text, expected", [
    ("所以 x = 2，经检验符合题意", "x = 2"),
    ("x = 2 或 x = -1（舍去）", "x = 2"),
    ("解得 x = 3 或 x = -2，其中 x = -2 不合题意，舍去，所以 x = 3", "x = 3"),
    ("x = 1 (rejected) or x = 4", "x = 4"),
    ("hence x = 5, which satisfies the original equation", "x = 5"),
    ("综上所述，m = 2", "m = 2"),
    ("实数 a 的取值范围是 a ≥ 2", r"a \ge 2"),
    ("the solution set is (1, 3)", "(1, 3)"),
    ("x 的值为 3", "x = 3"),
    ("the value of x is 3", "x = 3"),
    ("greater than or equal to", r"\ge"),
    ("不小于", r"\ge"),
    ("小于等于", r"\le"),
    ("x = 2, x = 3", "x = 2, x = 3"),  # nothing to read away
])
def test_the_stated_final_answer_is_read(text, expected):
    assert read(text).text == expected


def test_rejected_roots_and_justifications_are_noted():
    reading = read("x = 2 或 x = -1（舍去）")
    assert reading.notes == ["rejected: x = -1 (left out)"]
    assert "经检验符合题意" in read("所以 x = 2，经检验符合题意").notes[0]
    # Where the value is attained is a remark, not part of the answer.
    assert [value for _, _, value in read("最小值为 -1，当且仅当 x = 0 时取得").labels] == ["-1"]
    assert [value for _, _, value in read("the minimum value is -1, attained at x = 0").labels] == ["-1"]
    assert read("故函数的最小值为 -1，此时 x = 0").labels[0][2] == "-1"


@pytest.mark.parametrize("text, labels", [
    ("最大值为 2，最小值为 -1", [("max", "2"), ("min", "-1")]),
    ("max 2, min -1", [("max", "2"), ("min", "-1")]),
    ("the maximum value is 2 and the minimum value is -1", [("max", "2"), ("min", "-1")]),
    (r"f(x) 的单调递增区间为 (0, 1)，单调递减区间为 (1, +\infty)", [("increasing", "(0, 1)"), ("decreasing", r"(1, +\infty)")]),
    ("(0,1)上单调递增", [("increasing", "(0,1)")]),
    ("极小值 0，极大值 4", [("local-min", "0"), ("local-max", "4")]),
])
def test_labelled_answers(text, labels):
    assert [(key, value) for key, _, value in read(text).labels] == labels


def test_max_with_parentheses_is_a_function_not_a_label():
    assert read("max(a, b)").labels is None
    assert read(r"\max\{2, 3\}").labels is None


@pytest.mark.parametrize("text, polar", [
    ("是", "yes"), ("否", "no"), ("存在", "exists"), ("不存在", "not-exists"), ("Yes.", "yes"),
    (r"\text{DNE}", "not-exists"), ("有解", "has-solution"), ("x = 2", ""),
])
def test_yes_no_answers(text, polar):
    assert read(text).polar == polar


@pytest.mark.parametrize("text, head, branches", [
    (r"\begin{cases} x, & x \ge 0 \\ -x, & x < 0 \end{cases}", "", [(r"x \ge 0", "x"), ("x < 0", "-x")]),
    ("a_n = 3 (n = 1), 2^n (n ≥ 2)", "a_n", [("n = 1", "3"), (r"n \ge 2", "2^n")]),
    ("当 a ≤ 1 时，x > 1；当 a > 1 时，x > a", "", [(r"a \le 1", "x > 1"), ("a > 1", "x > a")]),
    (r"\begin{cases} 0, & x < 0 \\ 1, & \text{otherwise} \end{cases}", "", [("x < 0", "0"), (None, "1")]),
])
def test_piecewise_readings(text, head, branches):
    reading = read(text)
    assert (reading.head, reading.branches) == (head, branches)


def test_reading_is_bounded_on_long_hostile_text():
    for text in ("实" * 4999, "当 a 时, " * 600, "x," * 2400 + "或", "max 2, " * 700, "上" * 4000, "(0,1)上递增," * 400):
        started = time.monotonic()
        read(text[:5000])
        assert time.monotonic() - started < 1.0, text[:20]


# --- the meaning guard ---------------------------------------------------------------------------------

def test_the_guard_lists_its_words_in_chinese_and_english():
    known = meaning.known_words()
    assert {"递增", "递减", "increasing", "decreasing"} <= set(known["monotonicity"])
    assert {"最大", "最小", "maximum", "minimum"} <= set(known["extremum"])
    assert {"存在", "不存在", "exists", "does not exist"} <= set(known["existence"])


@pytest.mark.parametrize("pred, gold, group", [
    ("(0,1) 内递增", "(0,1) 内递减", "monotonicity"),
    ("存在", "不存在", "existence"),
    ("2 is the maximum", "2 is the minimum", "extremum"),
    ("odd", "even", "parity"),
])
def test_a_differing_meaning_word_is_found(pred, gold, group):
    assert meaning.difference(pred, gold)[0] == group


def test_a_word_on_one_side_only_is_not_a_difference():
    assert meaning.difference("最大值为 2", "2") is None
    assert meaning.difference("不存在", "does not exist") is None


@pytest.mark.parametrize("pred, gold", [
    ("(0, 1) 内递增", "(0, 1) 内递减"),
    ("最大值为 2", "2 is the minimum"),
    ("2 is the maximum", "2 is the minimum"),
])
def test_an_uncompared_meaning_word_makes_the_check_undecided(pred, gold):
    verdict = judge(pred, gold)
    assert verdict["equivalent"] is None
    assert verdict["method"] == "meaning-word"
    assert verdict["decisive"].startswith("word ")


def test_compared_labels_decide():
    verdict = judge("单调递增区间为 (0, 1)", "单调递减区间为 (0, 1)")
    assert verdict["equivalent"] is False and verdict["decisive"] == "label 单调递增区间 vs 单调递减区间"


# --- units in words ------------------------------------------------------------------------------------

def test_compound_amounts_are_exact():
    notes = []
    assert compound_amounts("3元5角", notes) == "(7/2)元"
    assert compound_amounts("2元5角3分") == "(253/100)元"
    assert compound_amounts("1小时30分钟") == "(3/2)小时"
    assert compound_amounts("5角3元") == "5角3元"  # not written largest first
    assert notes == ["3元5角 = 3.5元"]


def test_counting_words_and_currencies():
    assert known_dimensions_differ("count:个", "yuan")
    assert not known_dimensions_differ("count:个", "count:人")  # undecided, not different
    assert not known_dimensions_differ("yuan", "dollar")  # money without a fixed rate


@pytest.mark.parametrize("pred, gold, equivalent", [
    ("12个", "12元", False), ("12个", "12", True), ("3元5角", "3.5元", True), ("3元5角", "35角", True),
    ("3元5角", "3.05元", False), ("12个", "12人", None), ("12元", "12 dollars", None),
])
def test_units_in_words(pred, gold, equivalent):
    assert judge(pred, gold)["equivalent"] is equivalent
