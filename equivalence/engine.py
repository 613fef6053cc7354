"""The check itself: parse, classify and compare two answers (runs inside the worker process).

:func:`judge` never raises: every failure becomes an undecided verdict with a reason. It keeps
to its soft time budget where it can (the worker's main thread has ``SIGALRM``); the parent
process kills it if it does not.
"""
import copy
import re
import sys
import time

from . import budget, domains, labels, meaning, piecewise
from .answers import ClassifyError, classify
from .compare import Comparator, Outcome, rescaled
from .constants import MAX_ANSWER_CHARS, MAX_SOLUTION_CHARS, MODES
from .display import describe_safely
from .extraction import ANSWER_IS, CHAT_TAG, CONCLUSION_MARKERS, extract_answer, final_answer, final_boxed
from .messages import M, as_data, joined
from .normalize import normalize
from .parser import ParseError, parse_answer
from .reading import _top_level_items, read
from .units import canonical_set, compound_amounts, conversion_factor, known_dimensions_differ

SOFT_SHARE = 0.85  # of the timeout, for the comparison; the rest is for replying in time


def judge(pred, gold, mode="default", timeout=2.0, domain=""):
    """Compare ``pred`` with ``gold``; return the verdict as a plain dict."""
    started = time.monotonic()
    result = {
        "equivalent": None, "method": "", "explanation": "", "pred_parsed": "", "gold_parsed": "",
        "pred_latex": "", "gold_latex": "", "pred_kind": "", "gold_kind": "", "elapsed_ms": 0.0,
        "approximate": False, "decisive": "",
        "pred_answer": "", "gold_answer": "", "pred_source": "", "gold_source": "",
    }
    try:
        with budget.time_budget(timeout * SOFT_SHARE):
            _judge_into(result, pred, gold, mode, started + timeout * SOFT_SHARE, domain)
    except budget.BudgetExceeded:
        _undecided(result, "timeout", M('no decision within {timeout} s', timeout=format(timeout, 'g')))
    except MemoryError:
        _undecided(result, "memory", M('the check ran out of memory'))
    except RecursionError:
        _undecided(result, "error", M('the answer is nested too deeply'))
    except Exception as exc:  # noqa: BLE001 - a verdict is always returned
        _undecided(result, "error", M('internal error: {type_exc___name}', type_exc___name=type(exc).__name__))
    _as_text(result)
    result["elapsed_ms"] = round((time.monotonic() - started) * 1000, 3)
    return result


def _undecided(result, method, explanation):
    result.update(equivalent=None, method=method, explanation=explanation)


def _judge_into(result, pred, gold, mode, deadline, domain=""):
    if mode not in MODES:
        _undecided(result, "error", M("unknown mode {mode} (use 'default' or 'strict')", mode=repr(mode)))
        return
    if not isinstance(pred, str) or not isinstance(gold, str):
        _undecided(result, "error", M('answers must be strings'))
        return
    for name, text in (("pred", pred), ("gold", gold)):
        if len(text) > MAX_SOLUTION_CHARS:
            _undecided(result, "too-long", M('{name} is longer than {MAX_SOLUTION_CHARS} characters', name=name, MAX_SOLUTION_CHARS=MAX_SOLUTION_CHARS))
            return
    taken = {}
    for name, text in (("pred", pred), ("gold", gold)):
        taken[name] = answer_text(text)
        result[f"{name}_answer"] = (taken[name][0] or "")[:500]
        result[f"{name}_source"] = taken[name][1]
    for name in ("pred", "gold"):
        if taken[name][0] is None:
            _undecided(result, "no-answer", M('no final answer found in the predicted solution') if name == 'pred' else M('no final answer found in the gold solution'))
            return
    pred, gold = taken["pred"][0], taken["gold"][0]
    for name, text in (("pred", pred), ("gold", gold)):
        if len(text) > MAX_ANSWER_CHARS:
            _undecided(result, "too-long", M('{name} is longer than {MAX_ANSWER_CHARS} characters', name=name, MAX_ANSWER_CHARS=MAX_ANSWER_CHARS))
            return
    answers = {}
    errors = {}
    parsed_units = {}
    parsed = {}
    readings = {}
    guarded = {}
    for name, text in (("pred", pred), ("gold", gold)):
        readings[name] = read(text)
    _align_named(readings)
    for name in ("pred", "gold"):
        try:
            answers[name], parsed_units[name], parsed[name], guarded[name] = _answer_of(readings[name])
        except (ParseError, ClassifyError) as exc:
            errors[name] = exc.args[0] if exc.args else str(exc)  # a message (M) the app can translate
            result[f"{name}_parsed"] = (pred if name == "pred" else gold)[:200]
            continue
    _words_as_text(answers, readings)
    implicit = _implicit_family(answers, parsed) if all(parsed.get(name) is not None for name in ("pred", "gold")) else ""
    for name in answers:
        text_form, latex_form = describe_safely(answers[name])
        result[f"{name}_parsed"] = text_form
        result[f"{name}_latex"] = latex_form
        result[f"{name}_kind"] = answers[name].kind
    if normalize(pred) == normalize(gold) and pred.strip():
        result.update(equivalent=True, method="identical", explanation=M("the same answer after normalisation"))
        return
    if errors:
        which = M("either answer") if len(errors) == 2 else M("the predicted answer") if "pred" in errors else M("the gold answer")
        reason = joined("; ", [M("{name}: {error}", name=M("predicted") if k == "pred" else M("gold answer"), error=v) for k, v in errors.items()])
        _undecided(result, "unparsed", M('could not read {which} ({reason})', which=which, reason=reason))
        return
    units = {name: canonical_set(parsed_units[name]) for name in parsed_units}
    note = ""
    if units.get("pred") and units.get("gold") and units["pred"] != units["gold"]:
        converted = _convert_units(answers["pred"], units["pred"], units["gold"])
        if converted is None and len(units["pred"]) == len(units["gold"]) == 1 and known_dimensions_differ(units["pred"][0], units["gold"][0]):
            result.update(equivalent=False, method="units", explanation=M("{first} and {second} measure different quantities", first=_unit_name(units['pred'][0]), second=_unit_name(units['gold'][0])),
                          decisive=M("units {first} / {second}", first=_unit_name(units['pred'][0]), second=_unit_name(units['gold'][0])))
            return
        if converted is None:
            _undecided(result, "units", M('different units ({join_map__unit_name_unit} vs {join_map__unit_name_unit2}) that cannot be converted into each other here', join_map__unit_name_unit=', '.join(map(_unit_name, units['pred'])), join_map__unit_name_unit2=', '.join(map(_unit_name, units['gold']))))
            result["decisive"] = M("units {first} / {second}", first=', '.join(map(_unit_name, units['pred'])), second=', '.join(map(_unit_name, units['gold'])))
            return
        answers["pred"], note = converted
    try:
        stated = domains.parse_domain(domain)
        written = {name: domains.parse_domain(readings[name].domain) for name in ("pred", "gold") if readings[name].domain}
    except domains.DomainError as exc:
        _undecided(result, "domain", M('could not read the domain ({exc})', exc=exc))
        return
    if len(written) == 2 and written["pred"] != written["gold"]:
        _undecided(result, "domain", M('the answers state different domains ({first} vs {second})',
                                       first=domains.describe(written["pred"]), second=domains.describe(written["gold"])))
        result["decisive"] = M('domain {domains_describe_domain}', domains_describe_domain=domains.describe(written["gold"]))
        return
    for name, found in written.items():
        stated = domains.merged(stated, found)
        if not (name == "gold" and "pred" in written):  # the same domain on both sides is said once
            readings["pred"].notes.append(
                M('the predicted answer states the domain {domain}', domain=domains.describe(found)) if name == "pred"
                else M('the gold answer states the domain {domain}', domain=domains.describe(found)))
    comparator = Comparator(mode, deadline, stated)
    outcome = comparator.compare(answers["pred"], answers["gold"])
    decisive = outcome.decisive
    if outcome.equivalent is True:
        clash = meaning.difference(guarded["pred"].all_text, guarded["gold"].all_text)
        if clash is not None:
            group, words_pred, words_gold = clash
            shown = f"{'/'.join(words_pred)} vs {'/'.join(words_gold)}"
            outcome = Outcome(None, "meaning-word", M('the answers differ in the words «{shown}» ({group}), which this comparison did not compare; the rest: {outcome_explanation}', shown=shown, group=M(group), outcome_explanation=outcome.explanation))
            decisive = M('word {shown}', shown=shown)
    one_sided = meaning.one_sided_claim(guarded["pred"], guarded["gold"])
    if one_sided is not None and (outcome.equivalent is True or (
            outcome.equivalent is False and outcome.method == "piecewise"
            and (answers["pred"].kind == "piecewise") != (answers["gold"].kind == "piecewise"))):
        side, group, words = one_sided
        shown = "/".join(words)
        template = ("the first answer also says «{shown}» ({group}), which the other does not say and this comparison set aside; the rest: {outcome_explanation}"
                    if side == "pred" else
                    "the second answer also says «{shown}» ({group}), which the other does not say and this comparison set aside; the rest: {outcome_explanation}")
        outcome = Outcome(None, "meaning-word", M(template, shown=shown, group=M(group), outcome_explanation=outcome.explanation))
        decisive = M('word {shown}', shown=shown)
    notes = readings["pred"].notes + [n for n in readings["gold"].notes if n not in readings["pred"].notes]
    if notes:
        outcome = Outcome(outcome.equivalent, outcome.method, M('{outcome_explanation} ({join_notes})', outcome_explanation=outcome.explanation, join_notes=joined("; ", notes)))
        if not decisive and any(note.startswith("rejected:") for note in notes):
            decisive = next((M("word {word}", word=word) for word in _REJECTION_WORDS if word in pred or word in gold), M("word rejected"))
    result["approximate"] = bool(outcome.equivalent is True and comparator.approximated)
    result["decisive"] = decisive
    if implicit:
        outcome = Outcome(outcome.equivalent, outcome.method, M('{outcome_explanation} ({implicit})', outcome_explanation=outcome.explanation, implicit=implicit))
    if note:
        outcome = Outcome(outcome.equivalent, outcome.method + "-units", M('{note}: {outcome_explanation}', note=note, outcome_explanation=outcome.explanation))
    result.update(equivalent=outcome.equivalent, method=outcome.method, explanation=outcome.explanation)


def _as_text(result):
    """Messages become their English text, with their structure beside them for translation."""
    result["explanation_data"] = as_data(result.get("explanation"))
    result["decisive_data"] = as_data(result.get("decisive"))
    result["explanation"] = str(result.get("explanation") or "")
    result["decisive"] = str(result.get("decisive") or "")


_REJECTION_WORDS = ("舍去", "不合题意", "不符合题意", "rejected", "extraneous")


_BARE_WORD = re.compile(r"^[A-Za-z]{3,24}$")


def _words_as_text(answers, readings):
    """``\\text{odd}`` against ``odd``: a bare word beside an answer in words is that word, not o·d·d."""
    for side, other in (("pred", "gold"), ("gold", "pred")):
        if side in answers and other in answers and answers[other].kind == "text" and answers[side].kind == "expression":
            word = readings[side].text.strip()
            if _BARE_WORD.match(word):
                answers[side] = classify(parse_answer("\\text{" + word + "}"))


def _align_named(readings):
    """"AB = 3, BC = 4" against "BC = 4, AB = 3": named values are compared by name, not position."""
    first, second = readings["pred"].named, readings["gold"].named
    if bool(first) != bool(second):
        # "AB = 3, BC = 4" against "3, 4": the bare values are read in the order written too.
        named, bare = ("pred", "gold") if first else ("gold", "pred")
        text = readings[bare].text.strip()
        if readings[bare].labels is None and readings[bare].branches is None and not text.startswith(("(", "[", "\\{")) \
                and len(_top_level_items(text)) == len(readings[named].named):
            readings[bare].text = "(" + text + ")"
        return
    if not first or not second or [n for n, _ in first] == [n for n, _ in second]:
        return
    if sorted(n for n, _ in first) != sorted(n for n, _ in second):
        return
    values = dict(second)
    readings["gold"].text = "(" + ", ".join(values[n] for n, _ in first) + ")"


def _answer_of(reading):
    """(Answer, units, Parsed or None, Guarded: the words the meaning guard looks at) of one reading."""
    if reading.polar:
        return labels.make_polar(reading.polar, reading.polar_word), [], None, meaning.Guarded()
    if reading.labels is not None:
        items, units, guarded = [], [], meaning.Guarded()
        for key, word, text in reading.labels:
            answer, found, _, inner = _answer_of(read_value(text, reading.notes))
            items.append((key, word, answer))
            units.extend(found)
            guarded = guarded.join(inner).with_label(word)  # a label is compared only against another label
        return labels.make_labelled(items), units, None, guarded
    if reading.branches is not None:
        branches, guarded = [], meaning.Guarded()
        for condition, text in reading.branches:
            condition_answer = None
            if condition is not None:
                condition_answer = classify(parse_answer(condition))
                guarded = guarded.with_claim(condition)
            value_reading = read_value(text, reading.notes)
            if value_reading.branches is not None:
                raise ClassifyError(M('a piecewise answer inside a piecewise answer'))
            answer, _, _, inner = _answer_of(value_reading)
            branches.append((condition_answer, answer))
            guarded = guarded.join(inner)
            if answer.kind == "text":
                guarded = guarded.with_branch_claim(answer.value)
        return piecewise.make(reading.head, branches), [], None, guarded
    text = compound_amounts(reading.text, reading.notes)
    parsed = parse_answer(text)
    answer = classify(parsed)
    guarded = meaning.Guarded().with_claim(meaning.without_value_words(text))
    return answer, parsed.units, parsed, guarded


def read_value(text, notes):
    """The reading of a label's value or a branch's value (its notes join the answer's)."""
    value = read(text)
    notes.extend(note for note in value.notes if note not in notes)
    return value


def _unit_name(name):
    return name.split(":", 1)[1] if ":" in name else name


IMPLICIT_PARAMETERS = frozenset({"k", "n", "m"})


def _implicit_family(answers, parsed):
    """``x = k\\pi + \\frac{\\pi}{4}`` beside a family with ``k \\in \\mathbb{Z}``: k is an integer there too.

    Replaces the undeclared answer by its family reading and returns a note, or "".
    """
    if len(answers) != 2 or (answers["pred"].kind == "family") == (answers["gold"].kind == "family"):
        return ""
    family_side = "pred" if answers["pred"].kind == "family" else "gold"
    other = "gold" if family_side == "pred" else "pred"
    names = IMPLICIT_PARAMETERS | answers[family_side].value.params
    try:
        reading = classify(parsed[other], params=names)
    except ClassifyError:
        return ""
    if reading.kind != "family":
        return ""
    answers[other] = reading
    used = sorted(name for name in reading.value.params if any(
        getattr(member, "param", None) is not None and member.param.name == name for member in reading.value.members))
    names = {"pred": "predicted", "gold": "gold"}
    if other == "gold":
        return M("{letters} read as an integer in the gold answer, as in the predicted one", letters=", ".join(used) or "k")
    return M("{letters} read as an integer in the predicted answer, as in the gold one", letters=", ".join(used) or "k")


def _convert_units(answer, source, target):
    """``answer`` (a number, or x = number) in ``source`` units re-expressed in ``target`` units."""
    if len(source) != 1 or len(target) != 1:
        return None
    factor = conversion_factor(source[0], target[0])
    if factor is None:
        return None
    note = M("1 {source} = {factor} {target} (SymPy units)", source=source[0], factor=factor, target=target[0])
    if answer.kind == "number":
        return rescaled(answer, factor), note
    if answer.kind == "equation" and answer.rhs is not None and answer.rhs.kind == "number":
        converted = copy.copy(answer)
        converted.rhs = rescaled(answer.rhs, factor)
        return converted, note
    return None


def answer_text(text):
    """(the text taken as the answer or None, where it came from) for an answer or a whole solution.

    A whole solution (several lines, more than :data:`SOLUTION_CHARS` characters, a chat-template
    tag, or formulas in prose with a conclusion marker) goes through :func:`final_answer`; a short
    answer is unwrapped from ``\\boxed{}`` / "the answer is" and otherwise read as it is (the
    reading of conclusions, labels and branches in ``reading.py`` does the rest). Source codes:
    "as-given", "boxed", "answer-is", "conclusion", "last-formula", "last-line", "none".
    """
    if not isinstance(text, str):
        return text, "as-given"
    stripped = text.strip()
    if not is_solution(stripped):
        answer = unwrap(stripped)
        if answer == stripped:
            return answer, "as-given"
        return answer, "boxed" if "box" in stripped and final_boxed(stripped) is not None else "answer-is"
    found = final_answer(stripped)
    if found.answer is None or (found.source == "last-line" and "\n" not in stripped
                                and len(stripped) <= SOLUTION_CHARS and not found.dropped_tail):
        if found.answer is None and found.source == "none" and "\n" in stripped:
            return None, "none"
        return unwrap(stripped), "as-given"
    return found.answer.strip(), found.source


SOLUTION_CHARS = 300  # a longer text is read as a whole solution


_PROSE_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{3,}(?![A-Za-z])|[\u3400-\u9fff]{2,}")
_COMMAND = re.compile(r"\\[A-Za-z]+(?:\{[^{}]{0,40}\})?")


def is_solution(text):
    """A whole solution rather than an answer: prose (several words) on several lines, in a long
    text, or around formulas with a conclusion marker; or a chat-template tag."""
    if CHAT_TAG.search(text):
        return True
    formulas = "$" in text or "\\(" in text
    if formulas and CONCLUSION_MARKERS.search(text) is not None:
        return True  # "所以 $a$ 为 $2$，$b$ 为 $3$": formulas in a concluding sentence
    words = len(_PROSE_WORD.findall(_COMMAND.sub(" ", text[-MAX_SOLUTION_CHARS:])))
    if words < 3:
        return False
    if "\n" in text.strip() or len(text) > SOLUTION_CHARS:
        return True
    return "$" in text or "\\(" in text  # formulas in prose: "The inverse is the matrix $...$."


def unwrap(text):
    """The answer inside ``\\boxed{}`` or after "the answer is"; otherwise the text itself."""
    if not isinstance(text, str):
        return text
    boxed = final_boxed(text) if "box" in text else None
    if boxed is not None:
        return boxed.strip()
    if ANSWER_IS.search(text):
        found = extract_answer(text)
        if found:
            return found.strip()
    return text.strip()


def configure_process():
    """Settings for a process that runs checks (large integers print, deep expressions recurse)."""
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(200_000)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 4000))
