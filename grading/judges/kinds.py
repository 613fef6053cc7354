"""
The judge kinds: what each one is shown, how it asks, and how its answer becomes a result.

A kind works on plain values (`JudgeInput`, `JudgeSpec`) and a `call` function that sends
messages to the LLM; it never touches the database, so many can run at once in threads.
`evaluate` never raises: every failure becomes an `Outcome` with status invalid or error and
the raw text kept.
"""
import json
import statistics
from dataclasses import dataclass, field

from django.utils.translation import gettext_lazy

import equivalence
from llm import LlmCallFailed

from . import prompts
from .parsing import (
    OK,
    UNPARSEABLE,
    parse_json_object,
    parse_score,
    parse_step_report,
    parse_sub_scores,
    parse_verdict,
    strip_thinking,
)

NO_INPUT = "no_input"
UNDECIDED = "undecided"
CALL_FAILED = "call_failed"


@dataclass(frozen=True)
class JudgeInput:
    """Everything a judge may be shown about one response."""

    response_id: int
    problem: str
    reference: str
    response: str
    full_score: float
    question_kind: str
    gold_answer: str = ""
    choices: tuple = ()
    judge_query: str = ""
    sub_questions: tuple = ()  # ((label, maximum or None), ...) of the question's sub-questions, in order
    rubric_version: int | None = None  # the question's rubric version (annotation.Question.rubric_version)
    examples: str = ""  # the few-shot block of a few-shot setting (grading/judges/calibration.py)
    # A setting asking for the step report (strategies.prepare fills these in): the answer's steps
    # (texts, in order) and the question's checkpoints ((sub-question label, points, text), in order).
    steps: tuple = ()
    checkpoints: tuple = ()


@dataclass(frozen=True)
class JudgeSpec:
    """The parts of a judge setting a kind needs (a plain snapshot of a JudgeSetting row)."""

    kind: str
    model: str = ""
    temperature: float | None = None
    max_tokens: int | None = None
    reasoning_effort: str = ""
    samples: int = 1
    aggregate: str = "mean"
    system_prompt: str = ""
    prompt_template: str = ""
    extra_body: dict = field(default_factory=dict)
    parse_retries: int = 0
    answer_tolerance: str = "strict"  # the CAS mode: "strict" or "default" (rounded decimals count)
    second_opinion: bool = False  # also ask Math-Verify (recorded beside the CAS verdict)
    approximate_answers: str = "wrong"  # "right": an answer equal only up to rounding scores 1 (default: 0)
    step_report: bool = False  # rubric: also ask for the first wrong step and each checkpoint reached


@dataclass
class Outcome:
    status: str  # ok | invalid | error
    score: float | None = None
    spread: float | None = None
    rationale: str = ""
    raw_output: str = ""
    parse_status: str = ""
    step_verdicts: dict = field(default_factory=dict)
    samples: list = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: int = 0
    attempts: int = 0
    errors: list = field(default_factory=list)
    sub_scores: dict = field(default_factory=dict)  # points per sub-question label (rubric kind)



def extract_final_answer(text, question_kind):
    kind = question_kind if question_kind in ("bound", "relation") else None
    try:
        found = equivalence.extract_answer(text or "", kind=kind)
    except Exception:  # the extractor is best effort; the LLM fallback still sees the text
        return ""
    return (found or "").strip() if isinstance(found, str) else str(found or "")


def cas_verdict(pred, gold, *, mode="default", timeout=2.0, second_opinion=False):
    """The CAS says True/False/None (undecided) and how; it never raises here.

    With ``second_opinion`` Math-Verify's verdict is added under ``second_opinion`` (and how the
    two relate under ``agreement``); it never changes ``equivalent``.
    """
    if not pred:
        return {"equivalent": None, "method": "no-answer", "explanation": "No final answer found."}
    try:
        verdict = equivalence.check_equivalence(pred, gold, mode=mode, timeout=timeout, second_opinion=second_opinion)
    except Exception as exc:  # a crash in the engine is an undecided check, not a failed run
        return {"equivalent": None, "method": "error", "explanation": f"{type(exc).__name__}: {exc}"[:300]}
    result = {
        "equivalent": getattr(verdict, "equivalent", None),
        "method": str(getattr(verdict, "method", "") or ""),
        "explanation": str(getattr(verdict, "explanation", "") or "")[:500],
    }
    if getattr(verdict, "approximate", False):
        result["approximate"] = True  # equal only up to rounding at the written place
    if getattr(verdict, "decisive", ""):
        result["decisive"] = str(verdict.decisive)[:200]
    opinion = getattr(verdict, "second_opinion", None)
    if second_opinion and isinstance(opinion, dict):
        result["second_opinion"] = {
            "checker": str(opinion.get("checker", "Math-Verify")),
            "equivalent": opinion.get("equivalent"),
            "explanation": str(opinion.get("explanation", ""))[:300],
        }
        result["agreement"] = verdict.agreement
    return result


def same_text(pred, gold):
    strip = lambda s: "".join((s or "").replace("$", "").split())  # noqa: E731
    return bool(pred) and strip(pred) == strip(gold)


# --- kinds --------------------------------------------------------------------------------

class Kind:
    key = ""
    label = ""
    uses_llm = True
    verdict = False  # True: the answer is pass/fail (score 1 or 0)
    default_system = ""
    default_template = ""
    help = ""

    def full_score(self, judge_input):
        return 1.0 if self.verdict else judge_input.full_score

    def values(self, judge_input):
        choices = "\n".join(judge_input.choices)
        return {
            "problem": judge_input.problem,
            "reference": judge_input.reference,
            "response": judge_input.response,
            "full_score": _number(judge_input.full_score),
            "gold_answer": judge_input.gold_answer,
            "question_kind": judge_input.question_kind,
            "choices": f"Options:\n{choices}\n" if choices else "",
            "response_tail": "\n".join((judge_input.response or "").strip().splitlines()[-3:]),
            "examples": judge_input.examples,
        }

    def messages(self, spec, judge_input):
        template = spec.prompt_template or self.default_template
        system = spec.system_prompt if spec.prompt_template else (spec.system_prompt or self.default_system)
        messages = [{"role": "system", "content": system}] if system else []
        messages.append({"role": "user", "content": prompts.render(template, self.values(judge_input))})
        return messages

    def fingerprint(self, spec, judge_input):
        """What the judge is shown, as text: the cache key is its hash (with the setting version)."""
        return json.dumps(self.messages(spec, judge_input), ensure_ascii=False, sort_keys=True)

    def evaluate(self, spec, judge_input, call):
        try:
            messages = self.messages(spec, judge_input)
            if messages is None:
                return Outcome("invalid", parse_status=NO_INPUT, rationale="Nothing to send for this response.")
            samples = [self._sample(spec, judge_input, messages, call) for _ in range(max(1, spec.samples))]
            return self._aggregate(spec, samples)
        except Exception as exc:  # a bug or an engine crash must not stop the other items
            return Outcome("error", parse_status="exception", errors=[{"kind": "exception", "message": f"{type(exc).__name__}: {exc}"[:500]}])

    def parse(self, text, judge_input):
        """Return (value, parse_status, extra dict) for one model answer."""
        if self.verdict:
            parsed = parse_verdict(text)
            return parsed.value, parsed.status, {"flagged_step": parsed.flagged_step, "how": parsed.how}
        parsed = parse_score(text, full_score=self.full_score(judge_input))
        extra = {"how": parsed.how}
        if parsed.raw_value is not None:
            extra["raw_value"] = parsed.raw_value
        return parsed.score, parsed.status, extra

    def _sample(self, spec, judge_input, messages, call):
        sample = {"value": None, "parse_status": "", "raw": "", "prompt_tokens": 0, "completion_tokens": 0,
                  "latency_ms": 0, "attempts": 0, "errors": []}
        for _ in range(1 + max(0, spec.parse_retries)):
            try:
                completion = call(messages)
            except LlmCallFailed as exc:
                sample["errors"].extend(exc.errors)
                sample["attempts"] += exc.attempts
                sample["latency_ms"] += exc.latency_ms
                sample["parse_status"] = CALL_FAILED
                return sample
            sample["errors"].extend(completion.errors)
            sample["attempts"] += completion.attempts
            sample["latency_ms"] += completion.latency_ms
            sample["prompt_tokens"] += completion.prompt_tokens
            sample["completion_tokens"] += completion.completion_tokens
            sample["raw"] = completion.text
            value, status, extra = self.parse(completion.text, judge_input)
            sample.update(extra)
            sample["value"], sample["parse_status"] = value, status
            if status == OK:
                break
        return sample

    def _aggregate(self, spec, samples):
        outcome = Outcome(
            "ok",
            samples=samples,
            prompt_tokens=sum(s["prompt_tokens"] for s in samples),
            completion_tokens=sum(s["completion_tokens"] for s in samples),
            latency_ms=sum(s["latency_ms"] for s in samples),
            attempts=sum(s["attempts"] for s in samples),
            errors=[e for s in samples for e in s["errors"]],
        )
        answered = [s for s in samples if s["parse_status"] != CALL_FAILED]
        valid = [s for s in answered if s["parse_status"] == OK]
        outcome.raw_output = (valid or answered or samples)[0]["raw"]
        if not answered:
            outcome.status, outcome.parse_status = "error", CALL_FAILED
            return outcome
        if not valid:
            outcome.status, outcome.parse_status = "invalid", answered[-1]["parse_status"]
            outcome.rationale = strip_thinking(answered[-1]["raw"]).strip()
            return outcome
        outcome.parse_status = OK
        outcome.rationale = strip_thinking(valid[0]["raw"]).strip()
        values = [s["value"] for s in valid]
        if self.verdict:
            passes = sum(1 for v in values if v)
            verdict = passes * 2 > len(values)
            outcome.score = 1.0 if verdict else 0.0
            outcome.spread = (min(passes, len(values) - passes) / len(values)) if len(values) > 1 else 0.0
            outcome.step_verdicts = {self.key: verdict, "flagged_step": valid[0].get("flagged_step", "")}
        else:
            outcome.score = statistics.median(values) if spec.aggregate == "median" else statistics.fmean(values)
            outcome.spread = statistics.pstdev(values) if len(values) > 1 else 0.0
        return outcome


class RubricKind(Kind):
    """The RealMath-Eval rubric scorer. Where the question has sub-questions, the judge is also
    asked for its points per sub-question as JSON (the ledger); the request is added to the user
    message only then, so prompts and cache keys of questions without sub-questions are as before.
    The overall score alone decides whether an answer is valid: unreadable sub-question points
    only leave the ledger empty (with notes in the sample).

    A setting with `step_report` also asks for the first wrong step of the answer and, for each
    checkpoint, whether it was reached (prompts.step_report_request); the reply's block is read by
    parsing.parse_step_report and kept as ``step_verdicts["step_report"]``, its status unparseable
    when unreadable: the score counts either way."""

    key = "rubric"
    label = gettext_lazy("Rubric scorer")
    default_system = prompts.RUBRIC_SYSTEM
    default_template = prompts.RUBRIC_TEMPLATE
    help = (
        gettext_lazy("Problem, reference with cumulative rubric and the answer in; reasoning then 'Overall Score: X' out "
        "(and a JSON block of points per sub-question, where the question has sub-questions).")
    )

    def messages(self, spec, judge_input):
        messages = super().messages(spec, judge_input)
        if judge_input.sub_questions:
            request = prompts.sub_question_request(
                [(label, None if top is None else _number(top)) for label, top in judge_input.sub_questions]
            )
            messages[-1] = {**messages[-1], "content": messages[-1]["content"] + request}
        if _asks_steps(spec, judge_input):
            request = prompts.step_report_request(
                judge_input.steps, [(label, _number(points), text) for label, points, text in judge_input.checkpoints])
            messages[-1] = {**messages[-1], "content": messages[-1]["content"] + request}
        return messages

    def parse(self, text, judge_input):
        value, status, extra = super().parse(text, judge_input)
        if judge_input.sub_questions:
            ledger = parse_sub_scores(text, dict(judge_input.sub_questions))
            extra.update({"sub_scores": ledger.scores, "sub_status": ledger.status, "sub_notes": ledger.notes})
        if judge_input.steps or judge_input.checkpoints:
            report = parse_step_report(text, len(judge_input.steps), len(judge_input.checkpoints))
            extra["step_report"] = report.as_dict(len(judge_input.steps), len(judge_input.checkpoints))
        return value, status, extra

    def _aggregate(self, spec, samples):
        outcome = super()._aggregate(spec, samples)
        if outcome.status == "ok":
            valid = [s for s in samples if s["parse_status"] == OK and s.get("sub_scores")]
            labels = list(dict.fromkeys(label for s in valid for label in s["sub_scores"]))
            pick = statistics.median if spec.aggregate == "median" else statistics.fmean
            outcome.sub_scores = {
                label: pick([s["sub_scores"][label] for s in valid if label in s["sub_scores"]]) for label in labels
            }
            reports = [s["step_report"] for s in samples if s["parse_status"] == OK and "step_report" in s]
            if reports:  # the first valid sample's readable report; none readable: recorded as unreadable
                readable = [r for r in reports if r["status"] != UNPARSEABLE]
                outcome.step_verdicts = {"step_report": (readable or reports)[0]}
        return outcome


class ReplayKind(Kind):
    key = "replay"
    label = gettext_lazy("Replay")
    help = gettext_lazy("Sends the filled prompt an imported RealMath-Eval record carries (its `query`), unchanged.")

    def messages(self, spec, judge_input):
        if not judge_input.judge_query.strip():
            return None
        messages = [{"role": "system", "content": spec.system_prompt}] if spec.system_prompt else []
        messages.append({"role": "user", "content": judge_input.judge_query})
        return messages

    def fingerprint(self, spec, judge_input):
        messages = self.messages(spec, judge_input)
        return json.dumps(messages or {"no_query": judge_input.response_id}, ensure_ascii=False, sort_keys=True)


class StepKind(Kind):
    verdict = True
    default_system = prompts.STEP_SYSTEM


class ToyCaseKind(StepKind):
    key = "ineq_toy_case"
    label = gettext_lazy("Toy case")
    default_template = prompts.TOY_CASE_TEMPLATE
    help = gettext_lazy("Fails a solution that generalises from special values, equal variables or limits.")


class LogicalGapKind(StepKind):
    key = "ineq_logical_gap"
    label = gettext_lazy("Logical gap")
    default_template = prompts.LOGICAL_GAP_TEMPLATE
    help = gettext_lazy("Fails a solution with unjustified non-trivial claims or skipped derivations.")


class NumericalApproximationKind(StepKind):
    key = "ineq_numerical_approximation"
    label = gettext_lazy("Numerical approximation")
    default_template = prompts.NUMERICAL_APPROXIMATION_TEMPLATE
    help = gettext_lazy("Fails a solution that carries rounded values through its derivation.")


class NumericalComputationKind(StepKind):
    key = "ineq_numerical_computation"
    label = gettext_lazy("Numerical computation")
    default_template = prompts.NUMERICAL_COMPUTATION_TEMPLATE
    help = (
        gettext_lazy("The model lists the explicit numeric equalities; each is re-checked with the CAS, and a "
        "false one fails the solution whatever the model concluded.")
    )

    def _aggregate(self, spec, samples):
        outcome = super()._aggregate(spec, samples)
        if outcome.status != "ok":
            return outcome
        checks = self._check_equalities(outcome.raw_output)
        wrong = [c for c in checks if c["equivalent"] is False]
        outcome.step_verdicts["model_verdict"] = bool(outcome.score)
        outcome.step_verdicts["checked_equalities"] = checks
        if wrong:
            outcome.score = 0.0
            outcome.step_verdicts[self.key] = False
            outcome.step_verdicts["flagged_step"] = wrong[0].get("step") or f"{wrong[0]['lhs']} = {wrong[0]['rhs']}"
            outcome.step_verdicts["decided_by"] = "cas"
        else:
            outcome.step_verdicts["decided_by"] = "model"
        return outcome

    def _check_equalities(self, text):
        data = parse_json_object(strip_thinking(text))
        rows = data.get("equalities") if isinstance(data, dict) else data if isinstance(data, list) else None
        checks = []
        for row in (rows or [])[:40]:
            if not isinstance(row, dict):
                continue
            lhs, rhs = str(row.get("lhs", "")).strip(), str(row.get("rhs", "")).strip()
            if not lhs or not rhs:
                continue
            verdict = cas_verdict(lhs, rhs)
            checks.append({"step": str(row.get("step", ""))[:300], "lhs": lhs[:300], "rhs": rhs[:300], **verdict})
        return checks


class HolisticKind(StepKind):
    key = "ineq_holistic"
    label = gettext_lazy("Holistic baseline")
    default_system = "You assess the correctness of solutions to olympiad inequality problems."
    default_template = prompts.HOLISTIC_TEMPLATE
    help = gettext_lazy("One judge for everything at once (the baseline the five specialised judges are compared with).")


class CasFinalAnswerKind(Kind):
    key = "cas_final_answer"
    label = gettext_lazy("CAS final answer")
    uses_llm = False
    verdict = True
    help = gettext_lazy("Extracts the final answer and compares it with the gold answer in the CAS; no LLM.")

    def fingerprint(self, spec, judge_input):
        shown = {"answer": extract_final_answer(judge_input.response, judge_input.question_kind),
                 "gold": judge_input.gold_answer, "kind": judge_input.question_kind}
        # Only settings that differ from the original behaviour enter the key, so results of
        # existing settings stay cached.
        if _tolerance(spec) != "strict":
            shown["tolerance"] = _tolerance(spec)
        if spec.second_opinion:
            shown["second_opinion"] = True
        if _credits_approximations(spec):
            shown["approximate_answers"] = "right"
        return json.dumps(shown, ensure_ascii=False, sort_keys=True)

    def evaluate(self, spec, judge_input, call):
        try:
            return self._decide(spec, judge_input, call)
        except Exception as exc:
            return Outcome("error", parse_status="exception", errors=[{"kind": "exception", "message": f"{type(exc).__name__}: {exc}"[:500]}])

    def _decide(self, spec, judge_input, call):
        if not judge_input.gold_answer.strip():
            return Outcome("invalid", parse_status=NO_INPUT, rationale="The question has no gold answer.")
        pred = extract_final_answer(judge_input.response, judge_input.question_kind)
        detail = {"extracted": pred, "gold": judge_input.gold_answer}
        if same_text(pred, judge_input.gold_answer):
            return self._verdict(True, "exact", detail, "The final answer matches the gold answer as written.")
        cas = cas_verdict(pred, judge_input.gold_answer, mode=_tolerance(spec), second_opinion=spec.second_opinion)
        detail["cas"] = cas
        if cas["equivalent"] is True and cas.get("approximate"):
            credited = _credits_approximations(spec)
            rationale = _cas_rationale(cas) + "\n" + (
                "Equal up to rounding at the written place: credited, as the setting says." if credited else
                "Equal up to rounding at the written place, not exactly: not credited (the setting's default).")
            return self._verdict(credited, "cas-approximate", detail, rationale)
        if cas["equivalent"] is not None:
            return self._verdict(bool(cas["equivalent"]), "cas", detail, _cas_rationale(cas))
        return self._undecided(spec, judge_input, call, pred, detail)

    def _verdict(self, value, method, detail, rationale, outcome=None):
        outcome = outcome or Outcome("ok")
        outcome.status, outcome.parse_status = "ok", OK
        outcome.score = 1.0 if value else 0.0
        outcome.spread = 0.0
        outcome.rationale = rationale
        outcome.step_verdicts = {"final_answer": value, "method": method, **detail}
        return outcome

    def _undecided(self, spec, judge_input, call, pred, detail):
        return Outcome(
            "invalid", parse_status=UNDECIDED, step_verdicts={"final_answer": None, "method": "cas", **detail},
            rationale="The CAS could not decide whether the answers are equivalent.",
        )


class IneqFinalAnswerKind(CasFinalAnswerKind):
    key = "ineq_final_answer"
    label = gettext_lazy("IneqMath final answer")
    uses_llm = True
    default_system = prompts.FINAL_ANSWER_SYSTEM
    default_template = prompts.FINAL_ANSWER_TEMPLATE
    help = gettext_lazy("Exact match, then the CAS; an LLM is asked only when the CAS cannot decide.")

    def values(self, judge_input):
        values = super().values(judge_input)
        values["extracted_answer"] = extract_final_answer(judge_input.response, judge_input.question_kind) or "(none found)"
        return values

    def fingerprint(self, spec, judge_input):
        return json.dumps(
            {"cas": json.loads(super().fingerprint(spec, judge_input)), "llm": self.messages(spec, judge_input)},
            ensure_ascii=False, sort_keys=True,
        )

    def _undecided(self, spec, judge_input, call, pred, detail):
        messages = self.messages(spec, judge_input)
        samples = [self._sample(spec, judge_input, messages, call) for _ in range(max(1, spec.samples))]
        outcome = Kind._aggregate(self, spec, samples)
        if outcome.status != "ok":
            outcome.step_verdicts = {"final_answer": None, "method": "llm", **detail}
            return outcome
        return self._verdict(bool(outcome.score), "llm", detail, outcome.rationale, outcome)


KINDS = {
    kind.key: kind()
    for kind in (
        RubricKind, ReplayKind, IneqFinalAnswerKind, ToyCaseKind, LogicalGapKind,
        NumericalApproximationKind, NumericalComputationKind, HolisticKind, CasFinalAnswerKind,
    )
}

INEQMATH_STEP_KINDS = (
    "ineq_toy_case", "ineq_logical_gap", "ineq_numerical_approximation", "ineq_numerical_computation",
)


def get_kind(key):
    """The Kind for a setting's kind; KeyError for 'external' (imported results are not run)."""
    return KINDS[key]


def _asks_steps(spec, judge_input):
    return spec.step_report and bool(judge_input.steps or judge_input.checkpoints)


def _tolerance(spec):
    return spec.answer_tolerance if spec.answer_tolerance in ("strict", "default") else "strict"


def _credits_approximations(spec):
    return spec.approximate_answers == "right"


def _cas_rationale(cas):
    """The CAS explanation, then "our verdict / Math-Verify's verdict" when a second opinion was asked."""
    text = cas["explanation"] or f"CAS ({cas['method']})."
    opinion = cas.get("second_opinion")
    if opinion is None:
        return text
    names = {True: "equivalent", False: "not equivalent", None: "undecided"}
    ours = "equal up to rounding" if cas.get("approximate") else names[cas["equivalent"]]
    line = f"Our verdict / Math-Verify's verdict: {ours} / {names[opinion.get('equivalent')]}"
    if cas.get("agreement") == "disagree":
        line += " (they disagree; ours counts)"
    return f"{text}\n{line}."


def _number(value):
    value = float(value)
    return str(int(value)) if value.is_integer() else str(value)
