"""Integer parameters declared beside an answer: ``k \\in \\mathbb{Z}`` and its many spellings.

``[k\\pi - \\frac{3\\pi}{8}, k\\pi + \\frac{\\pi}{8}], k \\in \\mathbb{Z}`` describes one set of
real numbers, a *solution family*; the declaration names the parameter, it is not part of the
answer. :func:`strip_declarations` removes declarations from the token stream and returns the
parameter names. Spellings: ``k \\in \\mathbb{Z}``, ``k∈Z``, ``(k\\in\\mathbf Z)``, ``n ∈ ℤ``,
``k, n \\in \\mathbb{Z}``, ``k 为整数``, ``where k is an integer``, ``for any integer k``,
``k = 0, \\pm 1, \\pm 2, \\ldots``; a separator (``,`` ``;``), brackets around it, and words such
as "where" or "其中" go with it.

A declaration is only removed where it cannot be part of the answer itself: at the top level,
or inside a set-builder whose variable is another letter (``\\{x \\mid x = k\\pi, k \\in \\mathbb{Z}\\}``),
and only if the parameter is used elsewhere. ``x \\in \\mathbb{Z}`` on its own stays an answer.
"""
import re

INTEGER_SETS = {r"\mathbb{Z}", r"\Z"}
LEAD_WORDS = {"where", "with", "for", "and", "其中", "这里"}
CJK_INTEGER = re.compile(r"^(?:为|是|取)(?:任意|全体)?整数$")
ELLIPSIS = {r"\cdots", r"\ldots", r"\dots"}
OPENERS = {"(": ")", "[": "]", "{": "}"}


def strip_declarations(tokens):
    """(tokens without integer-parameter declarations, set of parameter names)."""
    params = set()
    spans = []
    i = 0
    while i < len(tokens):
        found = _declaration_at(tokens, i)
        if found is None:
            i += 1
            continue
        start, end, names = found
        start, end = _widen(tokens, start, end)
        if _removable(tokens, start, end, names):
            spans.append((start, end))
            params |= names
        i = end
    if not spans:
        return tokens, set()
    kept = []
    cursor = 0
    for start, end in spans:
        kept.extend(tokens[cursor:start])
        cursor = end
    kept.extend(tokens[cursor:])
    return kept, params


def _is_text(token, *words):
    return token.kind == "text" and token.value.lower() in words


def _declaration_at(tokens, i):
    """(start, end, names) of a declaration starting at ``i`` (end exclusive), or None."""
    token = tokens[i]
    if token.kind == "ident" and _clause_start(tokens, i):
        # k \in Z ; k, n \in Z
        names, k = [token.value], i + 1
        while tokens[k].is_op(",") and tokens[k + 1].kind == "ident" and (tokens[k + 2].is_op(",") or tokens[k + 2].is_cmd(r"\in")):
            names.append(tokens[k + 1].value)
            k += 2
        if k + 1 < len(tokens) and tokens[k].is_cmd(r"\in") and _integer_set(tokens[k + 1]):
            return i, k + 2, set(names)
        if tokens[i + 1].kind == "text" and CJK_INTEGER.match(tokens[i + 1].value):
            return i, i + 2, {token.value}
        end = _is_an_integer(tokens, i + 1)
        if end is not None:
            return i, end, {token.value}
        end = _plus_minus_list(tokens, i + 1)
        if end is not None:
            return i, end, {token.value}
    if _is_text(token, "for"):
        # for any integer k / for all integers k
        k = i + 1
        k = _skip_article(tokens, k)
        if k + 1 < len(tokens) and _is_text(tokens[k], "integer", "integers") and tokens[k + 1].kind == "ident":
            return i, k + 2, {tokens[k + 1].value}
    return None


def _clause_start(tokens, i):
    """A declaration starts a clause: after a separator, a bracket, a lead word, or at the start."""
    if i == 0:
        return True
    before = tokens[i - 1]
    return (before.is_op(",", ";", "(") or before.kind == "text" and before.value.lower() in LEAD_WORDS
            or before.kind == "word" and before.value == "and")


def _integer_set(token):
    return token.kind == "cmd" and token.value in INTEGER_SETS or token.kind == "ident" and token.value == "Z"


def _skip_article(tokens, k):
    """Skip "a", "an", "any", "all", "every" (plain "an" is lexed as the letters a, n)."""
    if _is_text(tokens[k], "an", "any", "all", "every", "a"):
        return k + 1
    if tokens[k].kind == "ident" and tokens[k].value == "a":
        if tokens[k + 1].kind == "ident" and tokens[k + 1].value == "n":
            if tokens[k + 2].kind == "ident" and tokens[k + 2].value == "y":
                return k + 3
            return k + 2
        return k + 1
    return k


def _is_an_integer(tokens, k):
    """``is an integer`` after a letter; returns the end index or None."""
    if not _is_text(tokens[k], "is"):
        return None
    k = _skip_article(tokens, k + 1)
    if _is_text(tokens[k], "integer"):
        return k + 1
    return None


def _plus_minus_list(tokens, k):
    """``= 0, \\pm 1, \\pm 2, \\ldots`` (the dots themselves are dropped by the lexer)."""
    expected = ["=", "0", ",", r"\pm", "1", ",", r"\pm", "2"]
    for offset, value in enumerate(expected):
        if k + offset >= len(tokens) or tokens[k + offset].value != value:
            return None
    end = k + len(expected)
    while tokens[end].is_op(",") or tokens[end].is_cmd(*ELLIPSIS):
        end += 1
    return end


def _widen(tokens, start, end):
    """Take a wrapping ``( ... )``, a leading separator and lead words along."""
    if start > 0 and tokens[start - 1].is_op("(") and tokens[end].is_op(")"):
        start, end = start - 1, end + 1
    while start > 0 and (tokens[start - 1].kind == "text" and tokens[start - 1].value.lower() in LEAD_WORDS):
        start -= 1
    if start > 0 and tokens[start - 1].is_op(",", ";"):
        start -= 1
    elif start > 0 and tokens[start - 1].kind == "word" and tokens[start - 1].value == "and":
        start -= 1
    if start == 0 and tokens[end].is_op(",", ";", ":"):
        end += 1  # a declaration first: "k \in \mathbb{Z}, x = k\pi"
    return start, end


def _removable(tokens, start, end, names):
    """At the top level or in a set-builder about another letter, and the parameter is used."""
    if not any(t.kind == "ident" and t.value in names for t in tokens[:start] + tokens[end:]):
        return False
    if start == 0 and tokens[end].kind == "eof":
        return False
    stack = []
    for index, token in enumerate(tokens[:start]):
        if token.kind == "op" and token.value in OPENERS or token.is_cmd(r"\{"):
            stack.append(index)
        elif (token.kind == "op" and token.value in (")", "]", "}") or token.is_cmd(r"\}")) and stack:
            stack.pop()
    if not stack:
        return True
    opener = tokens[stack[-1]]
    if len(stack) == 1 and opener.is_cmd(r"\{"):
        variable = tokens[stack[-1] + 1]
        return variable.kind == "ident" and variable.value not in names
    return False


def describe(names):
    """``k ∈ ℤ`` for the explanation of a verdict."""
    return ", ".join(sorted(names)) + " \u2208 \u2124"

