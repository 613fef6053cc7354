"""Find the final answer in a free-text solution.

:func:`final_answer` reads a whole solution (up to :data:`MAX_SOLUTION_CHARS` characters, a
chat-template tail such as ``<|im_start|>user`` dropped first) and returns the text it takes as
the answer with where it came from. Order of preference: the last ``\\boxed{}`` (a run of boxes
joined by "and" / "or" / 和 / 或 is one list); the last "final answer is" / "answer is" /
"Answer:" sentence (Minerva's "The final answer is $X$. I hope it is correct." included); the
last conclusion (故 / 所以 / 因此 / 综上 / 答： / therefore / hence / thus / so) in the last lines,
where the formula after the last "is" / 为 / 是 of the sentence counts (a label such as 最大值 or
a claim such as 单调递增 before it is kept, a clause such as 此时 ... after it is not, a root
marked 舍去 / rejected / 不合题意 is kept marked so the reading leaves it out); then the formulas of
the last line; then the last number *of the last line* (never one from an earlier line).

Pure string work (no SymPy), linear in the length of the text: every pattern is either anchored
or bounded, and a brace is matched within :data:`MAX_BRACED` characters. Cheap enough for a web
request, and only the extracted answer ever reaches the parser.
"""
import re
from dataclasses import dataclass

from .constants import MAX_SOLUTION_CHARS
from .lexer import _cjk_pieces
from .normalize import normalize
from .reading import labelled, piecewise

MAX_BRACED = 5000  # a brace further than this from its opening is not looked for
MAX_LINE = 2000  # characters of a concluding line that are read
TAIL_LINES = 3  # a conclusion marker counts in the last non-empty lines only

# Chat templates: what follows the end of the answer's turn is not the answer.
CHAT_TAG = re.compile(
    r"<\|(?:im_start|im_end|endoftext|eot_id|start_header_id|end_header_id|user|assistant|system|end|eos)\|>"
    r"|</s>|\[/?INST\]|<end_of_turn>|<start_of_turn>"
)
_LEADING_TURN = re.compile(r"^\s*(?:<\|im_start\|>\s*assistant|<\|start_header_id\|>\s*assistant\s*<\|end_header_id\|>|<\|assistant\|>|<start_of_turn>\s*model)\s*")


@dataclass(frozen=True)
class Extraction:
    """The text taken as the answer and where it was found.

    ``source``: "boxed", "answer-is", "conclusion", "last-formula", "last-line", or "none".
    ``marker``: the words that introduced it ("The final answer is", "所以", "Therefore"...).
    ``dropped_tail``: True when a chat-template tail after the answer was left out.
    """

    answer: object
    source: str
    marker: str = ""
    dropped_tail: bool = False


_ASSISTANT_TURN = re.compile(r"<\|im_start\|>\s*assistant|<\|start_header_id\|>\s*assistant\s*<\|end_header_id\|>|<\|assistant\|>|<start_of_turn>\s*model")


def drop_chat_tail(text):
    """(text before the first chat-template tag after the answer's turn, whether one was cut).

    A whole conversation pasted (it starts with a system or user turn) is read from its first
    assistant turn; turns a model went on to invent after its answer are never read."""
    stripped = text.lstrip()
    if CHAT_TAG.match(stripped) and not _LEADING_TURN.match(stripped):
        turn = _ASSISTANT_TURN.search(stripped)
        if turn is not None:
            text = stripped[turn.end():]
    start = _LEADING_TURN.match(text)
    if start:
        text = text[start.end():]
    tag = CHAT_TAG.search(text)
    if tag is None:
        return text, False
    return text[: tag.start()], True


def final_answer(text):
    """The final answer of a whole solution as an :class:`Extraction` (``answer`` None if none)."""
    if not text or not isinstance(text, str):
        return Extraction(None, "none")
    text, cut = drop_chat_tail(text)
    text = text[-MAX_SOLUTION_CHARS:]
    boxed = final_boxed(text)
    if boxed is not None and boxed.strip():
        return Extraction(boxed.strip(), "boxed", "\\boxed", cut)
    sentence = _answer_sentence(text)
    if sentence:
        marker = list(ANSWER_IS.finditer(text))[-1].group(0).strip(" :：")
        return Extraction(sentence, "answer-is", marker, cut)
    tail = _tail_lines(text)
    found = _conclusion(tail)
    if found is not None:
        return Extraction(found[0], "conclusion", found[1], cut)
    last = _last_line(tail)
    if last is None:
        return Extraction(None, "none", "", cut)
    if _is_worded(last):
        return Extraction(last.strip(" .。"), "last-line", "", cut)  # labels or branches: the whole line
    value = _line_value(last)
    if value:
        return Extraction(value, "last-formula", "", cut)
    if value == "":
        return Extraction(None, "none", "", cut)  # "$x = 2$ is not a solution"
    numbers = LAST_NUMBER.findall(last)
    if numbers:
        return Extraction(numbers[-1], "last-line", "", cut)
    return Extraction(None, "none", "", cut)


def _tail_lines(text):
    """The last TAIL_LINES non-empty lines (found from the end: linear in what is read)."""
    end = len(text)
    kept = 0
    index = end
    while index > 0 and kept < TAIL_LINES:
        previous = text.rfind("\n", 0, index)
        if text[previous + 1 : index].strip():
            kept += 1
        index = max(previous, 0)
        if previous < 0:
            break
    return text[index:]


def _last_line(text):
    for line in reversed(text.split("\n")):
        if line.strip():
            return line.strip()
    return None


# A conclusion in the last lines: Chinese markers or English ones, whichever is last.
CONCLUSION_MARKERS = re.compile(
    r"(?:故答案为|答案是|答案为|最终答案|答案|综上所述|综上可知|综上|所以|因此|故|∴|从而|于是|解得|答\s*[:：])[:：,，\s]*"
    r"|(?<![A-Za-z])(?:[Tt]herefore|[Hh]ence|[Tt]hus|[Ss]o|[Ii]n\s+conclusion|[Cc]onsequently|[Ff]inally)(?![A-Za-z])[,:]?\s*"
)


def _conclusion(tail):
    matches = list(CONCLUSION_MARKERS.finditer(tail))
    for match in reversed(matches[-4:]):  # the last markers only: bounded work per text
        rest = tail[match.end():]
        line = _first_line_with_math(rest)
        if line is None:
            continue
        cjk = bool(CJK.search(match.group(0)) or match.group(0).startswith("∴"))
        sentence = _sentence(rest)
        if sentence and _is_worded(sentence):
            return sentence, match.group(0).strip(" ,，:：")
        value = _line_value(line) if "$" in line or "\\(" in line or "\\[" in line else None
        if value == "":
            return None  # the concluding value is said to be wrong: no answer here
        if value is None:
            value = _clean_tail(rest, cjk=cjk)
        if value:
            return value, match.group(0).strip(" ,，:：")
    return None


# The value of a concluding sentence: the formulas after its last "is" / 为 / 是.
_AFTER_ANSWER = re.compile(
    r"[,，;；]\s*(?:此时|这时|其中(?![^,，]*(?:舍|不合|不符))|当且仅当|等号成立|取等|(?i:where|when|with|at\s+which|attained|achieved|which|since|because|as\s+required|and\s+this))"
    r"|(?<![\d])[.。](?:\s|$)(?!\s*(?:\$|\\\(|x|y))|(?i:\bI\s+hope\b)"
)
_COPULA = re.compile(r"(?<![A-Za-z])(?:is|are|equals?|be|was|were|gives?|get|becomes?)(?![A-Za-z])|为|是|等于|得|[:：=]")
_JOIN = re.compile(r"^\s*(?:,|，|、|;|；|(?i:and|or)|和|或|及|以及|与)?\s*$")
_REJECT_MARK = re.compile(r"^\s*(?:[(（]\s*)?(?:不合题意|不符合题意|不符题意|应?舍去?|舍|(?i:is\s+rejected|rejected|is\s+extraneous|extraneous|discarded))")
_REJECT_BEFORE = re.compile(r"(?:经检验|检验知|其中|但|(?i:but|and|however))?\s*$")
_NAMED_VALUES = re.compile(
    r"\$\s*([a-zA-Z](?:_\{?\w{1,8}\}?)?)\s*\$\s*(?:is|equals|=|为|是|等于)\s*\$([^$=]{1,200})\$"
)
_NEGATED = re.compile(
    r"^\s*(?:(?i:is|are|was|would\s+be)\s+(?:not|wrong|incorrect|false|invalid|impossible|extraneous)(?![A-Za-z])|(?i:isn't|aren't)"
    r"|不是|错误|不正确|不成立|不可能)"
)
_LABEL_OR_CLAIM = None  # built on first use (meaning imports nothing heavy, but keep imports lean)


def _line_value(line):
    """The answer of one concluding line with formulas, or None when it has no formula."""
    line = line[-MAX_LINE:]  # a concluding line is read from its end: bounded work
    named = _NAMED_VALUES.findall(line)
    if len(named) >= 2 and len({name for name, _ in named}) == len(named):
        # "the value of $k$ is $-3$, and the value of $m$ is $5$": every named value counts.
        return ", ".join(f"{name} = {value.strip()}" for name, value in named)
    cut = _AFTER_ANSWER.search(line)
    rejected = _rejected_segments(line)
    if cut is not None and not rejected:
        line = line[: cut.start()]
    segments = [(m.start(), m.end(), next(g for g in m.groups() if g is not None).strip()) for m in MATH_SEGMENT.finditer(line)]
    segments = [segment for segment in segments if segment[2]]
    # "经检验 $x = -1$ 不符合题意": a mention of a rejected value already given is not a value.
    seen = set()
    kept = []
    for segment in segments:
        if segment[2] in rejected and segment[2] in seen:
            continue
        seen.add(segment[2])
        kept.append(segment)
    segments = kept
    if not segments:
        return None
    # The last copula in the prose between formulas (or inside the formula before the last run).
    first = 0
    for index in range(len(segments) - 1, 0, -1):
        gap = line[segments[index - 1][1] : segments[index][0]]
        if not _JOIN.match(gap) and not _REJECT_MARK.match(gap) and not _rejected_gap(gap):
            first = index
            break
    run = segments[first:]
    if first > 0 and not _COPULA.search(line[segments[first - 1][1] : run[0][0]]):
        run = segments[-1:]
    prefix_start = segments[first - 1][1] if first > 0 and run[0] is segments[first] else 0
    if run[0] is not segments[first]:
        prefix_start = segments[-2][1] if len(segments) > 1 else 0
    pieces = []
    for index, (start, end, content) in enumerate(run):
        if index:
            gap = line[run[index - 1][1] : start]
            word = re.search(r"或|(?i:\bor\b)", gap)
            pieces.append(" 或 " if word else ", ")
        pieces.append(content)
        if content in rejected:
            pieces.append("（舍去）")
    value = "".join(pieces)
    if _NEGATED.match(line[run[-1][1]:]):
        return ""  # "$x = 2$ is not a solution": a value said to be wrong is not the answer
    prefix = line[prefix_start : run[0][0]]
    label = _label_or_claim(prefix)
    if label is not None:
        value = re.sub(r"\$", "", prefix[label:]).strip() + " " + value
    return value.strip() or None


def _rejected_segments(line):
    """The contents of formulas marked rejected (``$x=-1$ 不合题意，舍去``, ``$x = -3$ (rejected)``)."""
    rejected = set()
    for match in MATH_SEGMENT.finditer(line):
        after = line[match.end() : match.end() + 24]
        if _REJECT_MARK.match(after):
            rejected.add(next(g for g in match.groups() if g is not None).strip())
    return rejected


def _rejected_gap(gap):
    return bool(re.search(r"经检验|舍|不合题意|不符合题意|(?i:reject|extraneous)", gap))


def _label_or_claim(prefix):
    """Where a label (最大值, maximum) or a meaning word (单调递增) starts in ``prefix``, or None."""
    global _LABEL_OR_CLAIM
    if _LABEL_OR_CLAIM is None:
        from .meaning import _PATTERN as words  # the meaning words, compiled once
        from .reading import _LABEL_RE as labels

        _LABEL_OR_CLAIM = (labels, words)
    prefix = prefix.replace("最小正周期", "     ")  # the period, not a minimum
    starts = [m.start() for pattern in _LABEL_OR_CLAIM for m in [pattern.search(prefix)] if m is not None]
    return min(starts) if starts else None

BOXED = re.compile(r"\\(?:boxed|fbox)\s*")
ANSWER_IS = re.compile(
    r"(?:final\s+answer|answer)\s*(?:is|was|would\s+be|will\s+be|should\s+be|=|:|：)\s*:?\s*",
    re.IGNORECASE,
)
CJK_MARKERS = re.compile(r"(?:故答案为|答案是|答案为|最终答案|答案|综上所述|综上|所以|因此|故|∴|解得)[:：,，\s]*")
CJK = re.compile(r"[\u3400-\u9fff]")
MATH_SEGMENT = re.compile(r"\$\$(.+?)\$\$|\\\[(.+?)\\\]|\\\((.+?)\\\)|\$(.+?)\$", re.S)
LAST_NUMBER = re.compile(r"-?\d+(?:[.,]\d+)*(?:/\d+)?")
OPTION = re.compile(r"\(\s*([A-F])\s*\)|\b([A-F])\s*\)|(?:option|choice)\s+\(?([A-F])\b|^\s*([A-F])\s*$", re.IGNORECASE)
RELATION_SYMBOLS = [
    (re.compile(r"\\(?:leq|le|leqslant)(?![a-zA-Z])|≤|⩽|<="), r"\leq", "A"),
    (re.compile(r"\\(?:geq|ge|geqslant)(?![a-zA-Z])|≥|⩾|>="), r"\geq", "B"),
    (re.compile(r"(?<![<>!\\])=(?!=)"), "=", "C"),
    (re.compile(r"\\lt(?![a-zA-Z])|(?<![\\a-zA-Z])<(?!=)"), "<", "D"),
    (re.compile(r"\\gt(?![a-zA-Z])|(?<![\\a-zA-Z-])>(?!=)"), ">", "E"),
]
BOUND = re.compile(r"\bC\s*=\s*(.+)")
MAX_TEXT = 200_000


def extract_answer(text, kind=None):
    """Return the final answer in ``text`` as a string, or None if there is none.

    ``kind="bound"`` returns the value of ``C = ...``; ``kind="relation"`` returns the
    option letter (``"B"``) or, without a letter, the relation symbol (``"\\geq"``).
    """
    if not text or not isinstance(text, str):
        return None
    text = text[-MAX_TEXT:]
    if kind == "relation":
        return _relation(text)
    if kind == "bound":
        return _bound(text)
    if kind is not None:
        raise ValueError(f"unknown answer kind {kind!r} (None, 'bound' or 'relation')")
    return final_answer(text).answer


def _general(text):
    boxed = final_boxed(text)
    if boxed is not None and boxed.strip():
        return boxed.strip()
    sentence = _answer_sentence(text)
    if sentence:
        return sentence
    marked = _cjk_conclusion(text)
    if marked:
        return marked
    worded = _worded_conclusion(text)
    if worded:
        return worded
    segments = _math_segments(text)
    if segments:
        return segments[-1]
    numbers = LAST_NUMBER.findall(text)
    return numbers[-1] if numbers else None


# Between two boxed answers of one list: "$\\boxed{2}$ and $\\boxed{-3}$", "x = \\boxed{1} or x = \\boxed{2}".
_BOX_GAP = re.compile(
    r"(?:[\s$,，、;；]|\\[,;!quad ]+|\\text\{\s*(?:and|or)\s*\}|\b(?:and|or)\b|和|或|及|以及|[A-Za-z](?:_\{?\d\}?)?\s*=)*",
    re.IGNORECASE,
)
MAX_BOX_GAP = 40


def final_boxed(text):
    """The last ``\\boxed{}``, or the last run of boxed answers written as one list.

    "the roots are $\\boxed{2}$ and $\\boxed{-3}$" gives ``2 , -3``; boxes far apart (answers
    to different parts, intermediate results) are not joined.
    """
    boxes = _boxes(text)
    if not boxes:
        return last_boxed(text)
    run = [boxes[-1]]
    saw_or = False
    for previous in reversed(boxes[:-1]):
        gap = text[previous[1] : run[0][0]]
        if len(gap) > MAX_BOX_GAP or not _BOX_GAP.fullmatch(gap):
            break
        saw_or = saw_or or bool(re.search(r"\bor\b|或", gap, re.IGNORECASE))
        run.insert(0, previous)
    contents = [content.strip() for _, _, content in run if content.strip()]
    if len(contents) <= 1:
        return run[-1][2]
    return (" or " if saw_or else " , ").join(contents)


def _brace_pairs(text):
    """{index of an opening brace: index of its closing brace}, in one pass (escaped braces skipped)."""
    pairs, stack = {}, []
    for index, char in enumerate(text):
        if char == "{" and (index == 0 or text[index - 1] != "\\"):
            stack.append(index)
        elif char == "}" and (index == 0 or text[index - 1] != "\\") and stack:
            pairs[stack.pop()] = index
    return pairs


def _boxes(text):
    """(start, end, content) of every ``\\boxed{...}`` with braces, in order (linear in the text)."""
    found = []
    pairs = None
    for match in BOXED.finditer(text):
        start = match.end()
        if start < len(text) and text[start] == "{":
            pairs = _brace_pairs(text) if pairs is None else pairs
            close = pairs.get(start)
            if close is not None:
                found.append((match.start(), close + 1, text[start + 1 : close]))
    return found


def last_boxed(text):
    """Content of the last ``\\boxed{...}`` (nested braces allowed), or None."""
    matches = list(BOXED.finditer(text))
    pairs = None
    for match in reversed(matches):
        start = match.end()
        if start < len(text) and text[start] == "{":
            pairs = _brace_pairs(text) if pairs is None else pairs
            close = pairs.get(start)
            if close is not None:
                return text[start + 1 : close]
        elif start < len(text):
            token = re.match(r"[^\s$]+", text[start:])
            if token:
                return token.group(0)
    return None


def _balanced(text, start):
    depth = 0
    for index in range(start, min(len(text), start + MAX_BRACED)):
        char = text[index]
        if char == "\\":
            continue
        if char == "{" and (index == 0 or text[index - 1] != "\\"):
            depth += 1
        elif char == "}" and (index == 0 or text[index - 1] != "\\"):
            depth -= 1
            if depth == 0:
                return text[start + 1 : index]
    return None


def _answer_sentence(text):
    matches = list(ANSWER_IS.finditer(text))
    if not matches:
        return None
    rest = text[matches[-1].end():]
    return _clean_tail(rest)


def _cjk_conclusion(text):
    matches = list(CJK_MARKERS.finditer(text))
    if not matches:
        return None
    rest = text[matches[-1].end():]
    sentence = _sentence(rest)
    if sentence and _is_worded(sentence):
        return sentence  # "最大值为 2，最小值为 -1", "当 a ≤ 1 时 ...": the words are part of the answer
    return _clean_tail(rest, cjk=True)


EN_MARKERS = re.compile(r"\b(?:therefore|hence|thus|so|in\s+conclusion)\b[,:]?\s*", re.IGNORECASE)


def _worded_conclusion(text):
    """"Therefore, the maximum value is 2 and the minimum value is -1.": a labelled or piecewise
    answer after the last English conclusion marker (other conclusions are read as before)."""
    matches = list(EN_MARKERS.finditer(text[-5000:]))
    if not matches:
        return None
    sentence = _sentence(text[-5000:][matches[-1].end():])
    return sentence if sentence and _is_worded(sentence) else None


def _sentence(rest):
    line = _first_line_with_math(rest)
    if line is None:
        return None
    return re.split(r"。|(?<!\d)\.(?!\d)", line)[0].strip(" ,，;；") or None


def _is_worded(sentence):

    normal = normalize(sentence)
    return labelled(normal) is not None or piecewise(normal) is not None


def _clean_tail(rest, cjk=False):
    """The answer part of what follows a marker: up to the line end, math preferred."""
    line = _first_line_with_math(rest)
    if line is None:
        return None
    boxed = final_boxed(line)
    if boxed is not None:
        return boxed.strip() or None
    segments = _math_segments(line)
    if segments:
        if len(segments) > 1 and re.search(r"\$\s*(?:or|and|或|和|,|，)\s*\$", line):
            return " , ".join(segments) if "," in line or "，" in line else " or ".join(segments)
        return segments[-1] if cjk else " ".join(segments) if _only_math_and_joiners(line) else segments[0]
    line = re.split(r"(?<!\d)[.。](?!\d)|\.\s", line)[0]
    if cjk and CJK.search(line):
        tail = re.split(r"为|是|等于|[:：]", line)[-1]
        line = re.sub(r"^[\u3400-\u9fff，,\s]+", "", tail)
        line = re.sub(r"[\u3400-\u9fff]+$", _keep_units, line)
    line = line.strip(" \t*`\"'.。")
    return line or None


def _keep_units(match):
    """A trailing Chinese unit is part of the answer (12个 is not 12元); other trailing words go."""

    return match.group(0) if _cjk_pieces(match.group(0)) is not None else ""


def _first_line_with_math(rest):
    start = 0
    for _ in range(3):
        end = rest.find("\n", start)
        line = rest[start:] if end < 0 else rest[start:end]
        if line.strip():
            return line.strip()[:MAX_LINE]
        if end < 0:
            return None
        start = end + 1
    return None


def _only_math_and_joiners(line):
    leftover = MATH_SEGMENT.sub("", line)
    return not re.sub(r"(?:or|and|或|和|[,，;；.。\s])", "", leftover)


def _math_segments(text):
    segments = []
    for match in MATH_SEGMENT.finditer(text):
        content = next(group for group in match.groups() if group is not None)
        if content.strip():
            segments.append(content.strip())
    return segments


def _ineqmath_tail(text):
    """IneqMath's rule: the last "answer is" sentence, else the last three lines."""
    matches = list(ANSWER_IS.finditer(text))
    if matches:
        start = matches[-1].start()
        return text[start:].split("\n\n")[0]
    lines = [line for line in text.strip().split("\n") if line.strip()]
    return "\n".join(lines[-3:])


def _relation(text):
    tail = _ineqmath_tail(text)
    boxed = last_boxed(tail)
    if boxed is not None:
        tail = boxed
    match = None
    for match in OPTION.finditer(tail):
        pass
    if match is not None:
        letter = next(group for group in match.groups() if group)
        return letter.upper()
    answer_part = ANSWER_IS.split(tail)[-1]
    found = []
    for pattern, symbol, _letter in RELATION_SYMBOLS:
        for hit in pattern.finditer(answer_part):
            found.append((hit.start(), symbol))
    if not found:
        return None
    return min(found)[1] if ANSWER_IS.search(tail) else max(found)[1]


def _bound(text):
    tail = _ineqmath_tail(text)
    boxed = last_boxed(tail)
    if boxed is not None:
        tail = boxed
    hits = list(BOUND.finditer(tail.replace("$", " ")))
    if hits:
        value = hits[-1].group(1)
        value = re.split(r"\s(?:and|or|with|when|where|for)\s|[。\n]|\.\s|\.$|,\s", value)[0]
        value = value.strip(" .。*`")
        return value or None
    return _general(text)
