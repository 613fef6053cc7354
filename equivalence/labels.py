"""Labelled answers ("最大值为 2，最小值为 -1", "max 2, min -1") and yes/no answers (是 / 否, 存在).

Labelled answers are compared label by label, never by position: "最大值为 2，最小值为 -1" is
not "最小值为 2，最大值为 -1" (the same two numbers), and "max 2, min -1" equals the first. The
explanation names the label that decided. Answers with different labels are different answers
(极大值 is not 最大值, 递增 is not 递减), even when their values agree.
"""
from .answers import Answer
from .messages import M
from .reading import LABEL_NAMES

# Pairs of yes/no answers that contradict each other.
OPPOSITE = {frozenset({"yes", "no"}), frozenset({"exists", "not-exists"})}


def make_labelled(items):
    """``items``: [(key, word as written, value Answer)]."""
    return Answer("labelled", items)


def make_polar(key, word):
    return Answer("polar", key, symbol=word)


def compare_labelled(comparator, a, b):
    from .compare import no, unknown, yes  # cycle: compare imports this module

    if a.kind == "labelled" and b.kind == "labelled":
        first, second = _by_key(a), _by_key(b)
        if set(first) != set(second):
            only_first = [_shown(a, b, key) for key in first if key not in second]
            only_second = [_shown(a, b, key) for key in second if key not in first]
            shown = M("{first} vs {second}", first=", ".join(only_first) or "—", second=", ".join(only_second) or "—")
            outcome = no("label", M('the labels differ: {shown} ({join__words_a} vs {join__words_b})', shown=shown, join__words_a=' / '.join(_words(a)), join__words_b=' / '.join(_words(b))))
            outcome.decisive = M('label {shown}', shown=shown)
            return outcome
        undecided = None
        agreed = []
        for key in second:
            outcome = _compare_values(comparator, first[key], second[key])
            shown = _shown(a, b, key)
            if outcome.equivalent is False:
                result = no("label", M('{shown}: {outcome_explanation}', shown=shown, outcome_explanation=outcome.explanation))
                result.decisive = M('label {shown}', shown=shown)
                return result
            if outcome.equivalent is None:
                undecided = undecided or (shown, outcome.explanation)
            agreed.append(shown)
        if undecided:
            result = unknown("label", M('{undecided_0}: {undecided_1}', undecided_0=undecided[0], undecided_1=undecided[1]))
            result.decisive = M('label {undecided_0}', undecided_0=undecided[0])
            return result
        result = yes("label", M('every label agrees: {join_agreed}', join_agreed=", ".join(agreed)))
        result.decisive = M('labels {join_agreed}', join_agreed=", ".join(agreed))
        return result
    labelled, other = (a, b) if a.kind == "labelled" else (b, a)
    if other.kind in ("polar", "text"):
        return no("kind", M('{labelled_kind_name} vs {other_kind_name}', labelled_kind_name=labelled.kind_name, other_kind_name=other.kind_name))
    if len(labelled.value) != 1:
        return unknown("label", M('one answer labels its values ({join__words_labelled}), the other does not: which value is which cannot be told', join__words_labelled=", ".join(_words(labelled))))
    key, word, value = labelled.value[0]
    outcome = comparator.compare(value, other) if labelled is a else comparator.compare(other, value)
    result = type(outcome)(outcome.equivalent, outcome.method, M('{outcome_explanation} (the label «{word}» is on one side only)', outcome_explanation=outcome.explanation, word=word))
    result.decisive = outcome.decisive or M("label {word}", word=word)
    return result


def compare_polar(comparator, a, b):
    from .compare import no, unknown, yes  # cycle: compare imports this module

    if a.kind == "polar" and b.kind == "polar":
        words = f"«{a.symbol}» vs «{b.symbol}»"
        if a.value == b.value:
            outcome = yes("word", M('the same answer in words ({words})', words=words))
        elif frozenset({a.value, b.value}) in OPPOSITE:
            outcome = no("word", M('opposite answers {words}', words=words))
        else:
            outcome = unknown("word", M('different kinds of yes/no answer {words}', words=words))
        outcome.decisive = M('word {a_symbol} / {b_symbol}', a_symbol=a.symbol, b_symbol=b.symbol)
        return outcome
    polar, other = (a, b) if a.kind == "polar" else (b, a)
    if polar.value == "has-solution" and other.kind == "set" and other.value == _empty():
        outcome = no("word", M('«{polar_symbol}» vs no solution (∅)', polar_symbol=polar.symbol))
        outcome.decisive = M('word {polar_symbol}', polar_symbol=polar.symbol)
        return outcome
    return unknown("word", M('one answer is the word «{polar_symbol}», the other is {other_kind_name}', polar_symbol=polar.symbol, other_kind_name=other.kind_name))


def _compare_values(comparator, left, right):
    if len(left) == 1 and len(right) == 1:
        return comparator.compare(left[0], right[0])
    return comparator.unordered(left, right)


def _by_key(answer):
    found = {}
    for key, _, value in answer.value:
        found.setdefault(key, []).append(value)
    return found


def _words(answer):
    return [word for _, word, _ in answer.value]


def _shown(a, b, key):
    for answer in (b, a):
        for found, word, _ in answer.value:
            if found == key:
                return word.rstrip("为是:= ")
    return LABEL_NAMES.get(key, key)


def _empty():
    import sympy as sp  # lazy: SymPy takes seconds to load

    return sp.S.EmptySet
