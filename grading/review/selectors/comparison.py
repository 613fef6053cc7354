"""Compare settings: two or more judge setting versions on the answers each pair of
them both scored, with paired statistics (core.paired). One query per setting plus one
for the answers' questions, gold and source, however many answers.

An answer counts for a pair when both settings' current results on it (the newest per answer, as
on the metrics page) have status OK and a score, and it has a gold score. The selection rule,
seed, resamples and every count are in the returned dict, so a figure can be reproduced from it.
"""
from itertools import combinations

import numpy as np
from django.db.models import FloatField
from django.db.models.functions import Cast
from django.utils.translation import gettext_lazy

from annotation.models import Response
from core import paired

from ...judges import strategies
from ...models import JudgeResult, JudgeSetting
from .scopes import Scope, current_results, question_label

SELECTION_RULE = ("answers both settings scored (current result, status ok, a score) that have a gold score; "
                  "hold-outs of either setting (few-shot examples, a prompt set's calibration answers) excluded; "
                  "derived answers (probes, rewrites) are never responses, so never counted")
MAX_CASES = 50
# The method in words for people, in their language (the JSON keeps the English above).
METHOD_TEXT = {
    paired.RESAMPLING: gettext_lazy(
        "cluster bootstrap: whole questions drawn with replacement, every answer of a drawn question kept, "
        "both settings re-measured on the same draw"),
    SELECTION_RULE: gettext_lazy(
        "answers both settings scored (current result, status ok, a score) that have a gold score; "
        "hold-outs of either setting (few-shot examples, a prompt set's calibration answers) excluded; "
        "derived answers (probes, rewrites) are never responses, so never counted"),
}


class CompareError(ValueError):
    """Fewer than two settings, or one that does not exist."""


def _scores(setting, exam_id):
    results = current_results(Scope(setting=setting)).filter(status=JudgeResult.Status.OK, score__isnull=False)
    if exam_id:
        results = results.filter(response__question__exam_id=exam_id)
    return dict(results.values_list("response_id", "score"))


# Up to this many answer ids go into the query as a list; beyond it (SQLite's parameter cost and
# Django's per-parameter preparation grow with the list) the settings' results are a subquery.
MAX_LISTED_IDS = 2000


def _answers(settings, scores):
    """Gold, source and question of the answers at least two of the settings scored: only those
    can be in a pair (an answer one setting alone scored counts in `only_a` / `only_b`, which
    read the scores). One query, whatever the number of answers."""
    seen, wanted = set(), set()
    for setting_scores in scores.values():
        wanted |= seen & setting_scores.keys()
        seen |= setting_scores.keys()
    if not wanted:
        return {}
    if len(wanted) <= MAX_LISTED_IDS:
        rows = Response.objects.filter(pk__in=wanted)
    else:
        rows = Response.objects.filter(pk__in=JudgeResult.objects.filter(setting__in=settings).values("response_id"))
    rows = (rows.filter(gold_score__isnull=False).annotate(gold=Cast("gold_score", FloatField()))
            .values_list("pk", "gold", "source", "question_id", "question__location", "question__external_id"))
    return {pk: (gold, source, qid, question_label(qid, location, external))
            for pk, gold, source, qid, location, external in rows if pk in wanted}


def _arrays(ids, scores_a, scores_b, answers):
    a = np.array([scores_a[i] for i in ids], dtype=float)
    b = np.array([scores_b[i] for i in ids], dtype=float)
    gold = np.array([answers[i][0] for i in ids], dtype=float)
    clusters = np.array([answers[i][2] for i in ids])
    return a, b, gold, clusters


def _by_question(ids, a, b, gold, answers):
    rows = []
    questions = np.array([answers[i][2] for i in ids])
    for qid in sorted(set(questions.tolist())):
        mask = questions == qid
        ea, eb = np.abs(a[mask] - gold[mask]), np.abs(b[mask] - gold[mask])
        rows.append({
            "question": int(qid), "label": answers[ids[int(np.flatnonzero(mask)[0])]][3], "n": int(mask.sum()),
            "mae_a": float(ea.mean()), "mae_b": float(eb.mean()), "mae_difference": float(eb.mean() - ea.mean()),
            "fr_2_a": float(np.mean(ea >= 2 - 1e-9)), "fr_2_b": float(np.mean(eb >= 2 - 1e-9)),
        })
    return rows


def _case_rows(indices, ids, a, b, gold, answers):
    return [
        {"response": ids[i], "question": answers[ids[i]][3], "gold": float(gold[i]), "a": float(a[i]), "b": float(b[i])}
        for i in indices[:MAX_CASES]
    ]


def compare_pair(setting_a, setting_b, scores_a, scores_b, answers, *, n_resamples, seed, holdout=frozenset(),
                 overall_only=False):
    """One pair's figures; `overall_only` (the methods report) leaves out the groups by source and
    question and the split cases."""
    holdout = set(holdout)
    both = set(scores_a) & set(scores_b) & set(answers)
    ids = sorted(both - holdout)
    scored_holdout = (set(scores_a) | set(scores_b)) & holdout  # left out, whoever scored them
    a, b, gold, clusters = _arrays(ids, scores_a, scores_b, answers)
    head = {
        "a": setting_a.pk, "b": setting_b.pk,
        "a_label": str(setting_a), "b_label": str(setting_b),
        "n_common": len(ids),
        "n_holdout_excluded": len(scored_holdout),
        "only_a": len(set(scores_a) - set(scores_b) - holdout), "only_b": len(set(scores_b) - set(scores_a) - holdout),
        "overall": paired.paired_comparison(a, b, gold, clusters, n_resamples=n_resamples, seed=seed),
    }
    if overall_only:
        return head
    sources = np.array([answers[i][1] for i in ids], dtype=object)
    by_source = []
    for source in sorted(set(sources.tolist())):
        mask = sources == source
        by_source.append({"source": source, **paired.paired_comparison(
            a[mask], b[mask], gold[mask], clusters[mask], n_resamples=n_resamples, seed=seed)})
    a_close, b_close = paired.split_cases(a, b, gold)
    return {
        **head,
        "by_source": by_source,
        "by_question": _by_question(ids, a, b, gold, answers),
        "cases": {
            "a_close_b_off": _case_rows(a_close, ids, a, b, gold, answers), "n_a_close_b_off": len(a_close),
            "b_close_a_off": _case_rows(b_close, ids, a, b, gold, answers), "n_b_close_a_off": len(b_close),
        },
    }


def resolve_settings(ids):
    """Setting versions by id, in the order given (duplicates dropped); CompareError unless >= 2."""
    wanted = list(dict.fromkeys(int(i) for i in ids))
    found = JudgeSetting.objects.in_bulk(wanted)
    missing = [i for i in wanted if i not in found]
    if missing:
        raise CompareError(f"No judge setting version with id {missing[0]}.")
    if len(wanted) < 2:
        raise CompareError("Choose at least two judge setting versions to compare.")
    return [found[i] for i in wanted]


def compare_settings(settings, *, exam=None, n_resamples=1000, seed=0, overall_only=False, against_first=False):
    """Every pair of `settings` (setting A before B in the order given), paired on their common answers
    (`overall_only`: each pair's overall figures alone, see compare_pair; `against_first`: only the
    pairs of the first setting, A, with each other one, B: the methods report's baseline design)."""
    if len(settings) < 2:
        raise CompareError("Choose at least two judge setting versions to compare.")
    exam_id = exam.pk if exam is not None else None
    scores = {s.pk: _scores(s, exam_id) for s in settings}
    answers = _answers(settings, scores)
    holdouts = {s.pk: strategies.holdout_ids(s) for s in settings}
    pairs = [compare_pair(sa, sb, scores[sa.pk], scores[sb.pk], answers, n_resamples=n_resamples, seed=seed,
                          holdout=holdouts[sa.pk] | holdouts[sb.pk], overall_only=overall_only)
             for sa, sb in (((settings[0], other) for other in settings[1:]) if against_first
                            else combinations(settings, 2))]
    return {
        "settings": [{"id": s.pk, "name": s.name, "version": s.version, "kind": s.kind, "model": s.model,
                      "strategy": s.strategy or "reason-then-score", "n_holdout": len(holdouts[s.pk]),
                      "n_scored": len(scores[s.pk])} for s in settings],
        "selection": {"exam": exam.name if exam is not None else None, "rule": SELECTION_RULE},
        "n_resamples": n_resamples, "seed": seed, "resampling": paired.RESAMPLING,
        "difference": "B - A (negative for an error measure: B is closer to gold)",
        "pairs": pairs,
    }
