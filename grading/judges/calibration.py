"""
Few-shot calibration from the experts' own labels, with a leakage-aware split.

For each rubric question, `choose_examples` picks k answers that have a gold score (imported with
the release or set by the experts): with k = 2 one strong and one weak answer by gold percentile
(gold / full score), in general k targets spread evenly from the top to the bottom. Around each
target the pick is random among the pool's answers within an eighth of the range of the target
percentile (seeded: the same data, rule and seed give the same examples).

The **split rule** says what an example may share with an answer judged beside it. Never the same
answer; then, cumulatively:

- ``answer``: the same student is allowed;
- ``student`` (default): not an answer by the same student (pseudonymous student id);
- ``class``: nor an answer of the same class, where an answer's class is the scan batch its pages
  came from, else the file it was imported from, else its exam;
- ``exam``: nor an answer of the same exam, so the examples come from other exams' questions and
  are shown with their own problem and reference.

**Where the examples come from** (``source``, issue 34): ``human`` (the default, the paper's
design: real students' answers only, shown beside every judged answer, human or synthetic),
``same`` (the judged answer's own source: human examples for human answers, synthetic ones for
synthetic answers; chosen per question and source), or ``any`` (every gold-scored answer, as
settings saved before issue 34 did: their recorded calibration has no ``source`` and reads as ``any``).

An example qualifies for a question only if the rule holds against *every* other answer of that
question, so the examples are fixed per question and recorded in the setting version
(``JudgeSetting.calibration``: example ids per question, rule, seed, k, the hold-out set). The
examples are a **hold-out**: a run of the setting never judges them (services.start_judge_run
drops them), so they are never in its metrics, queue or comparisons. When answers arrive after
the version was saved, the rule is checked again per prompt (`examples_text`), and an example that
now breaks it is left out of that prompt.
"""
from __future__ import annotations

import random
import time
from collections import Counter, defaultdict

from django.db.models import F, FloatField
from django.db.models.functions import Cast
from django.utils import timezone
from django.utils.translation import gettext

from annotation.models import Response, StepLabel

RULES = ("answer", "student", "class", "exam")
SOURCES = ("human", "same", "any")
HUMAN = "human"
CLASS_MEANING = "the scan batch of the answer's pages, else the file it was imported from, else its exam"
WINDOW = 0.125  # half-width of the percentile window around a target
_MEMO: dict = {}
_MEMO_SECONDS = 30.0


class CalibrationError(ValueError):
    pass


def _shares(rule):
    """Which attributes an example must not share with a judged answer, under `rule`."""
    if rule not in RULES:
        raise CalibrationError(gettext("Unknown split rule %(rule)s; choose from %(rules)s.")
                               % {"rule": repr(rule), "rules": ", ".join(RULES)})
    level = RULES.index(rule)
    return {"student": level >= 1, "class": level >= 2, "exam": level >= 3}


def answer_classes(response_ids) -> dict[int, str]:
    """The class of each answer (CLASS_MEANING)."""
    from ocr.models import Page  # noqa: PLC0415

    rows = Response.objects.filter(pk__in=list(response_ids)).values_list("pk", "import_file", "question__exam_id")
    classes = {pk: (f"file:{name}" if name else f"exam:{exam}") for pk, name, exam in rows}
    for response_id, batch_id in Page.objects.filter(response_id__in=list(classes)).values_list("response_id", "batch_id"):
        classes[response_id] = f"batch:{batch_id}"
    return classes


def _rows():
    """Every answer with text, as plain tuples: (id, question, exam, student, gold or None, full score, source)."""
    return list(
        Response.objects.exclude(transcript="")
        .filter(question__kind="rubric")
        .annotate(gold=Cast("gold_score", FloatField()), full=Cast(F("question__full_score"), FloatField()))
        .values_list("pk", "question_id", "question__exam_id", "student_id", "gold", "full", "source")
        .order_by("question_id", "pk")
    )


def source_of(calibration: dict) -> str:
    """Where a recorded calibration's examples come from (older records, without it: any)."""
    return (calibration or {}).get("source") or "any"


def _violates(shares, example, other, classes):
    """True if `example` may not be shown beside answer `other` (rows as in `_rows`)."""
    if example[0] == other[0]:
        return True
    if shares["student"] and example[3] == other[3]:
        return True
    if shares["class"] and classes.get(example[0]) == classes.get(other[0]):
        return True
    return bool(shares["exam"] and example[2] == other[2])


def _qualifies(held, candidate, own):
    """Whether `candidate` may be an example for a question whose answers hold these students,
    classes and exams (`own`: 1 when the candidate is itself one of those answers)."""
    shares, classes, students, class_counts, exams = held
    if shares["student"] and students[candidate[3]] - own > 0:
        return False
    if shares["class"] and class_counts[classes.get(candidate[0])] - own > 0:
        return False
    return not (shares["exam"] and candidate[2] in exams)


def _pick(pool, k, rng):
    """k answers of `pool` (rows with a gold score): targets spread from the top percentile to the bottom."""
    ranked = sorted(pool, key=lambda row: (row[4] / row[5] if row[5] else 0.0, row[0]))
    if not ranked:
        return []
    n = len(ranked)
    targets = [1.0] if k == 1 else [1.0 - i / (k - 1) for i in range(k)]
    chosen, taken = [], set()
    for target in targets:
        window = [i for i in range(n) if abs((i / (n - 1) if n > 1 else 1.0) - target) <= WINDOW and i not in taken]
        if not window:  # the window is used up: the nearest free answer
            free = [i for i in range(n) if i not in taken]
            if not free:
                break
            window = [min(free, key=lambda i: abs((i / (n - 1) if n > 1 else 1.0) - target))]
        index = rng.choice(window)
        taken.add(index)
        chosen.append(ranked[index])
    return chosen


def _choose(rows, by_question, gold_rows, shares, classes, k, seed, salt=""):
    """{question id: [example rows]} and the questions without any, examples drawn from `rows`'s gold-scored ones."""
    pool_ids = {row[0] for row in rows}
    examples, without = {}, []
    for question_id in sorted(by_question):
        answers = by_question[question_id]
        # Per-question examples unless the rule forbids the question's own exam (or class, where
        # no answer of the question qualifies); then any gold-scored answer of another question.
        # What the question's answers hold, counted once: a candidate qualifies when no *other*
        # answer of the question shares what the rule forbids (sets and counters, not pairs).
        students = Counter(a[3] for a in answers)
        class_counts = Counter(classes.get(a[0]) for a in answers) if shares["class"] else Counter()
        exams = {a[2] for a in answers}

        held = (shares, classes, students, class_counts, exams)
        pool = [c for c in answers if c[4] is not None and c[0] in pool_ids and _qualifies(held, c, 1)]
        if not pool and (shares["class"] or shares["exam"]):
            pool = [c for c in gold_rows if c[1] != question_id and c[0] in pool_ids and _qualifies(held, c, 0)]
        rng = random.Random(f"few-shot:{int(seed)}:{question_id}{salt}")
        chosen = _pick(pool, int(k), rng)
        if chosen:
            examples[str(question_id)] = [row[0] for row in chosen]
        else:
            without.append(question_id)
    return examples, without


def choose_examples(*, k: int = 2, rule: str = "student", seed: int = 0, comments: bool = False,
                    source: str = HUMAN) -> dict:
    """The calibration of a new few-shot setting version: example ids per question and the hold-out.

    Returns a dict for ``JudgeSetting.calibration`` (plain JSON)."""
    shares = _shares(rule)
    if source not in SOURCES:
        raise CalibrationError(gettext("Unknown example source %(source)s; choose from %(sources)s.")
                               % {"source": repr(source), "sources": ", ".join(SOURCES)})
    if not 1 <= int(k) <= 8:
        raise CalibrationError(gettext("Give between 1 and 8 examples per question."))
    rows = _rows()
    classes = answer_classes([row[0] for row in rows]) if shares["class"] else {}
    by_question = defaultdict(list)
    for row in rows:
        by_question[row[1]].append(row)
    gold_rows = [row for row in rows if row[4] is not None]
    by_source = {}
    if source == "same":
        # One set per source of the judged answers; the seed's draw is the "any" one's for human answers.
        for kind in sorted({row[6] for row in rows}):
            by_source[kind] = _choose([r for r in rows if r[6] == kind], by_question, gold_rows, shares, classes, k,
                                      seed, "" if kind == HUMAN else f":{kind}")
        examples = {}
        for kind_examples, _ in by_source.values():
            for question_id, ids in kind_examples.items():
                examples.setdefault(question_id, []).extend(ids)
        without = sorted({q for q in by_question if str(q) not in examples})
        without_by_source = {kind: found[1] for kind, found in by_source.items()}
    else:
        pool = [r for r in rows if r[6] == HUMAN] if source == HUMAN else rows
        examples, without = _choose(pool, by_question, gold_rows, shares, classes, k, seed)
        without_by_source = {}
    holdout = sorted({pk for ids in examples.values() for pk in ids})
    out = {
        "k": int(k), "rule": rule, "seed": int(seed), "comments": bool(comments), "source": source,
        "class_means": CLASS_MEANING if shares["class"] else "",
        "examples": examples, "holdout": holdout, "questions_without_examples": without,
        "n_gold_answers": len(gold_rows), "chosen_at": timezone.now().isoformat(),
    }
    if source == "same":
        out["examples_by_source"] = {kind: found[0] for kind, found in by_source.items()}
        out["questions_without_examples_by_source"] = without_by_source
    return out


# --- the prompt ------------------------------------------------------------------------------

def _example_rows(setting):
    """{response id: (row, transcript, question statement, reference, comments)} of a version's examples (memoised briefly)."""
    ids = [int(i) for i in (setting.calibration or {}).get("holdout", [])]
    # the recorded choice is part of the key: a row id (and a version) may name another setting later
    key = (setting.pk, setting.version, (setting.calibration or {}).get("chosen_at"), tuple(ids))
    hit = _MEMO.get(key)
    if hit and time.monotonic() - hit[0] < _MEMO_SECONDS:
        return hit[1]
    found = {}
    for response in Response.objects.filter(pk__in=ids).select_related("question"):
        row = (response.pk, response.question_id, response.question.exam_id, response.student_id,
               float(response.gold_score) if response.gold_score is not None else None,
               float(response.question.full_score), response.source)
        found[response.pk] = (row, response.transcript, response.question.statement,
                              response.question.reference_solution, [])
    if (setting.calibration or {}).get("comments"):
        steps = (StepLabel.objects.filter(label__response_id__in=ids, label__submitted=True)
                 .exclude(comment="").order_by("label__response_id", "start", "pk")
                 .values_list("label__response_id", "quote", "verdict", "comment"))
        for response_id, quote, verdict, comment in steps:
            found[response_id][4].append((quote, verdict, comment))
    _MEMO[key] = (time.monotonic(), found)
    return found


def shown_examples(setting, response) -> list[int]:
    """Ids of the examples shown beside `response`: its question's examples that obey the rule
    (with the ``same`` source, those chosen for the answer's own source)."""
    calibration = setting.calibration or {}
    examples = calibration.get("examples", {})
    if source_of(calibration) == "same":
        examples = calibration.get("examples_by_source", {}).get(response.source, {})
    ids = [int(i) for i in examples.get(str(response.question_id), [])]
    if not ids:
        return []
    shares = _shares(calibration.get("rule", "student"))
    rows = _example_rows(setting)
    judged = (response.pk, response.question_id, response.question.exam_id, response.student_id, None, None,
              response.source)
    classes = answer_classes([response.pk, *ids]) if shares["class"] else {}
    return [i for i in ids if i in rows and not _violates(shares, rows[i][0], judged, classes)]


def _number(value):
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def examples_text(setting, response) -> str:
    """The ``{{ examples }}`` block of `response`'s prompt (empty when its question has none)."""
    ids = shown_examples(setting, response)
    if not ids:
        return ""
    rows = _example_rows(setting)
    parts = ["Calibration examples: answers scored by expert graders, with their scores. Use them to see how "
             "strictly the rubric is applied; they are not the answer you grade."]
    for number, pk in enumerate(ids, 1):
        row, transcript, statement, reference, steps = rows[pk]
        head = f"Example {number} (expert score: {_number(row[4])} out of {_number(row[5])} points)"
        if row[1] != response.question_id:
            head += "\nThis example answers a different problem:\n" + statement + "\nIts reference solution:\n" + reference
        block = f"{head}\nAnswer:\n{transcript}"
        if steps:
            block += "\nThe expert's step comments:\n" + "\n".join(
                f"- \"{quote[:200]}\": {verdict.replace('_', ' ')}; {comment}" for quote, verdict, comment in steps)
        parts.append(block)
    return "\n\n".join(parts)


def example_table(setting) -> list[dict]:
    """The examples of a version, for its page: question, answer, student, source, gold, shown text."""
    calibration = setting.calibration or {}
    ids = [int(i) for i in calibration.get("holdout", [])]
    answers = {r.pk: r for r in Response.objects.filter(pk__in=ids).select_related("question", "question__exam")}
    from annotation.models import Question  # noqa: PLC0415

    labels = {q.pk: q.location or q.external_id or str(q.pk) for q in
              Question.objects.filter(pk__in=[int(k) for k in calibration.get("examples", {})]).only("id", "location", "external_id")}
    table = []
    for question_id, example_ids in sorted(calibration.get("examples", {}).items(), key=lambda kv: int(kv[0])):
        for pk in example_ids:
            answer = answers.get(int(pk))
            table.append({
                "question": int(question_id), "question_label": labels.get(int(question_id), question_id),
                "response": int(pk), "missing": answer is None,
                "from_question": answer.question_id if answer else None,
                "label": (answer.question.location or answer.question.external_id or str(answer.question_id)) if answer else "",
                "exam": answer.question.exam.name if answer else "",
                "student": answer.student_id if answer else "", "source": answer.source if answer else "",
                "gold": float(answer.gold_score) if answer and answer.gold_score is not None else None,
                "full": float(answer.question.full_score) if answer else None,
                "text": answer.transcript if answer else "",
            })
    return table
