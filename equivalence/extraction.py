"""Find the final answer in a free-text solution.

Order of preference: the last ``\\boxed{}``; the last "final answer is" / "answer is" sentence
(IneqMath's convention); the last Chinese conclusion marker (答案, 所以, 故, 综上, 因此, ∴);
the last display or inline formula; the last number. Pure string work (no SymPy), so it is
cheap to call in a web request.
"""
import re

from .lexer import _cjk_pieces
from .normalize import normalize
from .reading import labelled, piecewise

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
    return _general(text)


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


def _boxes(text):
    """(start, end, content) of every ``\\boxed{...}`` with braces, in order."""
    found = []
    for match in BOXED.finditer(text):
        start = match.end()
        if start < len(text) and text[start] == "{":
            content = _balanced(text, start)
            if content is not None:
                found.append((match.start(), start + len(content) + 2, content))
    return found


def last_boxed(text):
    """Content of the last ``\\boxed{...}`` (nested braces allowed), or None."""
    matches = list(BOXED.finditer(text))
    for match in reversed(matches):
        start = match.end()
        if start < len(text) and text[start] == "{":
            content = _balanced(text, start)
            if content is not None:
                return content
        elif start < len(text):
            token = re.match(r"[^\s$]+", text[start:])
            if token:
                return token.group(0)
    return None


def _balanced(text, start):
    depth = 0
    for index in range(start, len(text)):
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
    lines = rest.split("\n")
    for line in lines[:3]:
        if line.strip():
            return line.strip()
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
