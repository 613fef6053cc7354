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
        end = balanced_end(text, start)
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


def balanced_end(text, start):
    """Where the ``{...}`` opening at `start` closes (braces inside JSON strings, escaped quotes
    included, do not count), or None if it never does."""
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


# --- points per sub-question ---------------------------------------------------------------

PARTIAL = "partial"
_SUB_KEYS = re.compile(r"^\s*sub[\s_-]*(?:questions?|parts?)?[\s_-]*(?:scores?|points?|marks?)\s*$", re.I)
_LABEL_TOKEN = re.compile(r"[（(\[]\s*([0-9]+|[ivxlc]+|[a-z])\s*[)）\]]|(?:^|[\s.#_-])([0-9]+|[ivxlc]+|[a-z])\s*$", re.I)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


@dataclass
class ParsedSubScores:
    """Points per sub-question label read from a judge's answer (`scores`), how complete that is
    (`status`: ok, partial or unparseable) and what was left out and why (`notes`)."""

    scores: dict
    status: str
    notes: list = field(default_factory=list)


def label_token(label):
    """The canonical token of a sub-question label: '(1)', ' ( 1 ) ', 'Part 1', 'sub-question 1' and
    '1' all give '1'; '(II)' and '(ii)' give 'ii'. Empty when the label has none."""
    text = str(label or "").strip()
    match = _LABEL_TOKEN.search(text)
    if match:
        return (match.group(1) or match.group(2)).lower()
    return re.sub(r"\s+", "", text).lower()


def _json_candidates(text):
    """Every JSON object in `text`: fenced blocks first, then balanced {...}; a trailing comma is
    forgiven. Yields dicts."""
    blocks = re.findall(r"```(?:json)?\s*(.*?)```", text, re.S | re.I)
    spans, start = [], text.find("{")
    while start != -1:
        end = balanced_end(text, start)
        if end is None:
            break
        spans.append(text[start : end + 1])
        start = text.find("{", end + 1)
    for chunk in [*blocks, *spans]:
        for attempt in (chunk, _TRAILING_COMMA.sub(r"\1", chunk)):
            try:
                value = json.loads(attempt)
            except ValueError:
                continue
            if isinstance(value, dict):
                yield value
            break


def _sub_points(value):
    if isinstance(value, dict):  # {"points": 3} / {"score": 3}
        lowered = {str(k).strip().lower(): v for k, v in value.items()}
        for key in ("points", "score", "awarded", "value"):
            if key in lowered:
                return _as_number(lowered[key])
        return None
    return _as_number(value)


def _sub_mapping(data, tokens):
    """The {label: value} part of a parsed object: under a 'sub_scores'-like key, or the object
    itself when its keys name sub-questions."""
    for key, value in data.items():
        if _SUB_KEYS.match(str(key)) and isinstance(value, dict):
            return value
        if _SUB_KEYS.match(str(key)) and isinstance(value, list):  # [{"label": "(1)", "points": 3}]
            mapping = {}
            for entry in value:
                if isinstance(entry, dict):
                    lowered = {str(k).strip().lower(): v for k, v in entry.items()}
                    label = lowered.get("label", lowered.get("sub_question", lowered.get("part")))
                    if label is not None:
                        mapping[str(label)] = entry
            return mapping
    if any(label_token(key) in tokens for key in data):
        return data
    return None


def parse_sub_scores(text, maxima):
    """Read the judge's points per sub-question from `text`.

    `maxima` maps each sub-question label to its maximum (None when unknown). Labels match
    whatever their spacing, case or wording ('(1)', 'Part 1', '1'); numbers may be strings
    ("3", "3.5", "3/5" reads 3). A value below 0 or above the maximum, a value that is not a
    number and an unknown label are left out with a note. Never raises.
    """
    try:
        return _parse_sub_scores(text, maxima)
    except Exception as exc:  # the last line of defence: model text must never crash a run
        return ParsedSubScores({}, UNPARSEABLE, [f"could not read the sub-question scores ({type(exc).__name__})"])


def _parse_sub_scores(text, maxima):
    maxima = dict(maxima or {})
    tokens = {label_token(label): label for label in maxima}
    body = strip_thinking(text)
    mapping = None
    for data in _json_candidates(body):
        mapping = _sub_mapping(data, tokens)
        if mapping is not None:
            break
    if mapping is None:
        return ParsedSubScores({}, UNPARSEABLE, ["no JSON object with points per sub-question"])
    scores, notes = {}, []
    for key, raw in mapping.items():
        label = tokens.get(label_token(key))
        if label is None:
            notes.append(f"unknown sub-question {str(key)[:40]!r} left out")
            continue
        value = _sub_points(raw)
        if value is None:
            notes.append(f"{label}: {str(raw)[:40]!r} is not a number")
            continue
        top = maxima.get(label)
        if value < 0 or (top is not None and value > float(top) + 1e-9):
            notes.append(f"{label}: {value:g} is outside 0..{'?' if top is None else f'{float(top):g}'}, left out")
            continue
        scores[label] = value
    missing = [label for label in maxima if label not in scores]
    if missing and scores:
        notes.append(f"no usable points for {', '.join(missing)}")
    status = OK if not missing else PARTIAL if scores else UNPARSEABLE
    return ParsedSubScores(scores, status, notes)


# --- the step report of a rubric judge (first wrong step, checkpoints reached) ---------------

_STEP_NUMBER = re.compile(r"^\s*(?:step\s*|\[)?\s*(\d{1,4})\s*\]?\s*$", re.I)
_NO_STEP = {"none", "null", "no", "no wrong step", "n/a", "na", "-", "—"}
_CHECKPOINT_KEY = re.compile(r"^\s*(?:c|checkpoint|cp)?\s*[#\[]?\s*(\d{1,4})\s*\]?\s*$", re.I)
_REACHED = {"true": True, "yes": True, "reached": True, "y": True,
            "false": False, "no": False, "not reached": False, "not_reached": False, "n": False}


@dataclass
class ParsedStepReport:
    """What a rubric judge said about steps (`first_wrong_step`: a step number, or None for no wrong
    step, meaningful only when `first_wrong_step_read`) and checkpoints ({number: reached}); `status`
    is ok (all read), partial or unparseable (nothing read: never guessed)."""

    first_wrong_step: int | None
    first_wrong_step_read: bool
    checkpoints: dict
    status: str
    notes: list = field(default_factory=list)

    def as_dict(self, steps, checkpoints):
        return {"status": self.status, "first_wrong_step": self.first_wrong_step,
                "first_wrong_step_read": self.first_wrong_step_read, "checkpoints": self.checkpoints,
                "steps": steps, "checkpoint_count": checkpoints, "notes": self.notes}


def _step_object(text):
    for data in _json_candidates(text):
        lowered = {str(k).strip().lower(): v for k, v in data.items()}
        inner = lowered.get("step_report")
        if isinstance(inner, dict):
            return {str(k).strip().lower(): v for k, v in inner.items()}
        if "first_wrong_step" in lowered or "checkpoints_reached" in lowered:
            return lowered
    return None


def _first_wrong(value, steps):
    """(step number or None, read?, note)."""
    if value is None:
        return None, True, ""
    if isinstance(value, bool):
        return None, False, f"first_wrong_step {value!r} is not a step number"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str):
        if value.strip().lower() in _NO_STEP:
            return None, True, ""
        match = _STEP_NUMBER.match(value)
        if not match:
            return None, False, f"first_wrong_step {value[:40]!r} is not a step number"
        value = int(match.group(1))
    if not isinstance(value, int):
        return None, False, f"first_wrong_step {str(value)[:40]!r} is not a step number"
    if not 1 <= value <= steps:
        return None, False, f"first_wrong_step {value} is outside 1..{steps}"
    return value, True, ""


def _reached(value):
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return _REACHED.get(value.strip().lower())
    return None


def parse_step_report(text, steps, checkpoints):
    """Read a rubric judge's step report: `steps` and `checkpoints` are how many of each the prompt
    listed (numbered from 1). A step number outside 1..steps, a checkpoint number not listed and a
    value that is not yes/no are left out with a note; nothing is guessed. Never raises."""
    try:
        return _parse_step_report(text, int(steps), int(checkpoints))
    except Exception as exc:  # the last line of defence: model text must never crash a run
        return ParsedStepReport(None, False, {}, UNPARSEABLE, [f"could not read the step report ({type(exc).__name__})"])


def _parse_step_report(text, steps, checkpoints):
    data = _step_object(strip_thinking(text))
    if data is None:
        return ParsedStepReport(None, False, {}, UNPARSEABLE, ["no JSON step_report block"])
    notes = []
    first, first_read = None, False
    if steps:
        if "first_wrong_step" in data:
            first, first_read, note = _first_wrong(data["first_wrong_step"], steps)
            if note:
                notes.append(note)
        else:
            notes.append("no first_wrong_step")
    raw = data.get("checkpoints_reached", data.get("checkpoints"))
    reached = {}
    if checkpoints:
        if isinstance(raw, list):  # [true, false, ...] in checkpoint order
            raw = {str(n): value for n, value in enumerate(raw, 1)} if len(raw) == checkpoints else None
            if raw is None:
                notes.append("checkpoints_reached lists another number of checkpoints")
        if isinstance(raw, dict):
            for key, value in raw.items():
                match = _CHECKPOINT_KEY.match(str(key))
                number = int(match.group(1)) if match else None
                if number is None or not 1 <= number <= checkpoints:
                    notes.append(f"unknown checkpoint {str(key)[:40]!r} left out")
                    continue
                flag = _reached(value)
                if flag is None:
                    notes.append(f"checkpoint {number}: {str(value)[:40]!r} is not true or false")
                    continue
                reached[str(number)] = flag
        elif raw is not None or "checkpoints_reached" not in data:
            notes.append("no checkpoints_reached object")
        missing = [str(n) for n in range(1, checkpoints + 1) if str(n) not in reached]
        if missing and reached:
            notes.append(f"no usable answer for checkpoints {', '.join(missing)}")
    else:
        missing = []
    complete = (first_read or not steps) and not missing
    anything = first_read or bool(reached)
    status = OK if complete and anything else PARTIAL if anything else UNPARSEABLE
    return ParsedStepReport(first, first_read, dict(sorted(reached.items(), key=lambda kv: int(kv[0]))), status, notes)
