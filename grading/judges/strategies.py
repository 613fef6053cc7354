"""
Prompt strategies of the rubric judge: versioned templates a setting picks (and may then edit).

- ``reason-then-score`` (today's rubric prompt, prompts.RUBRIC_TEMPLATE): follow the answer, decide
  the markers reached, add up, then ``Overall Score: X``.
- ``verification-first``: check every step of the answer against the problem and the reference
  (verdict per step) before any score is given; the score counts only verified steps.
- ``follow-through-first``: where the answer is incomplete or unclear, first continue the
  student's own reasoning in its direction to understand the intent; then score only what the
  student wrote (the continuation earns nothing).
- ``few-shot``: reason-then-score with calibration examples: answers scored by the experts
  (grading/judges/calibration.py), placed in the prompt as ``{{ examples }}`` with their gold
  scores (and, if chosen, the experts' step comments).

A strategy's template is the setting's default prompt: a setting that picks a strategy other than
reason-then-score records the template's text (and its version, ``strategy_version``) when it is
saved, so a later change of the wording here never changes a saved setting. The wording is ours;
what each asks of the model is in docs/judges.md. Everything needing the database for a prompt
(the few-shot examples, a prompt set's prompts) is added to the judge input by `prepare`.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from django.utils.translation import gettext_lazy as _

from annotation.steps import split_steps

from . import prompts

OUTPUT_CONTRACT = """Answer in plain text: your reasoning first, then a line of the form
Overall Score: X
where X is the total the student earns out of {{ full_score }} points, then two or three sentences on the main strengths and errors."""

PROBLEM_BLOCK = """Problem (worth {{ full_score }} points):
{{ problem }}

Reference solution with rubric:
{{ reference }}

Student answer:
{{ response }}"""

RUBRIC_RULE = """How the rubric works: the reference solution is cut into pieces by markers such as "------3 points". A marker is a cumulative score: a student who gets as far as that marker, with every step before it correct, earns that many points. Markers can belong to different sub-questions; a student earns points in each sub-question separately, and the total is their sum."""

VERIFICATION_FIRST_TEMPLATE = f"""Grade the student's answer against the reference solution and its scoring rubric, verifying before you score.

{RUBRIC_RULE}

Work in this order, and do not think about the score until step 3:
1. Verification. Go through the student's answer step by step. For every step, check it against the problem statement and the reference solution: is the computation right, does it follow from what came before, is the claim justified? Write one line per step: the step (quoted briefly), then "verified" or "not verified" and why. A different method counts when each of its steps is verified.
2. For each sub-question, decide which markers the student reached using verified steps only. A marker reached through a step that was not verified is not reached.
3. Only now add up the points. The total lies between 0 and {{{{ full_score }}}}.

{PROBLEM_BLOCK}

{OUTPUT_CONTRACT}"""

FOLLOW_THROUGH_FIRST_TEMPLATE = f"""Grade the student's answer against the reference solution and its scoring rubric.

{RUBRIC_RULE}

Work in this order:
1. Understand the intent first. Where the answer is incomplete, stops early, skips a step or is unclear, continue the student's own reasoning for a few lines in the direction the student was going (their method, their notation, their intermediate results), so that you understand what they meant. Label this part "Continuation (not the student's work)".
2. Score only what the student wrote. The continuation earns nothing: it only tells you how to read the student's lines. A marker counts only if the student's own written steps reach it correctly; a correct intent that was never written down earns no points.
3. For each sub-question, decide which markers the student reached, note every error, gap or missing justification, and add up the points. The total lies between 0 and {{{{ full_score }}}}.

{PROBLEM_BLOCK}

{OUTPUT_CONTRACT}"""

FEW_SHOT_TEMPLATE = f"""Grade the student's answer against the reference solution and its scoring rubric.

{RUBRIC_RULE}

{{{{ examples }}}}

Work in this order:
1. Follow the student's reasoning step by step and compare it with the reference. A different method counts when it is mathematically valid.
2. For each sub-question, decide which markers the student reached with correct work, and note every error, gap or missing justification. Apply the rubric as strictly as the experts did in the examples, but grade this answer on its own merits.
3. Add up the points. The total lies between 0 and {{{{ full_score }}}}.

{PROBLEM_BLOCK}

{OUTPUT_CONTRACT}"""


@dataclass(frozen=True)
class Strategy:
    key: str
    label: str
    version: int
    system: str
    template: str  # "" for reason-then-score: the kind's default (prompts.RUBRIC_TEMPLATE), unchanged
    asks: str  # what the model is asked to do, in one sentence (the setting page and docs/judges.md)


STRATEGIES = {
    s.key: s
    for s in (
        Strategy("reason-then-score", _("Reason, then score"), 1, "", "",
                 _("Follow the answer step by step, decide which rubric markers it reached, then give the score.")),
        Strategy("verification-first", _("Verification-First"), 1, prompts.RUBRIC_SYSTEM, VERIFICATION_FIRST_TEMPLATE,
                 _("Verify every step against the problem and the reference (one verdict per step) before any "
                   "score; only verified steps reach markers.")),
        Strategy("follow-through-first", _("Follow-Through-First"), 1, prompts.RUBRIC_SYSTEM,
                 FOLLOW_THROUGH_FIRST_TEMPLATE,
                 _("Where the answer is incomplete or unclear, first continue the student's reasoning in its own "
                   "direction to understand the intent; then score only what the student wrote.")),
        Strategy("few-shot", _("Few-shot calibration"), 1, prompts.RUBRIC_SYSTEM, FEW_SHOT_TEMPLATE,
                 _("Reason then score, after k answers to the same problem scored by the experts (their gold "
                   "scores, optionally their step comments), taken from real students' answers unless the setting "
                   "says otherwise; the examples are a hold-out.")),
    )
}
DEFAULT = "reason-then-score"
FEW_SHOT = "few-shot"


def get(key: str | None) -> Strategy:
    return STRATEGIES.get(key or DEFAULT, STRATEGIES[DEFAULT])


def default_prompts(key: str | None) -> tuple[str, str]:
    """(system prompt, template) a setting of this strategy starts from ("" = the kind's defaults)."""
    strategy = get(key)
    return strategy.system, strategy.template


def uses_strategies(kind: str) -> bool:
    return kind == "rubric"


# --- what a prompt needs from the database ----------------------------------------------------

def prepare(setting, the_input, response):
    """The judge input of `response` under `setting`: the few-shot examples of its
    question (for a few-shot setting), the answer's steps and the question's checkpoints (for a
    rubric setting asking for the step report) or the prompt set's prompt (for a replay setting
    with a prompt set) filled in; otherwise `the_input` unchanged (no query)."""
    if setting.kind == "rubric" and setting.step_report:
        the_input = with_steps(the_input, response)
    if setting.kind == "rubric" and setting.strategy == FEW_SHOT:
        from . import calibration  # noqa: PLC0415 (the database side, loaded only when used)

        return dataclasses.replace(the_input, examples=calibration.examples_text(setting, response))
    if setting.kind == "replay" and setting.prompt_set_id:
        from ..models import PromptSetEntry  # noqa: PLC0415

        query = (PromptSetEntry.objects.filter(prompt_set_id=setting.prompt_set_id, response_id=response.pk,
                                               holdout=False).values_list("query", flat=True).first())
        return dataclasses.replace(the_input, judge_query=query or "")
    return the_input


def with_steps(the_input, response):
    """`the_input` with the answer's steps (the rule-based splitter the Validity view numbers the
    experts' steps with) and the question's checkpoints (the rows the experts mark, in order)."""
    from annotation.models import RubricCheckpoint  # noqa: PLC0415 (the database side, loaded only when used)

    checkpoints = tuple(
        (label or "", float(points), text)
        for label, points, text in RubricCheckpoint.objects.filter(question_id=response.question_id)
        .order_by("order", "id").values_list("sub_question__label", "cumulative_points", "text"))
    steps = tuple(step.text for step in split_steps(the_input.response or ""))
    return dataclasses.replace(the_input, steps=steps, checkpoints=checkpoints)


def holdout_ids(setting) -> set[int]:
    """Answers a setting must never judge nor count: its few-shot examples, or the hold-outs of
    the prompt set it sends."""
    if setting is None:
        return set()
    if setting.kind == "rubric" and setting.strategy == FEW_SHOT:
        return {int(i) for i in (setting.calibration or {}).get("holdout", [])}
    if setting.kind == "replay" and setting.prompt_set_id:
        from ..models import PromptSetEntry  # noqa: PLC0415

        return set(PromptSetEntry.objects.filter(prompt_set_id=setting.prompt_set_id, holdout=True)
                   .values_list("response_id", flat=True))
    return set()
