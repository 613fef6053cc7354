"""Rubric re-judging: a question's figures before and after its rubric was edited."""
from collections import Counter, defaultdict

from ...judges.selectors import NOT_REJUDGED_KINDS, is_older_rubric
from ...models import JudgeResult, JudgeSetting
from .. import metrics
from ..meta_eval import CATEGORIES
from .scopes import DEFAULT_THRESHOLD, EPS

# --- rubric re-judging: before and after ------------------------------------------------------

def _side_figures(rows):
    """MSE, FR_2 and category counts of one side (before or after) of a rubric comparison."""
    scored = [(score, float(gold)) for _, _, status, score, gold, _ in rows
              if status == JudgeResult.Status.OK and score is not None and gold is not None]
    figures = metrics.score_metrics([p for p, _ in scored], [g for _, g in scored])
    counts = Counter(category for *_, category in rows if category)
    unclassified = sum(
        1 for _, _, status, score, gold, category in rows
        if not category and status == JudgeResult.Status.OK and score is not None and gold is not None
        and abs(score - float(gold)) >= DEFAULT_THRESHOLD - EPS
    )
    return {
        "n_results": len(rows), "n": figures.n, "mse": figures.mse, "fr_2": figures.fr[2], "mae": figures.mae,
        "mean_signed_error": figures.mean_signed_error,
        "categories": [counts[c] for c in CATEGORIES], "unclassified": unclassified,
        "rubric_versions": sorted({version or 1 for _, version, *_ in rows}),
    }


def rubric_comparison(question):
    """Per judge setting version that judged `question`: MSE, FR_2 and the meta-evaluation
    category counts of its results against older rubric versions ("before": the newest such
    result per response) and against the current version ("after"), side by side (two queries).

    Gold is the response's gold score now, on both sides. Imported and replay settings, which are
    never re-judged, are left out. Old results are never deleted; the
    metrics page keeps counting the newest result per (setting version, response)."""
    return rubric_comparisons([question])[0]


def rubric_comparisons(questions):
    """`rubric_comparison` of each question of `questions`, in their order, in two queries
    whatever their number (the methods report reads every edited question at once)."""
    questions = list(questions)
    current = {q.pk: q.rubric_version for q in questions}
    before, after = defaultdict(lambda: defaultdict(dict)), defaultdict(lambda: defaultdict(dict))
    for question_id, setting_id, response_id, version, status, score, gold, category in (
        JudgeResult.objects.filter(response__question__in=list(current)).exclude(setting__kind__in=NOT_REJUDGED_KINDS)
        .exclude(status=JudgeResult.Status.RUNNING).order_by("pk")
        .values_list("response__question_id", "setting_id", "response_id", "rubric_version", "status", "score",
                     "response__gold_score", "meta_evaluation__category")
    ):
        side = before if is_older_rubric(version, current[question_id]) else after
        side[question_id][setting_id][response_id] = (response_id, version, status, score, gold, category)
    used = {pk for side in (before, after) for per_setting in side.values() for pk in per_setting}
    judge_settings = sorted(JudgeSetting.objects.filter(pk__in=used).only("id", "name", "version", "kind", "model"),
                     key=lambda c: (c.name, c.version)) if used else []
    out = []
    for question in questions:
        old, new = before[question.pk], after[question.pk]
        out.append({
            "question": question,
            "rubric_version": question.rubric_version,
            "categories": list(CATEGORIES),
            "settings": [
                {"setting": setting, "before": _side_figures(list(old[setting.pk].values())) if old[setting.pk] else None,
                 "after": _side_figures(list(new[setting.pk].values())) if new[setting.pk] else None,
                 "stale": sum(1 for rid in old[setting.pk] if rid not in new[setting.pk])}
                for setting in judge_settings if setting.pk in old or setting.pk in new
            ],
        })
    return out
