"""Checking that every figure of a report text is a value of its JSON appendix."""
import re

from grading.report.document import latex_escape, markdown_cell, number

# A figure: not part of a word or of a longer number; a full stop after it ends a sentence.
NUMBER = re.compile(r"(?<![\w\-])(?<!\d\.)-?\d+(?:\.\d+)?(?!\w|\.\d)")


def _walk(value):
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and key.isdigit():
                yield int(key)  # ids as keys ({question id: [answer ids]}) are printed too
            yield from _walk(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _walk(item)
    else:
        yield value


def untraced_figures(text, data):
    """The numbers printed in `text` that no value of the appendix `data` prints as.

    Strings of the appendix that hold digits (setting and exam names, hashes) are taken out of
    the text first, in every escaped form, so only figures are checked."""
    values = list(_walk(data))
    strings = sorted({v for v in values if isinstance(v, str) and re.search(r"\d", v)}, key=len, reverse=True)
    for string in strings:
        for form in {string, latex_escape(string), markdown_cell(string)}:
            text = text.replace(form, " ")
    printed = {number(v) for v in values if isinstance(v, int | float) and not isinstance(v, bool)}
    return [token for token in NUMBER.findall(text) if token not in printed]
