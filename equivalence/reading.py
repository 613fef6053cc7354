"""What an answer written in words says: the stated final answer, its labels, its branches.

Pure string work on normalised text (no SymPy, nothing evaluated), done before the parser:

- **reasoning tails**: the part after the last conclusion marker (所以, 故, 因此, 综上所述,
  therefore, hence, thus); a justification after the answer (经检验符合题意, "which satisfies
  the equation") is left out; an item marked rejected (``x = -1（舍去）``, 不合题意, "(rejected)")
  is not part of the answer.
- **relations in words**: "greater than or equal to", 大于等于, 不小于 become ``\\ge`` and so on.
- **prose around the answer**: "实数 a 的取值范围是 a ≥ 2", "the solution set is (1, 3)".
- **labelled answers**: "最大值为 2，最小值为 -1", "max 2, min -1", "increasing on (0, 1)",
  "(0, 1) 上单调递增": a list of (label, value text), compared label by label.
- **yes/no answers**: 是 / 否, 存在 / 不存在, 有解, yes / no.
- **piecewise answers**: ``\\begin{cases} ... \\end{cases}``, ``3 (n = 1), 2^n (n ≥ 2)``,
  "当 a ≤ 1 时 ...; 当 a > 1 时 ...": a list of (condition text or None for "otherwise", value text).

Every step is bounded by the length of the answer (at most a few passes of linear regular
expressions over at most 5,000 characters).
"""
import re
from dataclasses import dataclass, field

from .messages import M
from .normalize import normalize

CJK = r"\u3400-\u9fff"


@dataclass
class Reading:
    """The answer as read: ``text`` for the parser (when not labelled, polar or piecewise)."""

    text: str
    notes: list = field(default_factory=list)  # what was left out and why, for the explanation
    labels: list = None  # [(key, word as written, value text)]
    polar: str = ""  # "yes", "no", "exists", "not-exists", "has-solution"
    polar_word: str = ""
    branches: list = None  # [(condition text or None, value text)]
    head: str = ""  # "a_n", "f(x)", "y" before "= \\begin{cases}"
    named: list = None  # [("AB", "3"), ("BC", "4")] for "AB = 3, BC = 4" (the text is then "(3, 4)")
    domain: str = ""  # "n \\ge 2" for "C = \\frac{n}{n-1}, n \\ge 2": a domain the answer states (issue 41)


def read(text):
    """Read ``text`` (an answer already unwrapped from ``\\boxed{}``); never raises."""
    notes = []
    normal = normalize(text)
    normal = conclusion(normal, notes)
    normal = drop_justification(normal, notes)
    normal = relation_words(normal)
    pieces = piecewise(normal)
    if pieces is not None:
        head, branches = pieces
        return Reading(normal, notes, branches=branches, head=head)
    normal = drop_rejected(normal, notes)
    normal = notations(normal, notes)
    normal, domain = answer_domain(normal)
    if domain:
        return _with_domain(read(normal), domain, notes)
    normal = statement_subject(normal)
    counted = count_answer(normal)
    if counted is not None:
        return Reading(normal, notes, labels=[counted])
    polar, word = polar_answer(normal)
    if polar:
        return Reading(normal, notes, polar=polar, polar_word=word)
    labels = labelled(normal)
    if labels is not None:
        return Reading(normal, notes, labels=labels)
    names, values = named_values(normal)
    if names:
        notes.append(M('{join_names} read in the order written', join_names=', '.join(names)))
        return Reading("(" + ", ".join(values) + ")", notes, named=list(zip(names, values)))
    return Reading(prose_prefix(normal), notes)


def _with_domain(reading, domain, notes):
    reading.domain = domain
    reading.notes[:0] = [note for note in notes if note not in reading.notes]
    return reading


# --- a domain written with the answer (issue 41) -----------------------------------------------------

# A condition on one letter: an inequality or a membership, in symbols or in words.
_CONDITION_MARK = re.compile(r"\\(?:ge|le|geq|leq|in|gt|lt)(?![A-Za-z])|[<>≤≥∈]|为正整数|为整数|为自然数|(?i:\bis\s+an?\s+(?:positive\s+)?integer)")
_DOMAIN_LEAD = re.compile(r"^\s*(?:其中|这里|(?:\\text\s*\{\s*)?(?i:where|with|here)(?:\s*\})?)\s*,?\s*")
_RELATION_AT_TOP = re.compile(r"\\(?:ge|le|geq|leq|in|gt|lt|ne|neq)(?![A-Za-z])|[<>≤≥∈≠]|或|(?i:\bor\b)")
_ASSIGNED = re.compile(r"^\s*(?P<head>[A-Za-z](?:_\{?\w+\}?)?(?:\s*\([^()]*\))?)\s*=(?!=)")
_INTEGER_SET = re.compile(r"\\mathbb\s*\{?\s*Z|\\mathbf\s*\{?\s*Z|ℤ|\\Z(?![A-Za-z])|(?<![A-Za-z\\])Z(?![A-Za-z])|为整数|(?i:an\s+integer)")


def answer_domain(text):
    """(the answer, the domain it states) for "C = \\frac{n}{n-1}, n \\ge 2", "a_n = 2n - 1 (n \\in
    \\mathbb{N}^*)", "S = p + 1, 其中 p \\in \\mathbb{N}^*"; (text, "") when it states none.

    Only a condition (an inequality or a membership, not ``= ``) on a letter the rest uses, after an
    expression or equation, is a domain: "x = 1, y = 2", "x = 1, x \\ge 2" (x is the assigned
    unknown), "x > 1, x < 3", intervals and lists are answers. ``k \\in \\mathbb{Z}`` is left to the
    declarations of solution families.
    """
    stripped = text.strip().rstrip(".。").rstrip()
    rest, condition = _trailing_parenthesis(stripped)
    if not condition:
        rest, condition = _trailing_items(stripped)
    if not condition:
        return text, ""
    condition = _DOMAIN_LEAD.sub("", condition).strip()
    rest = re.sub(r"(?:[,;]\s*)?(?:其中|这里|(?:\\text\s*\{\s*)?(?i:where|with)(?:\s*\})?)\s*$", "", rest.strip()).rstrip(" ,;")
    if not rest or not condition or not _CONDITION_MARK.search(condition) or _INTEGER_SET.search(condition):
        return text, ""
    depths = _depths(rest)
    if any(depths[m.start()] == 0 for m in _RELATION_AT_TOP.finditer(rest)) or len(_top_level_items(rest)) != 1:
        return text, ""  # the rest must be one expression or equation, not a condition or a list
    from .domains import DomainError, parse_domain  # lazy: SymPy's parser

    try:
        letters = parse_domain(condition)
    except DomainError:
        return text, ""
    assigned = _ASSIGNED.match(rest)
    for name in letters:
        if assigned and assigned.group("head").strip() == name:
            return text, ""  # "x = 1, x \\ge 2": a second answer about x, not a domain
        if not re.search(r"(?<![A-Za-z\\])" + re.escape(name) + r"(?![A-Za-z])", rest):
            return text, ""
    return rest, condition


def _trailing_parenthesis(text):
    """("C = ...", "n \\ge 2") for "C = ... (n \\ge 2)"."""
    if not text.endswith(")"):
        return text, ""
    depth = 0
    for index in range(len(text) - 1, -1, -1):
        char = text[index]
        if char in _CLOSE:
            depth += 1
        elif char in _OPEN:
            depth -= 1
            if depth == 0:
                if char != "(" or index == 0 or text[index - 1] == "\\":
                    return text, ""
                return text[:index], text[index + 1:-1]
    return text, ""


def _trailing_items(text):
    """("C = ...", "n \\ge 2, n \\in \\mathbb{N}^*") for comma-separated conditions after the answer."""
    items = _top_level_items(text)
    if len(items) < 2 or any(joiner == "or" for _, _, joiner in items[1:]):
        return text, ""
    first = len(items)
    while first > 1 and _CONDITION_MARK.search(text[items[first - 1][0]:items[first - 1][1]]):
        first -= 1
    if first == len(items):
        return text, ""
    return text[:items[first][0]].rstrip(" ,;"), text[items[first][0]:]


# --- reasoning tails ---------------------------------------------------------------------------

_CONCLUSION = re.compile(
    r"(?:^|(?<=[,;.:\s" + CJK + r"]))(?:综上所述|综上可知|综上|所以|因此|故所求为|故|从而|于是|即得|"
    r"(?i:therefore|hence|thus|so))(?:[,:\s]|(?=[" + CJK + r"])|$)"
)
# "x = 2, 经检验符合题意": the clause and all that follows is a justification, not the answer.
_JUSTIFICATION = re.compile(
    r"\s*[,;.]?\s*(?:经检验|经验证|检验(?:可知|知|得)|此时|当且仅当|(?:均|都)?符合题意|(?:均|都)?满足题意|(?:均|都)?满足条件|"
    r"(?:均|都)?符合条件|(?i:(?:which|that|and this|this)\s+(?:satisfies|satisfy|is valid|checks|works|meets|agrees)|"
    r"as required|\(?checked\)?|since\b|because\b|(?:which\s+is\s+)?(?:attained|achieved|reached)\b)).*$",
    re.S,
)
_REJECTED = re.compile(
    r"\(\s*(?:舍去|舍|不合题意|不符合题意|不合题意,?\s*舍去|rejected|extraneous|discarded|discard)\s*\)|"
    r"应舍去|舍去|不合题意|不符合题意|不符题意|(?i:\bis\s+rejected\b|\brejected\b|\bextraneous\b|\bdiscarded\b)"
)
_OPEN, _CLOSE = "([{", ")]}"


def conclusion(text, notes):
    """The part after the last conclusion marker ("所以 x = 2" gives "x = 2")."""
    last = None
    depths = _depths(text)
    for match in _CONCLUSION.finditer(text):
        if depths[match.start()] == 0 and text[match.end():].strip():
            last = match
    if last is None:
        return text
    rest = text[last.end():].lstrip(" ,:")
    if last.start() > 0:
        notes.append(M('the reasoning before «{last_group_0_strip}» is not part of the answer', last_group_0_strip=last.group(0).strip()))
    return rest


def drop_justification(text, notes):
    match = _JUSTIFICATION.search(text)
    if match is None or match.start() == 0 or _depth_at(text, match.start()) != 0:
        return text
    kept = text[: match.start()].rstrip(" ,;.")
    if not kept:
        return text
    dropped = text[match.start():]
    notes.append(M('the justification «{dropped_strip_40}» is not part of the answer', dropped_strip_40=dropped.strip(" ,;.")[:40]))
    return _reject_named(kept, dropped, notes)


_NAMED_REJECTION = re.compile(
    r"(?:经检验|检验|其中|但|(?i:but|however|and))?\s*(?P<item>[^,;]+?)\s*(?:,\s*)?(?:均|都)?(?:不合题意|不符合题意|不符题意|应舍去|舍去|(?i:is\s+rejected|is\s+extraneous|must\s+be\s+rejected))"
)


def _reject_named(kept, dropped, notes):
    """"x = 2 或 x = -3" with the justification "经检验 x = -3 不符合题意, 舍去": x = -3 is left out."""
    named = _NAMED_REJECTION.search(dropped)
    if named is None:
        return kept
    target = re.sub(r"\s+", "", named.group("item"))
    items = _top_level_items(kept)
    remaining = [(kept[s:e].strip(), j) for s, e, j in items if re.sub(r"\s+", "", kept[s:e]) != target]
    if not remaining or len(remaining) == len(items):
        return kept
    notes.append(M('rejected: {named_group_item_strip} (left out)', named_group_item_strip=named.group("item").strip()))
    out = remaining[0][0]
    for item, joiner in remaining[1:]:
        out += (" or " if joiner == "or" else ", ") + item
    return out


def drop_rejected(text, notes):
    """Leave out the items marked rejected: "x = 2 或 x = -1（舍去）" is "x = 2"."""
    if not _REJECTED.search(text):
        return text
    items = _top_level_items(text)
    kept, rejected = [], []
    for start, end, joiner in items:
        item = text[start:end]
        if _REJECTED.search(item):
            value = _REJECTED.sub("", item).strip(" ,;")
            if value:
                rejected.append(value)
            elif kept:
                rejected.append(kept.pop()[0])  # "x = -1, 舍去": the mark is about the item before
            continue
        kept.append((item.strip(), joiner))
    if not kept or not rejected:
        return text
    notes.append(M('rejected: {join_rejected} (left out)', join_rejected="; ".join(rejected)))
    out = kept[0][0]
    for item, joiner in kept[1:]:
        out += (" or " if joiner == "or" else ", ") + item
    return out


def _top_level_items(text):
    """(start, end, joiner before) of the items separated by ``,`` ``;`` 或 / or / 和 at depth 0."""
    items, depth, start, joiner = [], 0, 0, ""
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == "\\" and text[i : i + 2] in ("\\{", "\\}"):
            depth += 1 if text[i + 1] == "{" else -1
            i += 2
            continue
        if char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth = max(depth - 1, 0)
        elif depth == 0:
            separator = None
            if char in ",;":
                separator, width = "comma", 1
            elif text.startswith("或", i):
                separator, width = "or", 1
            elif re.match(r"\s(?:or|and)\s", text[i : i + 5]):
                separator, width = ("or" if text[i + 1] == "o" else "comma"), 4 if text[i + 1] == "o" else 5
            if separator:
                items.append((start, i, joiner))
                joiner, start = separator, i + width
                i += width
                continue
        i += 1
    items.append((start, n, joiner))
    return [(s, e, j) for s, e, j in items if text[s:e].strip()]


def _depth_at(text, index):
    return _depths(text)[index]


def _depths(text):
    """The bracket depth before each character of ``text`` (one pass)."""
    depths, depth = [], 0
    for char in text:
        depths.append(depth)
        if char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth = max(depth - 1, 0)
    depths.append(depth)
    return depths


# --- relations in words ---------------------------------------------------------------------------

_RELATION_WORDS = [
    (r"(?i:greater\s+than\s+or\s+equal\s+to|no\s+less\s+than|not\s+less\s+than|at\s+least)", r"\\ge "),
    (r"(?i:less\s+than\s+or\s+equal\s+to|no\s+more\s+than|not\s+more\s+than|no\s+greater\s+than|not\s+greater\s+than|at\s+most)", r"\\le "),
    (r"(?i:not\s+equal\s+to)", r"\\ne "),
    (r"(?i:greater\s+than)", "> "),
    (r"(?i:less\s+than)", "< "),
    (r"(?i:is\s+equal\s+to|equal\s+to|equals)", "= "),
    (r"大于或等于|大于等于|不小于", r"\\ge "),
    (r"小于或等于|小于等于|不大于", r"\\le "),
    (r"不等于", r"\\ne "),
    (r"大于", "> "),
    (r"小于", "< "),
    (r"等于", "= "),
]
_RELATION_WORD_RES = [(re.compile(pattern), replacement) for pattern, replacement in _RELATION_WORDS]


def relation_words(text):
    for pattern, replacement in _RELATION_WORD_RES:
        text = pattern.sub(replacement, text)
    return re.sub(r"\s+", " ", text).strip()


# --- prose around the answer ------------------------------------------------------------------------

_CJK_CHAR = re.compile("[" + CJK + "]")
_CJK_CONNECTOR = re.compile(r"(?:的值|的取值范围)?(?:是|为|:)\s*")
_MATH_CHAR = re.compile(r"[=<>\\$]")
_EN_PREFIX = re.compile(
    r"^(?i:(?:the\s+)?(?:solution\s+set|set\s+of\s+solutions|solutions?|roots?|range|values?|answer|result|interval)"
    r"(?:\s+of\s+[^=<>]+?)?\s+(?:is|are|=|:))\s*(?P<rest>\S.*)$",
    re.S,
)


_NAMED_VALUE = re.compile(r"^\s*(?P<name>[a-zA-Z](?:_\{?[a-zA-Z0-9]+\}?)?)\s*的值\s*(?:是|为|:|=)\s*(?P<rest>[^=<>]+)$")
_EN_NAMED_VALUE = re.compile(r"^(?i:(?:the\s+)?values?\s+of\s+)(?P<name>[a-zA-Z](?:_\{?[a-zA-Z0-9]+\}?)?)\s+(?i:is|are|=)\s+(?P<rest>[^=<>]+)$")


def prose_prefix(text):
    """"实数 a 的取值范围是 a ≥ 2" gives "a ≥ 2"; "the solution set is (1, 3)" gives "(1, 3)".

    "x 的值为 3" and "the value of x is 3" keep what is named: "x = 3".
    """
    named = _NAMED_VALUE.match(text) or _EN_NAMED_VALUE.match(text)
    if named:
        return f"{named.group('name')} = {named.group('rest').strip()}"
    math = _MATH_CHAR.search(text)
    limit = math.start() if math else len(text)
    first_cjk = _CJK_CHAR.search(text, 0, limit)
    if first_cjk is not None:
        # The first 是 / 为 / : after some Chinese prose and before any mathematics.
        match = _CJK_CONNECTOR.search(text, first_cjk.end(), limit)
        if match and not re.search(r"[\d()\[\]]", text[: match.start()].replace("f(x)", "")) and text[match.end():].strip():
            return text[match.end():].strip()
    match = _EN_PREFIX.match(text)
    if match:
        return match.group("rest").strip()
    return text


# --- yes/no answers ------------------------------------------------------------------------------------

POLAR = {
    "yes": ("是", "对", "正确", "成立", "yes", "true", "correct"),
    "no": ("否", "不是", "不对", "错", "错误", "不成立", "no", "false", "incorrect"),
    "exists": ("存在", "exists", "it exists", "exist"),
    "not-exists": ("不存在", "does not exist", "doesn't exist", "do not exist", "not exist", "dne", "undefined", "无意义"),
    "has-solution": ("有解", "有实数解", "有实根", "has a solution", "has solutions", "has real roots", "has a real root"),
}
_POLAR_WORDS = {word: key for key, words in POLAR.items() for word in words}


# "不存在这样的实数 a", "存在满足条件的 k": who or what exists is not part of the yes/no answer.
_POLAR_QUALIFIER = re.compile(
    r"(?<=存在)\s*(?:这样的|满足(?:题意|条件)的|符合(?:题意|条件)的|满足要求的)?\s*(?:实数|正实数|正数|整数|正整数|常数|点|直线|值)?\s*"
    r"(?:[a-z](?:_\{?\w+\}?)?)?\s*(?:[,，]?\s*使(?:得)?[^=<>]*)?$"
)


def polar_answer(text):
    """("yes", "是") when the whole answer is such a word; ("", "") otherwise."""
    bare = re.sub(r"\\text\s*\{([^{}]*)\}", r"\1", text).strip()
    bare = re.sub(r"[\s.,;!]+$", "", bare).lower()
    bare = re.sub(r"^(?:the\s+answer\s+is\s+)", "", bare)
    bare = _POLAR_QUALIFIER.sub("", bare) if "存在" in bare else bare
    key = _POLAR_WORDS.get(bare)
    return (key, bare) if key else ("", "")


# --- labelled answers -------------------------------------------------------------------------------

# key -> regular expression of the label as written (Chinese and English).
LABELS = {
    "max": r"最大值|(?i:(?:the\s+)?(?:maximum|greatest|largest)(?:\s+value)?|\bmax\b(?!\s*[({\\]))",
    "min": r"最小值|(?i:(?:the\s+)?(?:minimum|least|smallest)(?:\s+value)?|\bmin\b(?!\s*[({\\]))",
    "local-max": r"极大值|(?i:(?:the\s+)?local\s+maximum(?:\s+value)?)",
    "local-min": r"极小值|(?i:(?:the\s+)?local\s+minimum(?:\s+value)?)",
    "increasing": r"(?:单调)?(?:递)?增区间(?:是|为)?|(?i:(?:the\s+)?(?:interval\s+(?:of|where\s+\S+\s+is)\s+increas\w*|increasing\s+(?:interval|on)|increasing))",
    "decreasing": r"(?:单调)?(?:递)?减区间(?:是|为)?|(?i:(?:the\s+)?(?:interval\s+(?:of|where\s+\S+\s+is)\s+decreas\w*|decreasing\s+(?:interval|on)|decreasing))",
}
LABEL_NAMES = {"max": "最大值 / maximum", "min": "最小值 / minimum", "local-max": "极大值 / local maximum",
               "local-min": "极小值 / local minimum", "increasing": "递增区间 / increasing", "decreasing": "递减区间 / decreasing"}
# The order matters: "local maximum" before "maximum".
_LABEL_RE = re.compile("|".join(f"(?P<{key.replace('-', '_')}>{pattern})" for key, pattern in
                                sorted(LABELS.items(), key=lambda item: not item[0].startswith("local"))))
_CONNECTOR = re.compile(r"^\s*(?:(?i:of\s+\S+\s+)?(?i:is|are|equals|on|=|:)|是|为|=|:)?\s*")
_SUBJECT = re.compile(r"^(?:(?:函数\s*)?(?:[a-zA-Z](?:\s*\(\s*x\s*\))?)?\s*的|函数|(?i:the\s+function(?:\s+\S+)?\s*(?:has|is)?|f\s*\(\s*x\s*\)\s*(?:has|is)?|it\s+(?:has|is)|(?:the\s+)?function))?\s*$")
_JOINER_TAIL = re.compile(r"(?:\s*(?:,|;|且|和|以及|及|(?i:\band\b)|(?i:\bthe\b)))+\s*$")
# "(0, 1) 上单调递增", "在 (0, 1) 上是增函数"
_POST_LABEL = re.compile(r"上\s*(?:是)?(?:单调)?(?:递)?(?P<dir>增|减)(?:函数)?\s*$")


MAX_LABELS = 12


def labelled(text):
    """[(key, word as written, value text)] for a labelled answer; None when it is not one."""
    post = _post_labels(text)
    if post is not None:
        return post
    depths = _depths(text)
    matches = [m for m in _LABEL_RE.finditer(text) if depths[m.start()] == 0]
    if not matches or len(matches) > MAX_LABELS:
        return None
    if not _SUBJECT.match(text[: matches[0].start()]):
        return None
    labels = []
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        rest = text[match.end():end]
        connector = _CONNECTOR.match(rest)
        value = rest[connector.end():] if connector else rest
        value = _JOINER_TAIL.sub("", value)
        value = re.sub(r"(?:函数\s*)?(?:[a-zA-Z](?:\s*\(\s*x\s*\))?)?\s*的\s*$", "", value).strip(" ,;")
        if not value:
            return None
        key = next(name for name, found in match.groupdict().items() if found).replace("_", "-")
        labels.append((key, match.group(0).strip(), value))
    return labels


_SUBJECT_BEFORE_IN = re.compile(r"^\s*(?:函数\s*)?(?:[a-zA-Z](?:_\{?\w+\}?)?\s*(?:\(\s*[a-z]\s*\))?\s*)?在")


def _post_labels(text):
    if "上" not in text:
        return None
    pieces = [text[start:end] for start, end, _ in _top_level_items(text)]
    found = []
    for piece in pieces:
        match = _POST_LABEL.search(piece)
        value = _SUBJECT_BEFORE_IN.sub("", piece[: match.start()]).strip() if match else ""
        if not value:
            return None
        key = "increasing" if match.group("dir") == "增" else "decreasing"
        found.append((key, "单调递" + match.group("dir"), value))
    return found if 0 < len(found) <= MAX_LABELS else None


# --- piecewise answers -------------------------------------------------------------------------------

_CASES = re.compile(r"^(?P<head>[^=]*?=)?\s*(?:\\\{\s*)?\\begin\{(?P<env>cases|array)\}(?:\{[^{}]*\})?(?P<body>.*)\\end\{(?P=env)\}\s*\.?\s*$", re.S)
_OTHERWISE = re.compile(r"^(?i:otherwise|else|other\s+values|elsewhere)$|^(?:其他|其它|其余|否则)(?:情况)?$")
_CONDITION_NOISE = re.compile(r"^(?:(?i:if|when|for)\b|当|若|如果)\s*|\s*(?:时|(?i:\bthen\b))\s*$")
_RELATION_IN = re.compile(r"\\(?:le|ge|ne|in)(?![a-zA-Z])|[<>=]")
_PAREN_CONDITION = re.compile(r"^(?P<value>.+?)\s*\(\s*(?P<cond>[^()]+)\)\s*$", re.S)
_CJK_BRANCH = re.compile(r"^\s*(?:(?:当|若|如果)\s*)?(?P<cond>[^时]+?)\s*时\s*,?\s*(?P<value>.+?)\s*$", re.S)
_EN_BRANCH = re.compile(r"^\s*(?i:when|if|for)\s+(?P<cond>[^,]+?)\s*(?:,|:|\bthen\b)\s*(?P<value>.+?)\s*$", re.S)
# "decreasing for a < 0", "f is increasing when a > 1" (issue 41): a claim about f under a condition,
# read as the branch "when a < 0: decreasing" (like "a<0 时单调递减"), never as a label of the value.
_EN_CLAIM_BRANCH = re.compile(
    r"^\s*(?i:(?:(?:the\s+function\s+)?(?:[a-zA-Z](?:\s*\(\s*x\s*\))?|it|the\s+function)\s+(?:is\s+)?)?(?:(?:monotonically|strictly)\s+)?)"
    r"(?P<value>(?i:increasing|decreasing|increases|decreases)(?:\s+(?i:on)\s+.+?)?)\s+"
    r"(?i:for|when|whenever|if|provided(?:\s+that)?)\s+(?P<cond>.+?)\s*$", re.S)
MAX_BRANCHES = 12


def piecewise(text):
    """(head, [(condition text or None, value text)]) or None."""
    match = _CASES.match(text)
    if match:
        rows = [row for row in re.split(r"\\\\", match.group("body")) if row.strip()]
        branches = []
        for row in rows:
            cells = [cell.strip() for cell in row.split("&")]
            cells = [cell for cell in cells if cell]
            if len(cells) == 1:
                cells = _split_value_condition(cells[0])
            if cells is None or len(cells) != 2:
                return None
            value = cells[0].strip().rstrip(",;").strip()
            branches.append((_condition(cells[1]), value))
        head = (match.group("head") or "").rstrip("=").strip()
        return (head, branches) if 1 <= len(branches) <= MAX_BRANCHES else None
    head, body = _split_head(text)
    for splitter, pattern in ((_branch_items, _PAREN_CONDITION), (_sentence_items, _CJK_BRANCH), (_sentence_items, _EN_BRANCH),
                              (_sentence_items, _EN_CLAIM_BRANCH)):
        items = splitter(body)
        if not items or len(items) > MAX_BRANCHES:
            continue
        branches = []
        for item in items:
            found = pattern.match(item)
            if not found or not _RELATION_IN.search(found.group("cond")):
                branches = None
                break
            branches.append((_condition(found.group("cond")), found.group("value").strip().rstrip(",;")))
        if branches and (len(branches) >= 2 or pattern is not _PAREN_CONDITION):
            return head, branches
    return None


def _split_head(text):
    match = re.match(r"^\s*(?P<head>[a-zA-Z](?:_\{?[a-z0-9]+\}?)?(?:\s*\(\s*[a-z]\s*\))?)\s*=\s*(?P<body>.+)$", text, re.S)
    if match and "(" in match.group("body"):
        return match.group("head"), match.group("body")
    return "", text


def _branch_items(text):
    """``3 (n = 1), 2^n (n \\ge 2)``: items end with a parenthesised condition."""
    items = [text[s:e].strip() for s, e, _ in _top_level_items(text)]
    return items if len(items) >= 2 and all(item.endswith(")") for item in items) else None


def _sentence_items(text):
    items = [item.strip() for item in re.split(r";|。|(?<=\S)\s*(?=当)", text) if item.strip()]
    return items or None


def _split_value_condition(cell):
    """"3, n = 1" (a cases row without ``&``): value, condition."""
    items = _top_level_items(cell)
    if len(items) < 2:
        return None
    start = items[-1][0]
    condition = cell[start:].strip()
    if not _RELATION_IN.search(condition) and not _OTHERWISE.match(_CONDITION_NOISE.sub("", condition)):
        return None
    return [cell[: start - 1], condition]


def _condition(text):
    text = re.sub(r"\\text\s*\{([^{}]*)\}", r" \1 ", text).strip().strip(",;.")
    text = _CONDITION_NOISE.sub("", text).strip()
    text = _CONDITION_NOISE.sub("", text).strip()
    if _OTHERWISE.match(text):
        return None
    return text


# --- statements about a function, counts, qualified yes/no answers (issue 41) ---------------------------

# "f(x) 为奇函数", "函数 f(x) 是增函数", "原不等式无解", "方程无实数解": the subject goes, the claim stays.
_STATEMENT_SUBJECT = re.compile(
    r"^\s*(?:(?:原|该|此|这个)?(?:不等式(?:组)?|方程(?:组)?)|(?:函数\s*)?[a-zA-Z](?:_\{?\w+\}?)?\s*\(\s*[a-z]\s*\)|函数)\s*"
    r"(?:(?:是|为)\s*)?(?=(?:单调递增|单调递减|增函数|减函数|奇函数|偶函数|非奇非偶函数|无解|无实数解|无实根|有解|有实数解)\s*$)"
)
_CLAIM_SYNONYMS = {"增函数": "单调递增", "减函数": "单调递减", "递增": "单调递增", "递减": "单调递减", "单调增": "单调递增",
                   "单调减": "单调递减", "无实数解": "无解", "无实根": "无解", "有实数解": "有解"}


def statement_subject(text):
    """"f(x) 为奇函数" gives "奇函数"; "原不等式无解" gives "无解" (the claim is the answer)."""
    match = _STATEMENT_SUBJECT.match(text)
    if match is None:
        return _CLAIM_SYNONYMS.get(text.strip(), text)
    rest = text[match.end():].strip()
    return _CLAIM_SYNONYMS.get(rest, rest)


_CN_NUMBERS = {"零": 0, "一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
_COUNTED = r"(?P<what>零点|交点|公共点|实根|实数根|根|实数解|解|极值点)"
_COUNT_RES = [
    re.compile(r"^(?:(?:函数\s*)?(?:[a-zA-Z]\s*\(\s*[a-z]\s*\))?\s*|方程\s*|函数\s*)?(?:有且只有|有且仅有|恰有|恰好有|只有|仅有|有)\s*"
               r"(?P<n>\d+|[零一两二三四五六七八九十])\s*个\s*(?:不同的\s*)?" + _COUNTED + r"\s*$"),
    re.compile(r"^(?:(?:函数\s*)?(?:[a-zA-Z]\s*\(\s*[a-z]\s*\))?\s*(?:的)?\s*)?" + _COUNTED + r"\s*(?:的)?\s*个数\s*(?:为|是|=|:)\s*(?P<n>\d+|[零一两二三四五六七八九十])\s*(?:个)?\s*$"),
]
_COUNT_WORDS = {"实数根": "实根", "根": "实根", "实数解": "解"}


def count_answer(text):
    """("count:零点", "零点个数", "1") for "有且只有一个零点" / "零点个数为1"; None otherwise."""
    if "个" not in text:
        return None
    for pattern in _COUNT_RES:
        match = pattern.match(text)
        if match:
            n = match.group("n")
            number = str(_CN_NUMBERS[n]) if n in _CN_NUMBERS else n
            what = _COUNT_WORDS.get(match.group("what"), match.group("what"))
            return "count:" + what, what + "个数", number
    return None


# --- notations (issue 41) -------------------------------------------------------------------------------

_LABELLED_TUPLE = re.compile(r"^\s*\(\s*(?P<names>[a-zA-Z](?:\s*,\s*[a-zA-Z])+)\s*\)\s*=\s*(?P<rest>\(.*\))\s*$", re.S)
_CONVENTIONAL_ORDERS = ("xyzw", "abcd", "mnpq", "uvw", "pqr", "st", "rst")
_BASE_N = re.compile(r"(?<![\w.{}\\^])\(?(?P<digits>[0-9A-Fa-f]+)\)?_\{?\(?(?P<base>\d{1,2})\)?\}?(?![\w{])")
_PERCENT_WORD = re.compile(r"(?<=\d)\s*(?i:pct|per\s*cent|percent)(?![A-Za-z])")
_RATIO = re.compile(r"^\s*(?:(?P<names>[A-Za-z](?:_\{?\w+\}?)?\s*:\s*[A-Za-z](?:_\{?\w+\}?)?)\s*=\s*)?"
                    r"(?P<a>[^:=<>a-zA-Z]+?|\\(?:frac|sqrt)[^:=<>]*?)\s*:\s*(?P<b>[^:=<>a-zA-Z]+?|\\(?:frac|sqrt)[^:=<>]*?)\s*$")
_SYSTEMS = re.compile(r"\s*(?:;|或|(?i:\bor\b))\s*")
_ASSIGNMENT = re.compile(r"^\s*(?P<name>[a-z])\s*=\s*(?P<value>[^=<>,;]+?)\s*$")


def notations(text, notes):
    """Notations rewritten to what the parser reads: labelled tuples, base-n numbers, "15 pct",
    ratios, several systems of assignments. Each rewrite is noted for the explanation."""
    match = _LABELLED_TUPLE.match(text)
    if match:
        names = re.sub(r"\s+", "", match.group("names")).replace(",", "")
        if any(order.startswith(names) for order in _CONVENTIONAL_ORDERS):
            notes.append(M('({join_names}) = ... read as the tuple', join_names=', '.join(names)))
            text = match.group("rest").strip()
    if "_" in text:
        text = _BASE_N.sub(lambda m: _base_n(m, notes), text)
    percent = _PERCENT_WORD.search(text)
    if percent:
        notes.append(M("the word {word} read as the percent sign", word=percent.group(0).strip()))
        text = _PERCENT_WORD.sub(r"\\%", text)
    if ":" in text:
        ratio = _RATIO.match(text)
        if ratio and "{" not in ratio.group("a")[:1]:
            a, b = ratio.group("a").strip(), ratio.group("b").strip()
            notes.append(M('the ratio {a} : {b} read as {a2}/{b2}', a=a, b=b, a2=a, b2=b))
            text = f"\\frac{{{a}}}{{{b}}}"
    if ";" in text or "或" in text or " or " in text:
        text = _systems(text, notes)
    return text


def _base_n(match, notes):
    digits, base = match.group("digits"), int(match.group("base"))
    if not 2 <= base <= 16 or len(digits) > 64 or any(int(d, 16) >= base for d in digits):
        return match.group(0)
    value = int(digits, base)
    notes.append(M('{digits} in base {base} is {value}', digits=digits, base=base, value=value))
    return str(value)


def _systems(text, notes):
    """"x=1,y=2; x=3,y=4" is "(1, 2), (3, 4)" (the unknowns in their conventional order)."""
    parts = _SYSTEMS.split(text)
    if len(parts) < 2 or len(parts) > MAX_LABELS:
        return text
    tuples, order = [], None
    for part in parts:
        items = [part[s:e] for s, e, _ in _top_level_items(part)]
        found = [_ASSIGNMENT.match(item) for item in items]
        if len(found) < 2 or not all(found):
            return text
        names = "".join(m.group("name") for m in found)
        canonical = next((o for o in _CONVENTIONAL_ORDERS if set(names) <= set(o) and len(set(names)) == len(names)), None)
        if canonical is None or (order is not None and set(names) != set(order)):
            return text
        order = order or "".join(sorted(names, key=canonical.index))
        by_name = {m.group("name"): m.group("value") for m in found}
        tuples.append("(" + ", ".join(by_name[name] for name in order) + ")")
    notes.append(M('each system read as ({join_order})', join_order=', '.join(order)))
    return ", ".join(tuples)


_NAMED_VALUE_ITEM = re.compile(r"^\s*(?P<name>[A-Z]{2,3}|\\angle\s*[A-Z]{1,3}|\|[A-Z]{2}\|)\s*=\s*(?P<value>[^=<>]+?)\s*$")


def named_values(text):
    """(["AB", "BC"], ["3", "4"]) for "AB = 3, BC = 4" (segments, angles); ([], []) otherwise."""
    if "=" not in text:
        return [], []
    items = [text[s:e] for s, e, _ in _top_level_items(text)]
    found = [_NAMED_VALUE_ITEM.match(item) for item in items]
    if len(found) < 2 or len(found) > MAX_LABELS or not all(found):
        return [], []
    names = [re.sub(r"\s+", "", m.group("name")) for m in found]
    if len(set(names)) != len(names):
        return [], []
    return names, [m.group("value") for m in found]
