"""
Default prompt templates of the judge kinds, and how every template is filled (generation's
templates too: grading/generation/prompts.py).

Templates use ``{{ name }}`` placeholders, filled in one pass (text put in is never read again
as a template, so student text containing braces is harmless). The wording is ours; the
contracts they follow (what each judge sees and must answer) are in docs/judges.md.
"""
import re

PLACEHOLDER = re.compile(r"\{\{\s*([a-z_]+)\s*\}\}")

VARIABLES = {
    "problem": "the problem statement",
    "reference": "the reference solution with its cumulative rubric markers",
    "response": "the student's (or model's) answer",
    "full_score": "the full score of the problem",
    "gold_answer": "the correct final answer (IneqMath)",
    "question_kind": "rubric, bound or relation",
    "choices": "the answer options of a relation problem, one per line",
    "extracted_answer": "the final answer found in the response",
    "response_tail": "the last lines of the response",
    "answer_format": "how the answer should end (generation)",
    "examples": "the few-shot calibration examples with their gold scores (few-shot strategy)",
}


def render(template, values):
    """Fill the placeholders of `template` from `values`; unknown names stay as written."""

    def fill(match):
        name = match.group(1)
        return str(values[name]) if name in values else match.group(0)

    return PLACEHOLDER.sub(fill, template or "")


def unknown_placeholders(template):
    return sorted({name for name in PLACEHOLDER.findall(template or "") if name not in VARIABLES})


RUBRIC_SYSTEM = "You grade high-school mathematics exam answers that were handwritten and then transcribed to text."

RUBRIC_TEMPLATE = """Grade the student's answer against the reference solution and its scoring rubric.

How the rubric works: the reference solution is cut into pieces by markers such as "------3 points". A marker is a cumulative score: a student who gets as far as that marker, with every step before it correct, earns that many points. Markers can belong to different sub-questions; a student earns points in each sub-question separately, and the total is their sum.

Work in this order:
1. Follow the student's reasoning step by step and compare it with the reference. A different method counts when it is mathematically valid.
2. For each sub-question, decide which markers the student reached with correct work, and note every error, gap or missing justification.
3. Add up the points. The total lies between 0 and {{ full_score }}.

Problem (worth {{ full_score }} points):
{{ problem }}

Reference solution with rubric:
{{ reference }}

Student answer:
{{ response }}

Answer in plain text: your reasoning first, then a line of the form
Overall Score: X
where X is the total the student earns out of {{ full_score }} points, then two or three sentences on the main strengths and errors."""

FINAL_ANSWER_SYSTEM = "You check whether two final answers to a mathematics problem are the same."

FINAL_ANSWER_TEMPLATE = """A student solved an inequality problem. Decide whether the student's final answer is the same as the correct answer.

Problem type: {{ question_kind }} (bound: the answer is the best constant C; relation: the answer is one of the options below).
{{ choices }}
Problem:
{{ problem }}

Correct answer: {{ gold_answer }}
Student's final answer, as found in the solution: {{ extracted_answer }}
Last lines of the student's solution:
{{ response_tail }}

Rules: the same exact value written differently counts as the same (1/2 and 0.5, \\frac{\\sqrt{2}}{2} and 1/\\sqrt{2}). A decimal approximation of an irrational value does not (6.2832 is not 2\\pi). For a relation problem the chosen option must be the same, by letter or by symbol. A missing or ambiguous final answer is not the same.

Explain briefly, then end with a line "Verdict: True" if the answers are the same, or "Verdict: False" if not."""

STEP_SYSTEM = "You review the reasoning of solutions to olympiad inequality problems, looking for one kind of flaw at a time."

STEP_FRAME = """You check a solution to an inequality problem for one kind of flaw only. Do not judge whether the final answer is right, and ignore other kinds of mistakes.

The flaw: {flaw}
Not the flaw: {not_flaw}

Problem:
{{{{ problem }}}}

Solution:
{{{{ response }}}}

Reply in this form:
Analysis: go through the solution and discuss each step where this flaw could occur.
Flagged step: quote the first step that has this flaw, or write "none".
Verdict: True if the solution is free of this flaw, False if it has it."""

TOY_CASE_TEMPLATE = STEP_FRAME.format(
    flaw=(
        "the solution reaches a general conclusion (a bound, a relation, an optimum) from particular "
        "cases only: trying specific numbers, setting the variables equal, or taking limits, without "
        "an argument that covers every admissible value."
    ),
    not_flaw=(
        "checking an equality case to show that a bound is attained, or giving one example as a "
        "counterexample to disprove a claim."
    ),
)

LOGICAL_GAP_TEMPLATE = STEP_FRAME.format(
    flaw=(
        "a step claims something non-trivial without justification: a derivation that is skipped, "
        "an inequality used without saying why it holds, a maximum or minimum stated without proof, "
        "or a 'numerical check' or 'verification' that does not show its numbers."
    ),
    not_flaw="routine algebra or arithmetic that a reader can verify at a glance.",
)

NUMERICAL_APPROXIMATION_TEMPLATE = STEP_FRAME.format(
    flaw=(
        "rounded or approximate decimal values are used inside the derivation, so that later steps "
        "rest on numbers that are not exact (e.g. replacing sqrt(2) by 1.414 and continuing to compute)."
    ),
    not_flaw=(
        "estimating two simple quantities to compare them when the estimate clearly settles the "
        "comparison, or quoting a decimal value for the reader's information only."
    ),
)

NUMERICAL_COMPUTATION_TEMPLATE = """You check a solution to an inequality problem for arithmetic mistakes only: explicit computations with concrete numbers whose stated result is wrong. Do not judge the method or the final answer.

Problem:
{{ problem }}

Solution:
{{ response }}

First list every explicit numerical equality the solution states, where both sides contain only numbers (no variables), as a JSON block:
```json
{"equalities": [{"step": "a short quote", "lhs": "left side", "rhs": "right side"}]}
```
Write each side as plain math or LaTeX, as in the solution; leave out approximations written with \\approx.

Then reply in this form:
Analysis: check each computation.
Flagged step: quote the first wrong computation, or write "none".
Verdict: True if every computation is right, False if any is wrong."""

HOLISTIC_TEMPLATE = """Decide whether this solution to an inequality problem is fully correct.

A fully correct solution has the right final answer (the correct answer is {{ gold_answer }}) and rigorous reasoning: no general conclusion drawn only from special cases, no non-trivial step left unjustified, no rounded values carried through a derivation, and no arithmetic mistakes.
{{ choices }}
Problem:
{{ problem }}

Solution:
{{ response }}

Explain your assessment, then end with a line "Verdict: True" if the solution is fully correct, or "Verdict: False" if it is not."""

SUB_QUESTION_REQUEST = """

This problem has sub-questions: {labels}. After the Overall Score line, also give the points the student earns in each sub-question, as a JSON block:
```json
{{"sub_scores": {example}}}
```
Each value is a number from 0 to that sub-question's maximum{maxima}; the values add up to the Overall Score."""


def sub_question_request(sub_questions):
    """The ledger request added to a rubric judge's prompt when the question has sub-questions:
    `sub_questions` is [(label, maximum as text or None)] in order. Nothing else uses it, so the
    prompts of questions without sub-questions stay as they were."""
    labels = ", ".join(label for label, _ in sub_questions)
    example = "{" + ", ".join(f'"{label}": points' for label, _ in sub_questions) + "}"
    known = [f"{label}: {top}" for label, top in sub_questions if top is not None]
    maxima = f" ({'; '.join(known)})" if known else ""
    return SUB_QUESTION_REQUEST.format(labels=labels, example=example, maxima=maxima)

STEP_REPORT_SHOWN = 100  # characters of each step and checkpoint shown in the step report's lists

STEP_REPORT_REQUEST = """

Also report where the answer first goes wrong and which rubric checkpoints it reaches.{steps}{checkpoints}
End your reply with this JSON block, and nothing after it:
```json
{{"step_report": {{"first_wrong_step": {step_example}, "checkpoints_reached": {example}}}}}
```
{rules}This block comes after the Overall Score line and does not change the Overall Score."""


def _shown(text, *, tail=False):
    text = " ".join(str(text or "").split())
    if len(text) <= STEP_REPORT_SHOWN:
        return text
    return "…" + text[-STEP_REPORT_SHOWN:] if tail else text[:STEP_REPORT_SHOWN] + "…"


def step_report_request(steps, checkpoints):
    """The step report asked of a rubric judge whose setting asks for it (`step_report`): `steps` are
    the answer's steps in order (texts, numbered from 1 in the prompt), `checkpoints` are
    [(sub-question label or "", cumulative points as text, the reference text ending at the marker)]
    in rubric order (numbered from 1). The reply is read by parsing.parse_step_report."""
    step_lines = "".join(f"\n[{n}] {_shown(text)}" for n, text in enumerate(steps, 1))
    checkpoint_lines = "".join(
        f"\nC{n} ({'sub-question ' + label + ', ' if label else ''}{points} points): ends with \"{_shown(text, tail=True)}\""
        for n, (label, points, text) in enumerate(checkpoints, 1))
    rules = []
    if steps:
        rules.append("first_wrong_step is the number of the first step that is wrong (an error, a gap or an unjustified "
                     "claim), or null when no step is wrong.")
    if checkpoints:
        rules.append("checkpoints_reached gives, for every checkpoint by its number, true when the student reached it "
                     "with correct work and false when not.")
    return STEP_REPORT_REQUEST.format(
        steps=f"\nThe student's answer, cut into numbered steps (each shown by its beginning):{step_lines}" if steps else "",
        checkpoints=f"\nThe rubric's checkpoints (the points markers of the reference solution, in order):{checkpoint_lines}"
        if checkpoints else "",
        step_example="N" if steps else "null",
        example="{" + ", ".join(f'"{n}": true or false' for n in range(1, len(checkpoints) + 1)) + "}",
        rules=" ".join(rules) + "\n" if rules else "",
    )
