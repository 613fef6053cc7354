"""The perturbation functions: each probe, determinism with a seed, the SymPy check, skips."""
import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from studies import probes
from studies.probes import computation_truth, derive

ANSWER = (
    "(1) Since $x = \\dfrac{6}{2}$,\n"
    "we get $3 \\cdot 4 = 12$.\n"
    "$a = 3$\n"
    "$b = 4$\n"
    "Therefore $x \\le 5$.\n"
    "Answer: $\\boxed{3}$"
)


def test_drop_final_answer_removes_the_boxed_line():
    derived = derive("drop-final-answer", ANSWER)
    assert "\\boxed" not in derived.text
    assert "Therefore $x \\le 5$." in derived.text
    assert derived.change["removed_line"] == 6


def test_drop_final_answer_falls_back_to_a_concluding_relation():
    derived = derive("drop-final-answer", "Work here.\nTherefore $x = 2$.")
    assert derived.text == "Work here."


def test_drop_final_answer_skips_answers_without_one():
    assert derive("drop-final-answer", "Some work.\nMore work, no conclusion.") is None
    assert derive("drop-final-answer", "Answer: 3") is None  # nothing would be left


def test_truncate_last_step_keeps_the_final_answer_and_cuts_the_step_before():
    derived = derive("truncate-last-step", ANSWER)
    assert "Therefore $x \\le 5$." not in derived.text
    assert derived.text.endswith("Answer: $\\boxed{3}$")


def test_truncate_last_step_without_final_answer_cuts_the_last_line():
    assert derive("truncate-last-step", "a\nb\nc").text == "a\nb"
    assert derive("truncate-last-step", "a\nb") is None  # too short
    assert derive("truncate-last-step", "Work\nmore\n(2)\nAnswer: 4") is None  # only a header before it


def test_arithmetic_slip_changes_a_correct_computation_into_a_wrong_one():
    derived = derive("arithmetic-slip", ANSWER, seed=1)
    assert derived is not None
    before, after = derived.change["before"], derived.change["after"]
    assert computation_truth(before) is True
    assert computation_truth(after) is False
    assert derived.text == ANSWER.replace(before, after, 1)


def test_arithmetic_slip_checks_with_the_safe_parser():
    assert computation_truth("3 \\cdot 4 = 12") is True
    assert computation_truth("\\dfrac{6}{2} = 3 = 1 + 2") is True
    assert computation_truth("2^3 = 9") is False
    assert computation_truth("x + 1 = 2") is None  # a variable: not a computation
    assert computation_truth("__import__('os') = 1") is None  # never evaluated
    assert computation_truth("3 < 4") is None


def test_arithmetic_slip_skips_answers_without_a_correct_computation():
    assert derive("arithmetic-slip", "Let $x = 2y$ and $3 + 4 = 8$.") is None  # the only one is already wrong
    assert derive("arithmetic-slip", "No numbers at all.") is None


def test_notation_swap_rewrites_fractions_relations_and_products():
    derived = derive("notation-swap", "$\\dfrac{1}{2} \\cdot 4 \\le \\frac{x+1}{3}$ and $a ≥ b$ and $2\\tfrac{1}{2}$")
    assert derived.text == "$1/2 \\times 4 ≤ (x+1)/3$ and $a \\ge b$ and $2(1/2)$"
    assert derived.change["swaps"]["\\frac -> /"] == 3


def test_notation_swap_leaves_left_and_nested_fractions_right():
    derived = derive("notation-swap", "$\\left( \\frac{\\frac{1}{2}}{3} \\right)^2$")
    assert derived.text == "$\\left( (1/2)/3 \\right)^2$"
    assert derive("notation-swap", "plain words only") is None


def test_reorder_swaps_only_independent_math_lines():
    derived = derive("reorder-independent-steps", ANSWER)
    assert "$b = 4$\n$a = 3$" in derived.text
    assert derived.change["swapped_lines"] == [3, 4]


@pytest.mark.parametrize("first,second", [
    ("$x = 3$", "$y = 2x$"),  # the second uses what the first defines
    ("$a = 1$", "so $b = 2$"),  # words
    ("$a = 1$", "$= 2$"),  # continues the line before
    ("$a = 1$", "∴ $b = 2$"),  # a connective
    ("$a = 1$", "$\\boxed{b = 2}$"),  # the final answer
    ("(1) $a = 1$", "$b = 2$"),  # a sub-question marker
])
def test_reorder_refuses_dependent_or_unclear_pairs(first, second):
    assert not probes.independent(first, second)
    assert derive("reorder-independent-steps", f"{first}\n{second}") is None


@pytest.mark.parametrize("name", list(probes.PROBES))
def test_each_probe_is_deterministic_for_a_seed(name):
    text = ANSWER + "\n$5 + 6 = 11$\n$7 \\times 2 = 14$"
    first, again = derive(name, text, seed=7), derive(name, text, seed=7)
    assert first is not None and first == again
    assert first.text != text


def test_the_seed_chooses_among_candidates():
    text = "\n".join(f"${i} + {i} = {2 * i}$" for i in range(1, 9))
    outcomes = {derive("arithmetic-slip", text, seed=s).text for s in range(10)}
    assert len(outcomes) > 1

MATHY = st.text(alphabet=list("0123456789+-*/=^(){}$\\ \nabxyfrcdotimesleg≤≥.,∴Answer:boxed"), max_size=300)


@hypothesis_settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=MATHY, seed=st.integers(min_value=0, max_value=10**6))
def test_probes_never_raise_and_never_return_the_same_text(text, seed):
    for name in probes.PROBES:
        derived = derive(name, text, seed)
        assert derived is None or (derived.text != text and derived.text.strip())


def test_the_route_of_probe_chunks_is_the_judge_queue(settings):
    from core.routing import route_task

    settings.JUDGE_TASK_QUEUE = "llm-queue"
    assert route_task("studies.tasks.run_probe_chunk", [], {}, {}) == {"queue": "llm-queue"}


def test_a_computation_may_name_what_it_computes():
    assert computation_truth("T = \\tfrac{2\\pi}{2} = \\pi") is True
    assert computation_truth("T = \\tfrac{2\\pi}{\\omega} = \\pi") is None  # a variable right of "="
    assert computation_truth("x = 3") is None  # one number: nothing computed
    derived = derive("arithmetic-slip", "So $T = \\tfrac{2\\pi}{2} = \\pi$.")
    assert computation_truth(derived.change["after"]) is False
