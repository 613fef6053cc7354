"""
Reading scores and verdicts out of real model output.

Models do not follow output formats to the letter: the score line comes bold, bracketed, as
``X/Y``, in a JSON object or inside ``<score>`` tags, after a long ``<think>`` block, or not at
all. These functions never raise on model text; they say what they found and how
(`status`), and the caller keeps the raw text whatever happens.
"""
import json
import re
from dataclasses import dataclass, field

OK = "ok"
UNPARSEABLE = "unparseable"
OUT_OF_RANGE = "out_of_range"

NUMBER = r"[-+]?\d+(?:\.\d+)?"
_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.S | re.I)
_DECORATION = re.compile(r"[*_`#]+")
# "Overall Score: 8", "**Overall Score:** [7.5]", "Overall score is 8/13", "overall score = (6) points"
_OVERALL = re.compile(
    r"overall\s+score\s*(?:\([^)]*\)\s*)?(?:[:：=\-–—]|\bis\b|\bof\b)?\s*[\[(【{]?\s*(" + NUMBER + r")"
    r"(?:\s*[\])】}])?(?:\s*(?:/|out\s+of)\s*(" + NUMBER + r"))?",
    re.I,
)
_OTHER_LABEL = re.compile(
    r"(?:final|total)\s+score\s*(?:[:：=\-–—]|\bis\b)?\s*[\[(【{]?\s*(" + NUMBER + r")"
    r"(?:\s*[\])】}])?(?:\s*(?:/|out\s+of)\s*(" + NUMBER + r"))?",
    re.I,
)
_SCORE_TAG = re.compile(r"<score>\s*(" + NUMBER + r")\s*(?:/\s*(" + NUMBER + r"))?\s*</score>", re.I)
_BARE_SCORE = re.compile(
    r"^\s*score\s*[:：=]\s*[\[(]?\s*(" + NUMBER + r")(?:\s*[\])])?(?:\s*/\s*(" + NUMBER + r"))?\s*$", re.I | re.M
)
_JSON_SCORE_KEYS = ("overall_score", "overall score", "score", "total_score", "final_score")


def strip_thinking(text):
    """Drop ``<think>...</think>`` blocks: a number mentioned while thinking is not the answer."""
    return _THINK.sub("", text or "")


@dataclass
class ParsedScore:
    score: float | None
    status: str
    raw_value: float | None = None
    stated_max: float | None = None
    how: str = ""
    rationale: str = ""


def parse_score(text, *, full_score=None):
    """Find the judge's score in `text` and check it lies in [0, full_score].

    Tried in order, first hit wins: a labelled "Overall Score" (bold, bracketed and ``X/Y``
    variants), a "Final/Total Score", ``<score>`` tags, a JSON object with a score key, a
    line that is just ``Score: X``.
    """
    body = strip_thinking(text)
    plain = _DECORATION.sub("", body)
    found = (
        _first(_OVERALL, plain, "overall")
        or _first(_OTHER_LABEL, plain, "label")
        or _first(_SCORE_TAG, body, "tag")
        or _json_score(body)
        or _first(_BARE_SCORE, plain, "score-line")
    )
    rationale = body.strip()
    if found is None:
        return ParsedScore(None, UNPARSEABLE, how="", rationale=rationale)
    value, stated_max, how = found
    if value < 0 or (full_score is not None and value > float(full_score)):
        return ParsedScore(None, OUT_OF_RANGE, raw_value=value, stated_max=stated_max, how=how, rationale=rationale)
    return ParsedScore(value, OK, raw_value=value, stated_max=stated_max, how=how, rationale=rationale)


def _first(pattern, text, how):
    match = pattern.search(text)
    if not match:
        return None
    stated_max = float(match.group(2)) if match.lastindex and match.lastindex >= 2 and match.group(2) else None
    return float(match.group(1)), stated_max, how


def _json_score(text):
    data = parse_json_object(text)
    if not isinstance(data, dict):
        return None
    lowered = {str(k).strip().lower(): v for k, v in data.items()}
    for key in _JSON_SCORE_KEYS:
        if key in lowered:
            value = _as_number(lowered[key])
            if value is not None:
                return value, None, "json"
    return None


def _as_number(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        match = re.fullmatch(r"\s*(" + NUMBER + r")\s*(?:/\s*" + NUMBER + r")?\s*", value)
        if match:
            return float(match.group(1))
    return None


def parse_json_object(text):
    """The first JSON object in `text` (a fenced ```json block or a balanced {...}), or None."""
    text = text or ""
    for block in re.findall(r"```(?:json)?\s*(.*?)```", text, re.S | re.I):
        try:
            value = json.loads(block)
        except ValueError:
            continue
        if isinstance(value, (dict, list)):
            return value
    start = text.find("{")
    while start != -1:
        end = _balanced_end(text, start)
        if end is None:
            break
        try:
            value = json.loads(text[start : end + 1])
        except ValueError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return value
        start = text.find("{", end + 1)
    return None


def _balanced_end(text, start):
    depth, in_string, escaped = 0, False, False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index
    return None


# --- True/False verdicts -------------------------------------------------------------------

_VERDICT_WORD = r"(true|false|yes|no|correct|incorrect|pass|fail)"
_LABELLED_VERDICT = re.compile(
    r"(?:final\s+)?(?:verdict|answer|judg(?:e)?ment|conclusion|decision|result)\s*[:：=\-]?\s*[\[(]?\s*(?:\\boxed\{)?\s*"
    + _VERDICT_WORD
    + r"\b",
    re.I,
)
_BOXED_VERDICT = re.compile(r"\\boxed\{\s*(?:\\text\{)?\s*" + _VERDICT_WORD + r"\b", re.I)
_LINE_VERDICT = re.compile(r"^\s*[\[(]?\s*" + _VERDICT_WORD + r"\s*[\])]?\s*[.!]?\s*$", re.I | re.M)
_FLAGGED = re.compile(r"^\s*(?:flagged|problematic|first\s+(?:wrong|flawed))\s+step\s*[:：]\s*(.+)$", re.I | re.M)
_POSITIVE = {"true", "yes", "correct", "pass"}


@dataclass
class ParsedVerdict:
    value: bool | None
    status: str
    how: str = ""
    flagged_step: str = ""
    analysis: str = ""
    data: dict = field(default_factory=dict)


def parse_verdict(text):
    """Read a final True/False decision; the last one stated counts (it is the conclusion)."""
    body = strip_thinking(text)
    plain = _DECORATION.sub("", body)
    flagged = _FLAGGED.search(plain)
    flagged_step = flagged.group(1).strip() if flagged else ""
    analysis = body.strip()
    for pattern, how in ((_LABELLED_VERDICT, "label"), (_BOXED_VERDICT, "boxed"), (_LINE_VERDICT, "line")):
        matches = list(pattern.finditer(plain))
        if matches:
            word = matches[-1].group(1).lower()
            return ParsedVerdict(word in _POSITIVE, OK, how, flagged_step, analysis)
    data = parse_json_object(body)
    if isinstance(data, dict):
        lowered = {str(k).lower(): v for k, v in data.items()}
        for key in ("verdict", "answer", "correct", "result", "equivalent"):
            value = lowered.get(key)
            if isinstance(value, bool):
                return ParsedVerdict(value, OK, "json", flagged_step or str(lowered.get("flagged_step", "")), analysis, data)
            if isinstance(value, str) and value.strip().lower() in _POSITIVE | {"false", "no", "incorrect", "fail"}:
                return ParsedVerdict(value.strip().lower() in _POSITIVE, OK, "json", flagged_step, analysis, data)
    return ParsedVerdict(None, UNPARSEABLE, "", flagged_step, analysis)
