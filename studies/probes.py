"""Perturbation probes: pure functions that derive a changed answer from a real one.

Invariants:

- Pure and deterministic: `derive(name, text, seed)` depends on nothing but its arguments (the
  random choices come from a generator seeded by probe name, seed and the text's hash). No
  database, no Django.
- A probe that cannot apply to an answer returns None (the run counts the answer as skipped,
  never in n). A derived text always differs from the original.
- Answer text is never evaluated: arithmetic-slip reads computation lines with the project's
  own parser (`equivalence.parse_answer`, no eval/sympify/parse_expr) and
  compares the parsed numbers with SymPy.

Sensitivity probes (a fair judge lowers the score): drop-final-answer, arithmetic-slip,
truncate-last-step. Invariance probes (a fair judge keeps the score): notation-swap,
reorder-independent-steps. The exact rules are in each function's docstring and docs/studies.md.
"""
from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass, field

import sympy as sp
from django.utils.translation import gettext_lazy

from equivalence import Relation, parse_answer

SENSITIVITY = "sensitivity"
INVARIANCE = "invariance"
FAMILY_LABELS = {SENSITIVITY: gettext_lazy("sensitivity"), INVARIANCE: gettext_lazy("invariance")}
MAX_COMPUTATION_CHARS = 200


@dataclass(frozen=True)
class Derived:
    """A derived answer and what was changed (shown on the probe page)."""

    text: str
    change: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Probe:
    name: str
    family: str  # sensitivity | invariance
    label: str
    help: str
    function: object

    @property
    def family_label(self):
        return FAMILY_LABELS.get(self.family, self.family)

    def apply(self, text: str, seed: int = 0) -> Derived | None:
        derived = self.function(text or "", _rng(self.name, text or "", seed))
        if derived is None or derived.text == (text or "") or not derived.text.strip():
            return None
        return derived


def _rng(name, text, seed):
    digest = hashlib.sha256((text or "").encode("utf-8")).hexdigest()
    return random.Random(f"{name}:{int(seed)}:{digest}")


# --- lines and final answers ----------------------------------------------------------------

_FINAL_WORDS = re.compile(
    r"^\s*(?:final\s+answer|the\s+answer|answer|in\s+conclusion|in\s+summary|to\s+sum\s+up|综上|答)\b",
    re.IGNORECASE,
)
_CONCLUSION_WORDS = re.compile(r"^\s*(?:therefore|thus|hence|so|∴|\\therefore|所以|因此)", re.IGNORECASE)
_RELATION = re.compile(r"=|<|>|≤|≥|\\le(?![a-zA-Z])|\\ge(?![a-zA-Z])|\\leq|\\geq|\\in(?![a-zA-Z])|\\neq|≠")
_HEADER = re.compile(r"^\s*(?:\(\d+\)|\d+[.)]|[①-⑩]|solution:?|proof:?|解:?|证明:?)\s*$", re.IGNORECASE)


def _nonempty(lines):
    return [i for i, line in enumerate(lines) if line.strip()]


def final_answer_line(lines) -> int | None:
    """Index of the line stating the final answer, or None.

    The last line holding ``\\boxed``; else the last line starting "Answer", "Final answer",
    "In conclusion"...; else the last non-empty line when it starts with a conclusion word
    (Therefore, Thus, Hence, So, ∴) and states a relation.
    """
    boxed = [i for i, line in enumerate(lines) if "\\boxed" in line]
    if boxed:
        return boxed[-1]
    worded = [i for i, line in enumerate(lines) if _FINAL_WORDS.match(line)]
    if worded:
        return worded[-1]
    filled = _nonempty(lines)
    if filled:
        last = lines[filled[-1]]
        if _CONCLUSION_WORDS.match(last) and _RELATION.search(last):
            return filled[-1]
    return None


def _without_line(lines, index):
    return "\n".join(lines[:index] + lines[index + 1:]).rstrip() + ("\n" if lines and lines[-1] == "" else "")


def drop_final_answer(text, rng):
    """Remove the line stating the final answer (see `final_answer_line`); skip when none is
    found or nothing else would be left."""
    lines = text.split("\n")
    index = final_answer_line(lines)
    if index is None or len(_nonempty(lines)) < 2:
        return None
    return Derived(_without_line(lines, index), {"removed_line": index + 1, "removed": lines[index]})


def truncate_last_step(text, rng):
    """Cut the last step of the working. When the answer ends with its final-answer line, the
    non-empty line just before it goes (the answer keeps its final answer but loses the step that
    reaches it); otherwise the last non-empty line goes. Skips answers with fewer than three
    non-empty lines, and a step that is only a header such as "(2)"."""
    lines = text.split("\n")
    filled = _nonempty(lines)
    if len(filled) < 3:
        return None
    final = final_answer_line(lines)
    index = filled[-2] if final == filled[-1] else filled[-1]
    if _HEADER.match(lines[index]):
        return None
    return Derived(_without_line(lines, index), {"removed_line": index + 1, "removed": lines[index]})


# --- arithmetic slip --------------------------------------------------------------------------

_MATH_SEGMENT = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.DOTALL)
_ALLOWED_COMMANDS = re.compile(r"\\(?:d|t)?frac|\\cdot|\\times|\\div|\\left|\\right|\\sqrt|\\pi(?![a-zA-Z])|\\,|\\;|\\!")
_NUMBER = re.compile(r"(?<![\d.])\d+(?:\.\d+)?(?![\d.])")
_PLAIN_ARITHMETIC = re.compile(r"^[\d\s.+\-*/×·÷=()^]+$")


def _segments(text):
    """(start, end) spans of the math in `text`: $...$, $$...$$, \\(...\\), \\[...\\], and whole
    lines that are plain arithmetic without dollar signs."""
    spans = []
    for match in _MATH_SEGMENT.finditer(text):
        group = next(g for g in range(1, 5) if match.group(g) is not None)
        spans.append((match.start(group), match.end(group)))
    offset = 0
    for line in text.split("\n"):
        if "$" not in line and "=" in line and _PLAIN_ARITHMETIC.match(line.strip() or "x"):
            start = offset + len(line) - len(line.lstrip())
            spans.append((start, start + len(line.strip())))
        offset += len(line) + 1
    return sorted(set(spans))


def computation_truth(segment) -> bool | None:
    """True/False when `segment` is a computation: a chain of equalities whose operands are all
    numbers (read by the safe parser, compared exactly with SymPy), except that the first one may
    name what is computed (``T = \\dfrac{2\\pi}{2} = \\pi``); None when it is not such a line.
    Right of the first "=" only numbers, operators, ``\\frac``, ``\\cdot``, ``\\times``,
    ``\\div``, ``\\sqrt`` and ``\\pi`` may appear."""
    if "=" not in segment or len(segment) > MAX_COMPUTATION_CHARS:
        return None
    tail = segment.split("=", 1)[1]
    if re.search(r"[A-Za-z]", _ALLOWED_COMMANDS.sub(" ", tail)):
        return None  # a variable or another command right of "=": not a computation
    if not _NUMBER.search(tail):
        return None
    try:
        value = parse_answer(segment).value
    except Exception:  # unreadable math is simply not a computation line
        return None
    if not isinstance(value, Relation) or any(op != "=" for op in value.ops):
        return None
    try:
        numeric = [isinstance(o, sp.Basic) and bool(o.is_number) and bool(o.is_finite) for o in value.operands]
        if not all(numeric[1:]):
            return None
        operands = [o for o, is_number in zip(value.operands, numeric) if is_number]
        if len(operands) < 2:
            return None
        return all(sp.simplify(a - operands[0]) == 0 for a in operands[1:])
    except Exception:
        return None


def _slipped(number, rng):
    if "." in number:
        whole, decimals = number.split(".")
        last = int(decimals[-1])
        new_last = (last + rng.choice([1, 2, 3])) % 10
        return f"{whole}.{decimals[:-1]}{new_last}"
    value = int(number)
    step = rng.choice([1, 2, 3])
    return str(value + step if value < step or rng.random() < 0.5 else value - step)


def arithmetic_slip(text, rng):
    """Change one number in one computation line so that the line turns false.

    A computation line is a math segment that the safe parser reads as a chain of equalities
    between numbers (``3 \\cdot 4 = 12``, ``\\dfrac{6}{2} = 3``, ``T = \\dfrac{2\\pi}{2} = \\pi``;
    see `computation_truth`) and that SymPy finds true.
    One of its numbers is moved by 1 to 3 (the last digit of a decimal); the changed segment must
    read as a false equality. Skips answers without such a line.
    """
    candidates = []
    for start, end in _segments(text):
        segment = text[start:end]
        if computation_truth(segment) is not True:
            continue
        for number in _NUMBER.finditer(segment):
            candidates.append((start, end, number.start(), number.end()))
    rng.shuffle(candidates)
    for start, end, n_start, n_end in candidates:
        segment = text[start:end]
        old = segment[n_start:n_end]
        new = _slipped(old, rng)
        changed = segment[:n_start] + new + segment[n_end:]
        if new != old and computation_truth(changed) is False:
            derived = text[:start] + changed + text[end:]
            line = text.count("\n", 0, start) + 1
            return Derived(derived, {"line": line, "before": segment, "after": changed, "from": old, "to": new})
    return None


# --- notation swap -------------------------------------------------------------------------

_FRAC = re.compile(r"\\(?:d|t)?frac\s*\{")
_SIMPLE_SWAPS = [
    (re.compile(r"\\leq?(?![a-zA-Z])"), "≤"),
    (re.compile(r"\\geq?(?![a-zA-Z])"), "≥"),
    (re.compile("≤"), r"\\le"),
    (re.compile("≥"), r"\\ge"),
    (re.compile(r"\\cdot(?![a-zA-Z])"), r"\\times"),
    (re.compile(r"\\times(?![a-zA-Z])"), r"\\cdot"),
]
_SWAP = re.compile("|".join(f"({pattern.pattern})" for pattern, _ in _SIMPLE_SWAPS))
_NEUTRAL_COMMAND = re.compile(r"\\(?:cdot|times|div|pm|mp|le|ge|leq|geq|ne|neq|lt|gt|right|quad|qquad|,|;)(?![a-zA-Z])")
_NEUTRAL_BEFORE = re.compile(r"\\(?:cdot|times|div|pm|mp|le|ge|leq|geq|ne|neq|lt|gt|left|quad|qquad)$")
_ATOM = re.compile(r"[A-Za-z0-9.]+|\\[A-Za-z]+|\\sqrt\{[^{}]*\}")


def _group(text, index):
    """The brace group opening at text[index] == "{": (content, index after it) or None."""
    depth = 0
    for position in range(index, len(text)):
        if text[position] == "{":
            depth += 1
        elif text[position] == "}":
            depth -= 1
            if depth == 0:
                return text[index + 1:position], position + 1
    return None


def _fractions_to_slashes(text):
    out, position, count = [], 0, 0
    while True:
        match = _FRAC.search(text, position)
        if match is None:
            out.append(text[position:])
            return "".join(out), count
        first = _group(text, match.end() - 1)
        second = _group(text, first[1]) if first and first[1] < len(text) and text[first[1]] == "{" else None
        if first is None or second is None:
            out.append(text[position:match.end()])
            position = match.end()
            continue
        numerator, _ = _fractions_to_slashes(first[0])
        denominator, _ = _fractions_to_slashes(second[0])
        wrap = lambda part: part.strip() if _ATOM.fullmatch(part.strip()) else f"({part.strip()})"  # noqa: E731
        slash = f"{wrap(numerator)}/{wrap(denominator)}"
        head = text[:match.start()].rstrip()
        before = "" if _NEUTRAL_BEFORE.search(head) else head[-1:]
        rest = text[second[1]:].lstrip()
        after = rest[:1]
        if after == "\\" and _NEUTRAL_COMMAND.match(rest):
            after = ""  # an operator, a relation or a closing \right: no precedence question
        if (before and (before.isalnum() or before in "})]^_/")) or (after and (after.isalnum() or after in "^_(\\")):
            slash = f"({slash})"
        out.append(text[position:match.start()])
        out.append(slash)
        position, count = second[1], count + 1


def notation_swap(text, rng):
    """Write the same mathematics in another notation: ``\\dfrac{a}{b}`` / ``\\frac`` /
    ``\\tfrac`` become ``a/b`` (parenthesised where precedence needs it), ``≤``/``≥`` and
    ``\\le``/``\\ge`` (``\\leq``/``\\geq``) swap, ``\\cdot`` and ``\\times`` swap. Every
    applicable swap is made. Skips answers with none of these notations."""
    swapped, fractions = _fractions_to_slashes(text)
    counts = {"fractions": fractions}

    def swap(match):
        for index, (_, replacement) in enumerate(_SIMPLE_SWAPS):
            if match.group(index + 1) is not None:
                counts[str(index)] = counts.get(str(index), 0) + 1
                new = replacement.replace("\\\\", "\\")
                following = match.string[match.end():match.end() + 1]
                return new + " " if new.startswith("\\") and following.isalnum() else new
        return match.group(0)

    swapped = _SWAP.sub(swap, swapped)
    names = ["\\le -> ≤", "\\ge -> ≥", "≤ -> \\le", "≥ -> \\ge", "\\cdot -> \\times", "\\times -> \\cdot"]
    change = {"\\frac -> /": fractions} if fractions else {}
    change.update({names[int(k)]: v for k, v in counts.items() if k != "fractions"})
    return Derived(swapped, {"swaps": change}) if change else None


# --- reorder independent steps -------------------------------------------------------------

_CONNECTIVES = re.compile(
    r"∴|∵|⇒|→|\\Rightarrow|\\Leftrightarrow|\\implies|\\therefore|\\because|\\boxed|\\to(?![a-zA-Z])",
)
_FUNCTIONS = re.compile(r"\\?(?:sin|cos|tan|cot|ln|log|exp|sqrt|min|max)(?![a-zA-Z])")
_GREEK = re.compile(r"\\(alpha|beta|gamma|delta|theta|lambda|mu|omega|varphi|phi|varepsilon|epsilon|sigma|rho|tau)(?![a-zA-Z])")
_DELIMITERS = re.compile(r"\$|\\\(|\\\)|\\\[|\\\]")
_LEADING_OPERATOR = re.compile(r"^\s*(?:[=+\-<>*/×·≤≥]|\\(?:le|ge|leq|geq|cdot|times)(?![a-zA-Z]))")


def _math_only(line):
    """The line without delimiters when it is only mathematics stating a relation, else None."""
    if _CONNECTIVES.search(line) or _HEADER.match(line) or _FINAL_WORDS.match(line):
        return None
    if re.match(r"^\s*(?:\(\d+\)|\d+[.)]|[①-⑩])", line):
        return None  # a sub-question marker starts here
    body = _DELIMITERS.sub(" ", line).strip()
    if not body or not _RELATION.search(body) or _LEADING_OPERATOR.match(body) or body.endswith(("=", ",", "+", "-")):
        return None
    words = _FUNCTIONS.sub(" ", _GREEK.sub(" ", body))
    words = re.sub(r"\\[A-Za-z]+", " ", words)
    if re.search(r"[A-Za-z]{2,}", words) or re.search(r"[^\x00-\x7f≤≥≠π√°]", words):
        return None  # prose, words or other scripts: the order may carry meaning
    return body


def _identifiers(body):
    names = set(_GREEK.findall(body))
    plain = re.sub(r"\\[A-Za-z]+", " ", _FUNCTIONS.sub(" ", _GREEK.sub(" ", body)))
    return names | set(re.findall(r"[A-Za-z]", plain))


def _defined(body):
    left = body.split("=", 1)[0] if "=" in body else ""
    return _identifiers(left)


def independent(first, second) -> bool:
    """Whether two adjacent lines may swap places (the conservative safety rule).

    Both lines are pure mathematics stating a relation (no words, no connectives such as ∴,
    ⇒, \\therefore, no \\boxed, no final-answer wording, no sub-question marker, not starting
    with an operator that continues the line before, not ending mid-expression), and neither
    line uses an identifier that the other one defines (the letters left of its first "=").
    """
    a, b = _math_only(first), _math_only(second)
    if a is None or b is None or a == b:
        return False
    return not (_defined(a) & _identifiers(b)) and not (_defined(b) & _identifiers(a))


def reorder_independent_steps(text, rng):
    """Swap two adjacent lines that `independent` finds safe to swap (seeded choice among them).
    Skips answers without such a pair."""
    lines = text.split("\n")
    pairs = [i for i in range(len(lines) - 1) if independent(lines[i], lines[i + 1])]
    if not pairs:
        return None
    i = rng.choice(pairs)
    lines[i], lines[i + 1] = lines[i + 1], lines[i]
    return Derived("\n".join(lines), {"swapped_lines": [i + 1, i + 2]})


PROBES = {
    probe.name: probe
    for probe in (
        Probe("drop-final-answer", SENSITIVITY, gettext_lazy("Drop the final answer"),
              gettext_lazy("The line stating the final answer is removed."), drop_final_answer),
        Probe("arithmetic-slip", SENSITIVITY, gettext_lazy("Arithmetic slip"),
              gettext_lazy("One number of a correct computation line is changed so that the line is false (checked with SymPy)."),
              arithmetic_slip),
        Probe("truncate-last-step", SENSITIVITY, gettext_lazy("Truncate the last step"),
              gettext_lazy("The last step of the working is cut."), truncate_last_step),
        Probe("notation-swap", INVARIANCE, gettext_lazy("Notation swap"),
              gettext_lazy("The same mathematics in another notation (\\dfrac to /, ≤ and \\le, \\cdot and \\times)."), notation_swap),
        Probe("reorder-independent-steps", INVARIANCE, gettext_lazy("Reorder independent steps"),
              gettext_lazy("Two adjacent lines that do not depend on each other swap places."), reorder_independent_steps),
    )
}
RAW_OCR = "raw-ocr"  # not a probe: the raw OCR text of a scanned answer, judged for attribution


def derive(name: str, text: str, seed: int = 0) -> Derived | None:
    """The derived answer of probe `name` on `text` with `seed`, or None when it does not apply."""
    return PROBES[name].apply(text, seed)
