"""The words of core.uncertainty for people, in their language: why an interval is missing
("not estimable: 1 question"), an interval with an unbounded end, a p-value at its resolution.
Used by the review and study pages and the methods report; the JSON and CSV keep the English
note of core.uncertainty.note."""
from django.utils.translation import gettext, ngettext

from core import uncertainty


def unit_count(count, unit):
    if unit == "answer":
        return ngettext("%(n)s answer", "%(n)s answers", count) % {"n": count}
    if unit == "student":
        return ngettext("%(n)s student", "%(n)s students", count) % {"n": count}
    if unit == "segment":
        return ngettext("%(n)s segment", "%(n)s segments", count) % {"n": count}
    return ngettext("%(n)s question", "%(n)s questions", count) % {"n": count}


def not_estimable(reason, clusters=0, unit="question", undefined=0, resamples=0):
    """'not estimable: 1 question' in the reader's language ('' when there is a reason-less interval)."""
    if reason == "clusters":
        return gettext("not estimable: %(count)s") % {"count": unit_count(clusters, unit)}
    if reason == "undefined":
        return gettext("not estimable: undefined in %(undefined)s of %(resamples)s resamples") % {
            "undefined": undefined, "resamples": resamples}
    if reason == "degenerate":
        return gettext("not estimable: no spread between clusters")
    if reason == "empty":
        return gettext("not estimable: no data")
    return ""


def note_from_english(note):
    """The reader's words for an English core.uncertainty note kept in stored figures."""
    if not note:
        return ""
    text = note.removeprefix("not estimable: ")
    parts = text.split(" ")
    if len(parts) == 2 and parts[0].isdigit():
        unit = next((key for key, words in uncertainty.UNITS.items() if parts[1] in words), "question")
        return not_estimable("clusters", int(parts[0]), unit)
    if text.startswith("undefined in "):
        numbers = [int(word) for word in text.split() if word.isdigit()]
        if len(numbers) == 2:
            return not_estimable("undefined", undefined=numbers[0], resamples=numbers[1])
    if text == "no spread between clusters":
        return not_estimable("degenerate")
    if text == "no data":
        return not_estimable("empty")
    return note


def interval(bounds, fmt, *, unbounded=False, note=""):
    """'[0.31, 1.22]', '[0.31, ∞)' for an unbounded upper end, the translated note when missing."""
    low, high = (list(bounds or []) + [None, None])[:2]
    if low is None and not unbounded:
        return note_from_english(note)
    if unbounded or high is None:
        return f"[{fmt(low)}, ∞)"
    return f"[{fmt(low)}, {fmt(high)}]"


def p_value(p, resolution=None):
    """A p-value never printed as 0: '< 0.0001' at the test's resolution (core.uncertainty.format_p)."""
    return uncertainty.format_p(p, resolution)
