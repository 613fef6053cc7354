"""
A scripted stand-in for a language model: a made-up but well-formed answer to every prompt the
app sends, in the form the app expects.

It recognises the prompt (a rubric score request, the IneqMath final-answer check, a step
judge, the numerical-computation judge with its JSON list, the holistic judge, the
meta-evaluator's JSON request, a synthetic-answer request, an OCR transcription request) and
answers deterministically: the same messages always get the same answer. Its scores and
verdicts are invented (a hash of the prompt, nudged by how long the answer is against the
reference), so they exercise the tool, never measure a model.

Used by the local test server (``tests/llm_server.py``, its default answers and its reading of a
request's messages) and by ``load_demo`` (grading/demo.py), which records a finished run of a
scripted judge without any server: run-time code, so it is part of the library rather than of the
tests. Plain Python, no Django and no project app (the `llm` contract).
"""
import hashlib
import json
import re

from .client import Completion

RUBRIC = "rubric"
FINAL_ANSWER = "final_answer"
STEP = "step"
NUMERICAL_COMPUTATION = "numerical_computation"
HOLISTIC = "holistic"
VERDICT = "verdict"
META_EVALUATION = "meta_evaluation"
GENERATION = "generation"
TRANSCRIPTION = "transcription"
OTHER = "other"

MARK = "(scripted model: made-up answer)"


def message_parts(messages):
    """The texts of chat messages, in order: each string content, each text part of a list
    content (image parts give an empty text)."""
    for message in messages or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            yield content
        elif isinstance(content, list):
            yield from (str(piece.get("text", "")) for piece in content if isinstance(piece, dict))


def message_text(messages):
    """All text of chat messages, joined (image parts are skipped)."""
    return "\n".join(message_parts(messages))


def _has_image(messages):
    return any(
        isinstance(piece, dict) and piece.get("type") == "image_url"
        for message in messages or [] if isinstance(message, dict) and isinstance(message.get("content"), list)
        for piece in message["content"]
    )


def _instructions(messages):
    """The system message and the parts of user text that are ours, not quoted student text:
    the first and last 1,500 characters of each message (templates put their instructions there)."""
    chunks = []
    for message in messages or []:
        text = message_text([message])
        chunks.append(text if len(text) <= 3000 else text[:1500] + "\n" + text[-1500:])
    return "\n".join(chunks)


def prompt_kind(messages):
    """Which of the app's prompts `messages` is (one of the constants above)."""
    text = _instructions(messages)
    if _has_image(messages) or "Transcribe it exactly" in text:
        return TRANSCRIPTION
    if "primary_category_code" in text:
        return META_EVALUATION
    if "You are a high-school student" in text or "You are sitting a mathematics exam" in text:
        return GENERATION
    if '"equalities"' in text:
        return NUMERICAL_COMPUTATION
    if "Correct answer:" in text and "Verdict" in text:
        return FINAL_ANSWER
    if "fully correct" in text and "Verdict" in text:
        return HOLISTIC
    if "Flagged step" in text:
        return STEP
    if re.search(r"overall\s+score", text, re.I):
        return RUBRIC
    if re.search(r"Verdict:\s*True", text) or re.search(r"\bTrue\b.*\bFalse\b", text, re.S):
        return VERDICT
    if re.search(r"\bscore\b", text, re.I):
        return RUBRIC
    return OTHER


def answer(messages, *, model="", temperature=None):
    """The scripted model's reply to `messages` (a list of chat messages). Synthetic answers also
    depend on the model name and temperature asked for, so a grid of them is not one answer."""
    kind = prompt_kind(messages)
    text = message_text(messages)
    if kind == GENERATION:
        text = f"{text}\n[model {model} at temperature {temperature}]"
    return ANSWERS[kind](text)


def complete(endpoint, call, messages, *, limiter=None):
    """Stands in for ``llm.complete`` in-process (no server, no network):
    ``load_demo`` records its scripted runs through the real run services with it."""
    text = answer(messages, model=call.model, temperature=call.temperature)
    return Completion(text=text, prompt_tokens=len(message_text(messages)) // 4 + 1,
                      completion_tokens=len(text) // 4 + 1, latency_ms=0, attempts=1, finish_reason="stop")


def _digest(text, salt=""):
    return int(hashlib.sha256((salt + text).encode("utf-8")).hexdigest()[:12], 16)


def _section(text, start, end):
    """The text between the first `start` and the next `end` after it ('' when absent)."""
    begin = text.find(start)
    if begin < 0:
        return ""
    begin += len(start)
    stop = text.find(end, begin) if end else -1
    return text[begin:stop if stop >= 0 else len(text)].strip()


def _number(text):
    return float(text) if text is not None else None


def _format(value):
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


# --- judges ---------------------------------------------------------------------------------

_FULL_SCORE = (
    r"out of (\d+(?:\.\d+)?) points", r"worth (\d+(?:\.\d+)?) points", r"full score (\d+(?:\.\d+)?)",
    r"between 0 and (\d+(?:\.\d+)?)",
)


def _full_score(text):
    for pattern in _FULL_SCORE:
        match = re.search(pattern, text, re.I)
        if match:
            return float(match.group(1))
    return 10.0


def _answer_and_reference(text):
    """The student answer and the reference as the app's rubric prompt and the RealMath-Eval
    query lay them out; ('', '') when the prompt is laid out otherwise."""
    student = _section(text, "Student answer:\n", "\n\nAnswer in plain text") or _section(
        text, "Student Response:", "Reference Answer:"
    )
    reference = _section(text, "Reference solution with rubric:\n", "\n\nStudent answer:") or _section(
        text, "Reference Answer:", "Please provide your evaluation"
    )
    return student, reference


def rubric_answer(text):
    """'Overall Score: X': how much of the reference's length the answer covers, give or take a point."""
    full = _full_score(text)
    student, reference = _answer_and_reference(text)
    digest = _digest(text, "rubric")
    if student and reference:
        base = full * min(1.0, len(student) / max(1, len(reference)))
        score = round(base) + (digest % 3) - 1
    else:
        score = digest % (int(full) + 1)
    score = max(0, min(int(full), score))
    return (
        f"{MARK}\nI followed the answer against the rubric checkpoints of each sub-question.\n\n"
        f"Overall Score: {score}\n\n"
        "Brief Explanation: a scripted judge gives this score from the length of the answer and a hash of "
        "the prompt; it did not read the mathematics." + _sub_scores_block(text, score)
        + _step_report_block(text, score, full)
    )


_SUB_REQUEST = re.compile(r"This problem has sub-questions: (.+?)\. After the Overall Score line")


def _sub_scores_block(text, score):
    """When the prompt asks for points per sub-question: the score shared out in order, each part
    up to its maximum where the prompt gives one (the last takes what is left, up to its maximum)."""
    found = _SUB_REQUEST.search(text)
    if not found:
        return ""
    labels = [label.strip() for label in found.group(1).split(", ") if label.strip()]
    shares, left = {}, float(score)
    for index, label in enumerate(labels):
        top = re.search(re.escape(label) + r": (\d+(?:\.\d+)?)[;)]", text)
        even = left if index == len(labels) - 1 else float(round(score / len(labels)))
        share = min(even, left, float(top.group(1)) if top else even)
        shares[label] = share
        left -= share
    return "\n\n```json\n" + json.dumps({"sub_scores": shares}, ensure_ascii=False) + "\n```"


_STEP_LINE = re.compile(r"^\[(\d+)\] ", re.M)
_CHECKPOINT_LINE = re.compile(r"^C(\d+) \((?:sub-question [^,]*, )?(\d+(?:\.\d+)?) points\): ends with", re.M)


def _step_report_block(text, score, full):
    """When the prompt asks for the step report: each checkpoint reached when its points are at most
    the score (markers are cumulative), and the first wrong step as far into the answer as the
    score is short of full marks (none at full marks)."""
    if '"step_report"' not in text:
        return ""
    request = text[text.rfind("Also report where the answer first goes wrong"):]
    steps = max((int(n) for n in _STEP_LINE.findall(request.split("The rubric's checkpoints")[0])), default=0)
    reached = {n: float(points) <= score for n, points in _CHECKPOINT_LINE.findall(request)}
    first = None if score >= full or not steps else min(steps, 1 + int(steps * score / full))
    block = {"step_report": {"first_wrong_step": first, "checkpoints_reached": reached}}
    return "\n\n```json\n" + json.dumps(block, ensure_ascii=False) + "\n```"


def _plain(answer_text):
    text = re.sub(r"\\(?:mathrm|text)\{([^}]*)\}", r"\1", answer_text or "")
    text = text.replace("$", "").replace("\\", "")
    text = re.sub(r"^\s*C\s*=\s*", "", re.sub(r"\s+", "", text))
    return text.lower()


def final_answer_answer(text):
    """True when the student's final answer, as the prompt quotes it, is the correct one written alike."""
    gold = _section(text, "Correct answer:", "\n")
    found = _section(text, "Student's final answer, as found in the solution:", "\n")
    same = bool(found) and found != "(none found)" and _plain(found) == _plain(gold)
    return (
        f"{MARK}\nThe correct answer is {gold or '?'}; the student's final answer is {found or '(none)'}. "
        f"Written without spacing and dollar signs they are {'the same' if same else 'different'}.\n"
        f"Verdict: {same}"
    )


def _first_step(solution):
    for line in (solution or "").splitlines():
        line = line.strip()
        if len(line) > 8 and ("=" in line or "\\geq" in line or "\\leq" in line or "≥" in line or "≤" in line):
            return line[:160]
    return ""


def _solution(text):
    return _section(text, "Solution:\n", "\n\nReply in this form") or _section(
        text, "Solution:\n", "\n\nExplain your assessment"
    ) or _section(text, "Solution:\n", "\n\nFirst list")


def step_answer(text):
    """A step judge's verdict: free of the flaw two times in three; a flagged step when not."""
    solution = _solution(text)
    verdict = _digest(text, "step") % 3 != 0
    flagged = "none" if verdict else (_first_step(solution) or "the first step of the solution")
    return (
        f"{MARK}\nAnalysis: I went through the solution step by step looking for this one kind of flaw.\n"
        f"Flagged step: {flagged}\nVerdict: {verdict}"
    )


_NUMERIC_SIDE = r"[-+]?[\d.]+(?:\s*[-+*/×·]\s*[\d.]+)*"
_NUMERIC_EQUALITY = re.compile(rf"(?<![\w.^_{{])({_NUMERIC_SIDE})\s*=\s*({_NUMERIC_SIDE})(?![\w.^_])")


def numerical_computation_answer(text):
    """Lists the solution's equalities between plain numbers (the app re-checks each with the CAS)."""
    solution = _solution(text).replace("\\times", "×").replace("\\cdot", "·")
    equalities = []
    for match in _NUMERIC_EQUALITY.finditer(solution):
        lhs, rhs = (side.strip().replace("×", "*").replace("·", "*") for side in match.groups())
        if lhs != rhs and re.search(r"\d", lhs) and re.search(r"\d", rhs):
            equalities.append({"step": match.group(0).strip()[:120], "lhs": lhs, "rhs": rhs})
        if len(equalities) >= 10:
            break
    block = json.dumps({"equalities": equalities}, ensure_ascii=False)
    return (
        f"{MARK}\n```json\n{block}\n```\nAnalysis: I checked each computation listed above.\n"
        "Flagged step: none\nVerdict: True"
    )


def holistic_answer(text):
    verdict = _digest(text, "holistic") % 2 == 0
    return f"{MARK}\nThe final answer and the reasoning were looked at together.\nVerdict: {verdict}"


def verdict_answer(text):
    verdict = _digest(text, "verdict") % 3 != 0
    return f"{MARK}\nAnalysis: checked.\nFlagged step: none\nVerdict: {verdict}"


_META_NAMES = {
    "A": "Error severity & follow-through", "B": "Process norms & completeness", "C": "Logical rigor & edge cases",
    "D": "Insight recognition", "E": "Out of distribution / other",
}


def meta_evaluation_answer(text):
    """The meta-evaluator's JSON: over-scoring cases get A, B or C, under-scoring ones D or A."""
    gold = re.search(r"=== Teacher's score ===\s*([-\d.]+)", text)
    judge = re.search(r"=== Automatic grader's score ===\s*([-\d.]+)", text)
    gold_value, judge_value = _number(gold and gold.group(1)), _number(judge and judge.group(1))
    digest = _digest(text, "meta")
    if gold_value is None or judge_value is None:
        code = "E"
    elif judge_value > gold_value:
        code = "ABC"[digest % 3]
    else:
        code = "DA"[digest % 2]
    diff = abs(judge_value - gold_value) if gold_value is not None and judge_value is not None else None
    data = {
        "model_score": judge_value, "gt_score": gold_value, "score_diff": diff,
        "analysis": f"{MARK} The grader gave {_format(judge_value) if judge_value is not None else '?'} where the "
                    f"teacher gave {_format(gold_value) if gold_value is not None else '?'}; this scripted "
                    "meta-evaluator picks a category from the direction of the difference, not from the answer.",
        "primary_category_code": code, "primary_category_name": _META_NAMES[code],
        "ood_details": {"is_ood": code == "E", "justification": "scores not found" if code == "E" else "",
                        "suggested_new_category": None},
    }
    return "```json\n" + json.dumps(data, ensure_ascii=False, indent=1) + "\n```"


# --- other prompts --------------------------------------------------------------------------

def generation_answer(text):
    """A synthetic 'student' answer ending the way the prompt asks (bound, relation or rubric)."""
    digest = _digest(text, "generation")
    lines = [
        f"{MARK}",
        "(1) Setting $a = b = c = 1$ we get $1 + 1 + 1 = 3$, so equality can hold.",
        "(2) By AM-GM, $a + b + c \\geq 3\\sqrt[3]{abc}$, and $2 \\times 3 = 6$.",
    ]
    if digest % 5 == 0:  # a slip for the numerical-computation judge (and its CAS check) to catch
        lines.append("(3) Checking another case, $3 \\times 4 = 13$ is still larger.")
    if digest % 3 == 0:  # rounded values carried on
        lines.append("(3) Numerically $\\sqrt{2} \\approx 1.414$, and $1.414 \\times 2 = 2.828$.")
    if "The answer is $C = X$" in text:
        lines.append(f"The answer is $C = {digest % 4 + 1}$.")
    elif "The answer is (Letter) Symbol" in text:
        options = re.findall(r"^\(([A-F])\)\s*(.+)$", text, re.M)
        letter, symbol = options[digest % len(options)] if options else ("A", "$\\leq$")
        lines.append(f"The answer is ({letter}) {symbol.strip()}")
    else:
        lines.append(f"So the answer to (1) is $x = {digest % 5}$ and to (2) is $f(x) \\geq {digest % 3}$.")
    return "\n".join(lines)


def transcription_answer(text):
    return f"{MARK}\n(1) $x^{{2}} - 4 = 0$\n(2) $x = 2$ or $x = -2$"


def other_answer(text):
    return f"{MARK}\nThis scripted server answers the app's own prompts; this one it does not recognise."


ANSWERS = {
    RUBRIC: rubric_answer,
    FINAL_ANSWER: final_answer_answer,
    STEP: step_answer,
    NUMERICAL_COMPUTATION: numerical_computation_answer,
    HOLISTIC: holistic_answer,
    VERDICT: verdict_answer,
    META_EVALUATION: meta_evaluation_answer,
    GENERATION: generation_answer,
    TRANSCRIPTION: transcription_answer,
    OTHER: other_answer,
}
