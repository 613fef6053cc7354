"""The engine in-process: normalisation, parsing, comparison rules, and that nothing is eval'd."""
import builtins
import json

import pytest

from equivalence import engine, normalize, parser
from equivalence.engine import judge

from .cases import load_cases


@pytest.mark.parametrize("text, expected", [
    (r"\dfrac{1}{2}", r"\frac{1}{2}"),
    (r"\left( x \right)", "( x )"),
    ("x ≥ 2", r"x \ge 2"),
    (r"x \geqslant 2", r"x \ge 2"),
    ("１２３", "123"),
    ("1{,}000", "1000"),
    (r"1\,000\,000", "1000000"),
    ("x²", "x^{2}"),
    ("30°", r"30 \degree"),
    ("50%", r"50 \%"),
    (r"$\frac12$.", r"\frac12"),
])
def test_normalisation(text, expected):
    assert normalize.normalize(text) == expected


def test_thousands_are_joined_only_outside_brackets():
    assert str(parser.parse_answer("1,000,000").value) == "1000000"
    assert isinstance(parser.parse_answer("(1,000)").value, parser.Bracket)


@pytest.mark.parametrize("text", [r"10^{10^{10}}", r"2^{2^{2^{2^{2^2}}}}", "100000!", r"\binom{10^{9}}{3}"])
def test_huge_numbers_are_built_without_computing_them(text):
    parsed = parser.parse_answer(text)  # returns at once: nothing is expanded
    assert parsed.value.free_symbols == set()


@pytest.mark.parametrize("pred, gold, mode, expected, method", [
    ("6.28318", r"2\pi", "default", True, "decimal-rounding"),
    (r"(A) \geq", "greater than or equal to", "default", None, "choice"),  # option A is ≤: a contradiction
    (r"(B) \geq", "greater than or equal to", "default", True, "relation"),
    ("6.28318", r"2\pi", "strict", False, "strict-decimal"),
    ("0.5", r"\frac12", "strict", True, "identical"),
    (r"\frac{1}{2^{98}}", r"\frac{1}{2^{99}}", "default", False, "exact"),
    (r"e^{\pi\sqrt{163}}", "640320^3+744", "default", False, "numeric"),
    ("(x+y+z+1)^{40}", "(x+y+z+1)^{40} + 10^{-30}", "default", False, "symbolic"),
    (r"e^{x}(x+1)^{30}", r"e^{x}(x+1)^{30}+10^{-40}e^x", "default", False, "numeric-points"),
    (r"\ln(x^2)", r"2\ln x", "default", None, "numeric-points"),
    ("5 cm", "50 mm", "default", True, "identical-units"),
    ("36 km/h", "10 m/s", "default", True, "identical-units"),
    ("5 cm", "5 mm", "default", False, "exact-units"),
    ("5 cm", "5 s", "default", False, "units"),
    (r"5 \text{ yuan}", r"5 \text{ dollars}", "default", None, "units"),
    (r"5\mathrm{~m}", "5.0", "default", True, "identical"),
    ("3 m/s", r"3\,\mathrm{m}/\mathrm{s}", "default", True, "identical"),
    (r"2\frac12", "1", "default", False, "exact"),
    ("(x-1)^{500}(x+1)^{500}", "(x^2-1)^{500}", "default", True, "numeric-points"),
    ("(x-1)^{100000}(x+1)^{100000}", "(x^2-1)^{100000}", "default", True, "numeric-points"),
    (r"1.50 \times 10^{-25} x", r"1.60 \times 10^{-25} x", "default", False, "numeric-points"),
    (r"10^{10^{10}}", r"10^{10^{10}}+1", "default", None, "huge"),
])
def test_rules(pred, gold, mode, expected, method):
    verdict = judge(pred, gold, mode, 5.0)
    assert (verdict["equivalent"], verdict["method"]) == (expected, method), verdict["explanation"]


def test_set_differences_name_every_point():
    verdict = judge("(1,2]", "[1,2)", "default", 5.0)
    assert verdict["equivalent"] is False
    assert "they differ on {1, 2}" in verdict["explanation"]


def test_i_is_a_variable_when_it_is_an_index():
    assert judge("i^2", "-1", "default", 5.0)["equivalent"] is True
    assert judge("x_i + i", "x_i + i", "default", 5.0)["equivalent"] is True
    assert parser.parse_answer("a_i + i").value.free_symbols == {parser.sp.Symbol("a_i", real=True), parser.sp.Symbol("i", real=True)}


def test_unknown_mode_and_non_strings_are_undecided_not_errors():
    assert judge("1", "1", "loose", 1.0)["method"] == "error"
    assert judge(1, "1", "default", 1.0)["method"] == "error"


def test_no_answer_text_reaches_eval_or_sympify(monkeypatch):
    """Run a slice of the case set with every string-evaluating entry point booby-trapped.

    ``parse_expr`` and ``sympify`` must never see a string at all. ``eval``/``exec`` are used
    by SymPy itself for code it generates (monomial arithmetic), so for them the trap fires
    when the code contains the answer being checked.
    """
    import sys

    import sympy
    import sympy.parsing.sympy_parser as sympy_parser

    sympify_module = sys.modules["sympy.core.sympify"]  # the package attribute is the function
    calls = []
    current = {"texts": []}

    def strict_trap(name, real):
        def trapped(*args, **kwargs):
            if args and isinstance(args[0], str):
                calls.append((name, args[0][:60]))
                raise AssertionError(f"{name} called on text")
            return real(*args, **kwargs)
        return trapped

    def code_trap(name, real):
        def trapped(code, *args, **kwargs):
            if isinstance(code, str) and any(text in code for text in current["texts"]):
                calls.append((name, code[:60]))
                raise AssertionError(f"{name} called on answer text")
            return real(code, *args, **kwargs)
        return trapped

    monkeypatch.setattr(builtins, "eval", code_trap("eval", builtins.eval))
    monkeypatch.setattr(builtins, "exec", code_trap("exec", builtins.exec))
    monkeypatch.setattr(sympify_module, "sympify", strict_trap("sympify", sympify_module.sympify))
    monkeypatch.setattr(sympy, "sympify", strict_trap("sympify", sympify_module.sympify))
    monkeypatch.setattr(sympy_parser, "parse_expr", strict_trap("parse_expr", sympy_parser.parse_expr))
    cases = load_cases()[::6] + [{"pred": "__import__('os').getcwd()", "gold": "1", "mode": "default"}]
    for case in cases:
        current["texts"] = [t for t in (case["pred"].strip(), case["gold"].strip()) if len(t) >= 3]
        result = judge(case["pred"], case["gold"], case["mode"], 5.0)
        assert result["method"] != "error", (case, result)
    assert calls == []


def test_verdict_is_json_serialisable():
    result = judge(r"\begin{pmatrix}1&2\\3&4\end{pmatrix}", "[[1,2],[3,4]]", "default", 5.0)
    assert json.loads(json.dumps(result))["equivalent"] is True
    assert engine.unwrap(r"so \boxed{\frac{1}{2}} is it") == r"\frac{1}{2}"


def test_long_solutions_are_checked_fast_including_the_extraction():
    """Issue 41: whole solutions up to 20,000 characters; only the extracted answer reaches SymPy.
    (Idle figures: median about 8 ms, p99 about 25 ms; the bounds here leave room for a loaded machine.)"""
    import statistics

    from equivalence import MAX_SOLUTION_CHARS, check_many

    endings = ["Final Answer: The final answer is $\\frac{{{n}}}{{7}}$. I hope it is correct.",
               "所以所求的值为 $\\frac{{{n}}}{{7}}$。", "Therefore, the required ratio is $\\frac{{{n}}}{{7}}$.",
               "答：$\\frac{{{n}}}{{7}}$", "So we get $\\boxed{{\\frac{{{n}}}{{7}}}}$.<|im_end|>\n<|im_start|>user\n$\\boxed{{99}}$"]
    body = "Substituting $x = 3$ gives $y = 12$, and $\\sqrt{2} \\cdot 5 = 7.07$ approximately.\n由题意可知 $a_1 = 2$，$q = 3$。\n"
    pairs = []
    for index in range(30):
        length = 2000 + index * 600
        text = (body * (length // len(body) + 1))[:length]
        text = text[: text.rfind("\n") + 1] + endings[index % len(endings)].format(n=index + 1)
        assert len(text) <= MAX_SOLUTION_CHARS
        pairs.append((text, f"{index + 1}/7"))
    verdicts = check_many(pairs)
    assert all(v.equivalent is True for v in verdicts), [(v.pred_answer, v.explanation) for v in verdicts if not v.equivalent]
    times = sorted(v.elapsed_ms for v in verdicts)
    assert statistics.median(times) < 100 and times[-1] < 1500, times
