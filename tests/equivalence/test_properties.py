"""Property tests: random and hostile strings never raise, never overrun, never execute."""
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from equivalence import check_equivalence, check_many, extract_answer
from equivalence.worker import GRACE_SECONDS

TIMEOUT = 0.8
LIMIT_MS = (TIMEOUT + GRACE_SECONDS) * 1000 + 150  # the kill itself and reaping take a few ms

MATH_ALPHABET = list("0123456789+-*/^_()[]{}|,.;=<>!'xyzaeinkpC ") + [
    "\\frac", "\\sqrt", "\\pi", "\\infty", "\\le", "\\ge", "\\cup", "\\{", "\\}", "\\left(", "\\right)",
    "\\sin", "\\ln", "\\log_", "\\pm", "\\%", "^\\circ", "\\text{ or }", "\\begin{pmatrix}", "\\end{pmatrix}",
    "&", "\\\\", "\\cdot", "\\times", "\\boxed{", "$", "√", "≥", "，", "答案", "i", "e", "10^{", "!",
]
math_like = st.lists(st.sampled_from(MATH_ALPHABET), max_size=30).map("".join)
any_text = st.text(max_size=60)
answers = st.one_of(math_like, any_text)

SENTINEL = Path("/tmp/realmath_equivalence_pwned")
HOSTILE = [
    "__import__('os').system('touch /tmp/realmath_equivalence_pwned')",
    "eval(\"__import__('os').system('touch /tmp/realmath_equivalence_pwned')\")",
    "exec('import os; os.system(\"touch /tmp/realmath_equivalence_pwned\")')",
    "().__class__.__bases__[0].__subclasses__()",
    "lambda: open('/tmp/realmath_equivalence_pwned', 'w')",
    "Symbol('x').__class__.__init__.__globals__['os'].system('touch /tmp/realmath_equivalence_pwned')",
    "x; import os; os.system('touch /tmp/realmath_equivalence_pwned')",
    "\\text{__import__('os').system('touch /tmp/realmath_equivalence_pwned')}",
    "10^{10^{10^{10^{10}}}}", "9^{9^{9^{9^{9^{9}}}}}", "2^{2^{2^{2^{2^{2^{2}}}}}} - 1", "(10^{10^{10}})!",
    "\\ln(\\ln(\\ln(\\ln(\\ln(\\ln(\\ln(\\ln(x))))))))", "\\binom{10^{100}}{10^{50}}", "x^{10^{100}}",
    "(x+y+z+w+1)^{200}", "\\sqrt{\\sqrt{\\sqrt{\\sqrt{\\sqrt{2^{100000}+1}}}}}", "{" * 3000 + "1" + "}" * 3000,
    "(" * 500 + "1" + ")" * 500, "\\frac{" * 200 + "1" + "}{2}" * 200, "1" * 4999, "x" * 4999,
    "\\sin(" * 300 + "x" + ")" * 300, "\\begin{pmatrix}" + "&".join(["x"] * 400) + "\\end{pmatrix}",
    "\x00\x01\x02", "\ud7ff\ufffd", "∞∞∞∞", "\\", "$$", "\\boxed{", "}", "\\left(", "1/0", "0^{-1}", "\\log_1 2",
    "\\{x | \\{y | y > x\\}\\}", "\\frac{1}{0}", "0/0", "(-1)^{1/3}", "\\sqrt{-1}^{\\sqrt{-1}}", "e^{e^{e^{e^{e^{10}}}}}",
    # solution families, matrices and units pushed to their limits
    "[k\\pi, k\\pi + 10^{10^{10}}], k \\in \\mathbb{Z}", "x = (-1)^{k^{k}} + k\\pi, k \\in \\mathbb{Z}",
    "x = k \\cdot 2^{10^{6}}\\pi \\text{ or } x = k, k \\in \\mathbb{Z}", "x = \\frac{k\\pi}{10^{-100}}, k \\in \\mathbb{Z}",
    "[k^{2}, k^{2} + 1], k \\in \\mathbb{Z}", "x = k\\pi + n, k, n \\in \\mathbb{Z}", "k \\in \\mathbb{Z}",
    "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}^{10^{10}}", "\\begin{pmatrix}0&0\\\\0&0\\end{pmatrix}^{-1}",
    "\\begin{pmatrix}" + "&".join(["x"] * 9) + "\\end{pmatrix}^T \\begin{pmatrix}" + "&".join(["x"] * 9) + "\\end{pmatrix}",
    "5\\mathrm{~m}/\\mathrm{s}^{2} / \\mathrm{kg}", "10^{10^{10}} km", "$\\boxed{1}$ and $\\boxed{" * 30,
]


def _assert_sound(verdict, started):
    assert verdict.equivalent in (True, False, None)
    assert isinstance(verdict.method, str) and isinstance(verdict.explanation, str)
    assert verdict.elapsed_ms <= LIMIT_MS, (verdict.method, verdict.elapsed_ms)
    assert time.monotonic() - started < TIMEOUT + GRACE_SECONDS + 30  # even with a worker restart


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pred=answers, gold=answers, mode=st.sampled_from(["default", "strict"]))
def test_random_strings_never_raise_or_overrun(pred, gold, mode):
    started = time.monotonic()
    _assert_sound(check_equivalence(pred, gold, mode=mode, timeout=TIMEOUT), started)


@settings(max_examples=60, deadline=None)
@given(text=st.one_of(any_text, math_like, st.text(alphabet="\\boxed{}$答案故所以 answeris(ABCDEF)≥≤=<>C0123456789", max_size=80)),
       kind=st.sampled_from([None, "bound", "relation"]))
def test_extraction_never_raises(text, kind):
    found = extract_answer(text, kind=kind)
    assert found is None or isinstance(found, str)


@settings(max_examples=40, deadline=None)
@given(expr=math_like)
def test_an_answer_is_equivalent_to_itself_or_undecided(expr):
    verdict = check_equivalence(expr, expr, timeout=TIMEOUT)
    assert verdict.equivalent is not False


def test_hostile_strings_are_never_executed_and_never_overrun():
    SENTINEL.unlink(missing_ok=True)
    pairs = [(text, "1") for text in HOSTILE] + [("1", text) for text in HOSTILE] + [(text, text + "+1") for text in HOSTILE[:20]]
    started = time.monotonic()
    verdicts = check_many(pairs, timeout=TIMEOUT)
    for verdict in verdicts:
        _assert_sound(verdict, started)
    assert not SENTINEL.exists()
    # A power tower against itself plus one can never be called equal.
    assert all(v.equivalent is not True for v in verdicts[2 * len(HOSTILE):])
