"""Domains (issue 41, the audit): stated with the question or written with an answer, and every
comparison kept inside them; English one-sided claims ("decreasing for a < 0")."""
import pytest

from equivalence import check_equivalence, check_many
from equivalence.domains import DomainError, parse_domain
from equivalence.reading import answer_domain, read


def _text(domain):
    return {name: str(found.describe(name)) for name, found in domain.items()}


@pytest.mark.parametrize("text, expected", [
    (r"x \in (0, +\infty)", {"x": "x > 0"}),
    (r"x \in (0,1)", {"x": "x > 0, x < 1"}),
    (r"x \in [1, 3)", {"x": "x ≥ 1, x < 3"}),
    ("n ∈ ℕ*", {"n": "n ≥ 1, n integer"}),
    (r"n \in \mathbb{N}^{*}", {"n": "n ≥ 1, n integer"}),
    (r"n \in \mathbb{N}_{+}", {"n": "n ≥ 1, n integer"}),
    (r"n \in N^*", {"n": "n ≥ 1, n integer"}),
    ("n ∈ ℕ", {"n": "n ≥ 0, n integer"}),
    ("n 为正整数", {"n": "n ≥ 1, n integer"}),
    ("n 为自然数", {"n": "n ≥ 0, n integer"}),
    ("k 为整数", {"k": "k integer"}),
    ("n is a positive integer", {"n": "n ≥ 1, n integer"}),
    ("n is an integer", {"n": "n integer"}),
    (r"n \ge 2, n \in \mathbb{N}^*", {"n": "n ≥ 2, n integer"}),
    ("n ≥ 2 且 n 为正整数", {"n": "n ≥ 2, n integer"}),
    (r"n \ge 2 and n is a positive integer", {"n": "n ≥ 2, n integer"}),
    (r"x \in (0, +\infty), a \in \mathbb{R}", {"x": "x > 0", "a": "a real"}),
])
def test_the_domain_spellings_of_the_issue(text, expected):
    assert _text(parse_domain(text)) == expected


@pytest.mark.parametrize("text", ["x < 0 or x > 1", "x 为偶数", r"x \in (1, 0)", r"x \in \{1, 2\}", "n > a"])
def test_a_domain_not_read_is_an_error(text):
    with pytest.raises(DomainError):
        parse_domain(text)


@pytest.mark.parametrize("text, rest, domain", [
    (r"C = \frac{\sqrt{n(n-1)}}{n-1}, n \ge 2", r"C = \frac{\sqrt{n(n-1)}}{n-1}", r"n \ge 2"),
    (r"C = \frac{\sqrt{n(n-1)}}{n-1} (n \ge 2)", r"C = \frac{\sqrt{n(n-1)}}{n-1}", r"n \ge 2"),
    (r"C = \frac{\sqrt{n(n-1)}}{n-1},其中 n\in \mathbb{N}*", r"C = \frac{\sqrt{n(n-1)}}{n-1}", r"n\in \mathbb{N}*"),
    (r"a_n = 2n - 1 (n \in \mathbb{N}^{*})", "a_n = 2n - 1", r"n \in \mathbb{N}^{*}"),
    (r"\sqrt{x^2}, x > 0", r"\sqrt{x^2}", "x > 0"),
])
def test_a_condition_after_the_answer_is_its_domain(text, rest, domain):
    assert answer_domain(text) == (rest, domain)


@pytest.mark.parametrize("text", [
    "x = 1, y = 2",  # two assignments
    r"x = 1, x \ge 2",  # a second answer about the assigned unknown
    "x > 1, x < 3",  # conditions only
    "x=1 or x>=2",
    "(0, 1)",
    r"(1, 2), x > 0",  # an interval, not an expression
    r"2, n \ge 2",  # n is not used
    r"x = k\pi, k \in \mathbb{Z}",  # a solution family's declaration
    r"x = 2, n = 3",
    r"x^2 - 1 (x = 1)",  # = is not a domain
])
def test_answers_that_are_several_values_or_conditions_are_not_read_as_a_domain(text):
    assert answer_domain(text) == (text, "")
    assert read(text).domain == ""


def test_the_gold_of_the_issue_with_its_domain_written_in():
    pred = r"C = \sqrt{\frac{n}{n-1}}"
    golds = [r"C = \frac{\sqrt{n(n-1)}}{n-1}, n \ge 2", r"C = \frac{\sqrt{n(n-1)}}{n-1} (n \ge 2)",
             r"C = \frac{\sqrt{n(n-1)}}{n-1}，其中 n∈ℕ*", r"C = \frac{\sqrt{n(n-1)}}{n-1}（n ∈ ℕ*）"]
    verdicts = check_many([(pred, gold) for gold in golds] + [(gold, pred) for gold in golds])
    for verdict in verdicts:
        assert verdict.equivalent is True, verdict.explanation
        assert "states the domain n ≥ " in verdict.explanation
        assert verdict.decisive.startswith("domain n ≥ ")
    wrong = check_equivalence(r"C = \frac{\sqrt{n}}{n-1}", golds[0])
    assert wrong.equivalent is False and "n ≥ 2" in wrong.explanation


def test_several_values_and_systems_keep_their_reading():
    assert check_equivalence("x = 1, y = 2", "(1, 2)").equivalent is True
    assert check_equivalence("x = 1, y = 2", "(2, 1)").equivalent is False
    assert check_equivalence(r"x = 1, x \ge 2", "x = 1").equivalent is not True
    assert check_equivalence("x=1 or x>=2", "x = 1").equivalent is not True


def test_two_answers_stating_different_domains_are_undecided():
    verdict = check_equivalence(r"\sqrt{x^2}, x > 0", r"x, x > 1")
    assert verdict.equivalent is None and verdict.method == "domain"
    assert "x > 0 vs x > 1" in verdict.explanation
    same = check_equivalence(r"\sqrt{x^2}, x > 0", r"x (x > 0)")
    assert same.equivalent is True


@pytest.mark.parametrize("pred, gold, equivalent", [
    ("x^2 = 4", "x = 2", True),
    ("x = 2", "x^2 = 4", True),
    ("x^2 = 4", "x = -2", False),
    ("x^2 > 1", "x > 1", True),
    ("x > 1", "x^2 > 1", True),
    ("x^2 > 1", r"(1, +\infty)", True),
    ("x^2 > 1", "x > 2", False),
    (r"\{x | x^2=4\}", r"\{2\}", True),
    (r"\{2\}", r"\{x | x^2=4\}", True),
    (r"\{x | x^2=4\}", r"\{-2, 2\}", False),
    # values written out stay as written: a root outside the domain that was not rejected counts
    (r"x = \pm 2", "x^2 = 4", False),
    (r"\{-2, 2\}", r"\{x | x^2=4\}", False),
])
def test_sets_and_equations_are_compared_inside_the_stated_domain(pred, gold, equivalent):
    verdict = check_equivalence(pred, gold, domain="x > 0")
    assert verdict.equivalent is equivalent, verdict.explanation
    assert "stated domain (x > 0)" in verdict.explanation
    assert verdict.decisive == "domain x > 0"
    if equivalent:  # without the domain they differ
        assert check_equivalence(pred, gold).equivalent is False


def test_no_point_in_the_domain_is_not_a_match():
    verdict = check_equivalence("(-2, -1)", "x < -3", domain="x > 0")
    assert verdict.equivalent is None and "neither answer has a point" in verdict.explanation
    outside = check_equivalence("x^2 = 4", "x = 2", domain=r"x \in (0, 1)")
    assert outside.equivalent is False and "∅ vs {2}" in outside.explanation


def test_integer_domains_compare_sets_of_integers():
    assert check_equivalence("n > 2.5", r"n \ge 3", domain="n ∈ ℕ*").equivalent is True
    verdict = check_equivalence("n > 2.5", r"n \ge 2", domain="n 为正整数")
    assert verdict.equivalent is False and "{2}" in verdict.explanation


def test_the_issue_spellings_reach_the_check():
    for domain in [r"n \in \mathbb{N}^{*}", "n ∈ ℕ*", "n 为正整数", "n is a positive integer"]:
        verdict = check_equivalence(r"\sqrt{\frac{n}{n-1}}", r"\frac{\sqrt{n(n-1)}}{n-1}", domain=domain + r", n \ge 2")
        assert verdict.equivalent is True and verdict.decisive == "domain n ≥ 2, n integer", (domain, verdict.explanation)
    interval = check_equivalence("x^2 = 9", "x = 3", domain=r"x \in (0, +\infty)")
    assert interval.equivalent is True


# --- English one-sided claims ---------------------------------------------------------------------

@pytest.mark.parametrize("claim, condition, word", [
    ("decreasing for a < 0", "a < 0", "decreasing"),
    ("increasing when a > 1", "a > 1", "increasing"),
    ("increasing if t < 1", "t < 1", "increasing"),
    ("f is decreasing when b > 2", "b > 2", "decreasing"),
    ("f(x) increases if a > 1", "a > 1", "increases"),  # the word as written
    ("a<0 时单调递减", "a < 0", "单调递减"),  # the Chinese twin
])
def test_a_claim_under_a_condition_is_never_equivalent_to_the_condition(claim, condition, word):
    for pred, gold in ((claim, condition), (condition, claim)):
        verdict = check_equivalence(pred, gold)
        assert verdict.equivalent is None and verdict.method == "meaning-word", verdict.explanation
        assert verdict.decisive == f"word {word}"
        assert "w·h·e·n" not in verdict.pred_parsed + verdict.gold_parsed


@pytest.mark.parametrize("labelled, value", [
    ("increasing on (0,1)", "(0,1)"),
    ("the increasing interval is (0,1)", "(0,1)"),
    ("decreasing on (-1, 2)", "(-1, 2)"),
])
def test_a_word_that_labels_the_value_stays_a_label(labelled, value):
    assert check_equivalence(labelled, value).equivalent is True
    assert check_equivalence(value, labelled).equivalent is True


def test_claims_under_the_same_condition_compare_their_words():
    assert check_equivalence("increasing when a > 1", "decreasing when a > 1").equivalent is False
    assert check_equivalence("increasing when a > 1", "when a > 1, increasing").equivalent is True
