"""Words that change what an answer means, and the guard that never lets a comparison ignore one.

A comparison that read past a word such as 递增 / 递减 or 最大 / 最小 (prose the parser drops
around a value) must not say "equivalent": ``(0, 1) 上单调递增`` and ``(0, 1) 上单调递减``
have the same interval and opposite meanings. :func:`guard` looks for these words in the text
each side was finally read from (labels the comparison compared are taken out first) and, when
the two sides use different words of one group, turns "equivalent" into "undecided" and names
the word. A label on one side only is not a difference (``最大值为 2`` against ``2``, ``单调递减区间为
(0, 1)`` against ``(0, 1)``: the label names the value the other side gives). A *claim* on one
side only is (issue 41): ``a>1 时单调递增`` against ``a>1`` says something about f that the other
side does not, and :func:`one_sided_claim` names it; the engine then says undecided, never
equivalent.
"""
import re
from dataclasses import dataclass

# group -> {word as written: canonical word}. Longest words are matched first, so 不存在 is not
# also read as 存在. Chinese words match anywhere, English ones as whole words.
MEANING_WORDS = {
    "extremum": {
        "最大": "max", "最小": "min", "极大": "local max", "极小": "local min",
        "maximum": "max", "minimum": "min", "max": "max", "min": "min", "greatest": "max", "largest": "max",
        "least": "min", "smallest": "min", "local maximum": "local max", "local minimum": "local min",
    },
    "monotonicity": {
        "单调递增": "increasing", "单调递减": "decreasing", "递增": "increasing", "递减": "decreasing",
        "增函数": "increasing", "减函数": "decreasing", "单调增": "increasing", "单调减": "decreasing",
        "增区间": "increasing", "减区间": "decreasing", "increasing": "increasing", "decreasing": "decreasing",
        "increases": "increasing", "decreases": "decreasing",
    },
    "existence": {
        "不存在": "does not exist", "存在": "exists", "does not exist": "does not exist", "exists": "exists",
        "exist": "exists",
    },
    "solvability": {
        "有解": "has solutions", "无解": "no solution", "有实根": "has solutions", "无实根": "no solution",
        "no solution": "no solution", "no real": "no solution", "has a solution": "has solutions",
    },
    "truth": {"yes": "yes", "no": "no", "true": "true", "false": "false", "正确": "true", "错误": "false"},
    "parity": {"奇函数": "odd", "偶函数": "even", "odd": "odd", "even": "even"},
    "sufficiency": {
        "充要": "iff", "充分必要": "iff", "充分不必要": "sufficient only", "必要不充分": "necessary only",
        "既不充分也不必要": "neither", "sufficient and necessary": "iff", "necessary and sufficient": "iff",
        "sufficient but not necessary": "sufficient only", "necessary but not sufficient": "necessary only",
        "sufficient": "sufficient", "necessary": "necessary", "充分": "sufficient", "必要": "necessary",
    },
    "bound": {"上界": "upper", "下界": "lower", "upper": "upper", "lower": "lower"},
    "convexity": {"凸": "convex", "凹": "concave", "convex": "convex", "concave": "concave"},
    "sign": {"positive": "positive", "negative": "negative", "正数": "positive", "负数": "negative"},
    "parts": {"实部": "real part", "虚部": "imaginary part", "real part": "real part", "imaginary part": "imaginary part"},
}

_CJK_CHAR = re.compile(r"[\u3400-\u9fff]")
_ENTRIES = sorted(
    ((word, group, canonical) for group, words in MEANING_WORDS.items() for word, canonical in words.items()),
    key=lambda entry: -len(entry[0]),
)
_PATTERN = re.compile("|".join(
    re.escape(word) if _CJK_CHAR.search(word) else r"(?<![A-Za-z\\])" + re.escape(word).replace(r"\ ", r"\s+") + r"(?![A-Za-z])"
    for word, _, _ in _ENTRIES
), re.IGNORECASE)
_LOOKUP = {word.lower(): (group, canonical) for word, group, canonical in _ENTRIES}


def meaning_words(text):
    """{group: {canonical word: word as written}} for the meaning-bearing words in ``text``."""
    found = {}
    for match in _PATTERN.finditer(text or ""):
        written = match.group(0)
        group, canonical = _LOOKUP[re.sub(r"\s+", " ", written.lower())]
        found.setdefault(group, {}).setdefault(canonical, written)
    return found


def difference(pred_text, gold_text):
    """The first group in which the two texts use different words: (group, pred words, gold words), or None."""
    pred, gold = meaning_words(pred_text), meaning_words(gold_text)
    for group in MEANING_WORDS:
        if group in pred and group in gold and set(pred[group]) != set(gold[group]):
            return group, sorted(pred[group].values()), sorted(gold[group].values())
    return None


@dataclass(frozen=True)
class Guarded:
    """The words of one answer the guard looks at: ``labels`` (label words such as 最大值, compared
    only against another label) and ``claims`` (every other word the comparison may have read past,
    branch values in words such as 单调递增 included)."""

    claims: str = ""
    labels: str = ""

    @property
    def all_text(self):
        return f"{self.labels} {self.claims}".strip()

    def with_claim(self, text):
        return Guarded(f"{self.claims} {text}".strip(), self.labels)

    def with_branch_claim(self, text):
        return self.with_claim(text)

    def with_label(self, word):
        return Guarded(self.claims, f"{self.labels} {word}".strip())

    def join(self, other):
        return Guarded(f"{self.claims} {other.claims}".strip(), f"{self.labels} {other.labels}".strip())


_VALUE_WORDS = re.compile(
    r"无实数解|无实根|无解|(?i:no\s+real\s+(?:solutions?|roots?)|no\s+solutions?)"
    r"|\\?(?<![A-Za-z])(?:max|min)\s*(?=[({\\])|(?<=\d)\s*min(?![A-Za-z])"
)


def without_value_words(text):
    """Words the parser reads as a value are compared, not set aside: 无解 and "no solution" (the
    empty set), ``\\max(a, b)`` / ``max{a, b}`` (a function), ``120 min`` (a unit)."""
    return _VALUE_WORDS.sub(" ", text)


def one_sided_claim(pred, gold):
    """(side, group, words) when one answer makes a claim in a group the other never mentions.

    ``pred`` and ``gold`` are :class:`Guarded`. Only claims count: a label word on one side
    (最大值为 2 vs 2) is fine, and so is a group both sides mention (left to :func:`difference`).
    """
    words = {"pred": meaning_words(pred.claims), "gold": meaning_words(gold.claims)}
    every = {"pred": meaning_words(pred.all_text), "gold": meaning_words(gold.all_text)}
    for side, other in (("pred", "gold"), ("gold", "pred")):
        for group in MEANING_WORDS:
            if group in words[side] and group not in every[other]:
                return side, group, sorted(words[side][group].values())
    return None


def known_words():
    """Every meaning-bearing word the guard knows, by group (for the docs and the page)."""
    return {group: sorted(words) for group, words in MEANING_WORDS.items()}
