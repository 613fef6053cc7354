"""The per-sub-question ledger: the judge's points per sub-question against the experts'."""
from collections import defaultdict

import numpy as np

from annotation.models import Label, SubQuestion
from annotation.rubric import sub_question_label

from ...models import JudgeResult
from .. import metrics
from .scopes import current_results, labels_of

# --- per-sub-question ledger -----------------------------------------------------------------

def _expert_sub_scores(results):
    """{response id: {label: mean of the submitted labels' points}} for the responses of
    `results` (one query; labels keyed '3-17.(1)' and '(1)' count as the same sub-question)."""
    sums = defaultdict(lambda: defaultdict(list))
    rows = Label.objects.filter(submitted=True, response_id__in=results.values("response_id")).values_list(
        "response_id", "sub_scores"
    )
    for response_id, sub_scores in rows:
        for key, value in (sub_scores or {}).items():
            if isinstance(value, bool):
                continue
            try:
                number = float(value)
            except (TypeError, ValueError):
                continue
            if np.isfinite(number):
                sums[response_id][sub_question_label(str(key))].append(number)
    return {rid: {label: float(np.mean(v)) for label, v in by_label.items()} for rid, by_label in sums.items()}


def sub_question_ledger(scope):
    """Per question and sub-question: how the judge's points compare with the experts' (the mean
    of the submitted labels' sub-scores), over responses that have both. Rows hold n, MAE,
    FR_1 (share with |judge - experts| >= 1), mean signed error (judge - experts, > 0: the
    judge gives more) and MSE, from grading.review.metrics. Only results with status OK and
    sub-question points count. Four queries, however many results."""
    results = current_results(scope).filter(status=JudgeResult.Status.OK).exclude(sub_scores={})
    judged = list(results.values_list("response_id", "response__question_id", "sub_scores"))
    if not judged:
        return []
    experts = _expert_sub_scores(results)
    question_ids = {question_id for _, question_id, _ in judged}
    subs = {
        (question_id, label): (order, max_points)
        for question_id, label, order, max_points in SubQuestion.objects.filter(question_id__in=question_ids)
        .values_list("question_id", "label", "order", "max_points")
    }
    names, _ = labels_of(question_ids, set())
    pairs = defaultdict(lambda: ([], []))
    for response_id, question_id, sub_scores in judged:
        theirs = experts.get(response_id, {})
        for key, value in (sub_scores or {}).items():
            label = sub_question_label(str(key))
            if label in theirs and isinstance(value, (int, float)) and not isinstance(value, bool):
                pred, gold = pairs[(question_id, label)]
                pred.append(float(value))
                gold.append(theirs[label])
    rows = []
    for (question_id, label), (pred, gold) in pairs.items():
        figures = metrics.score_metrics(pred, gold)
        order, max_points = subs.get((question_id, label), (None, None))
        rows.append({
            "question": question_id, "question_label": names.get(question_id, f"question #{question_id}"),
            "sub_question": label, "order": order, "max_points": None if max_points is None else float(max_points),
            "n": figures.n, "mae": figures.mae, "fr_1": figures.fr[1], "mean_signed_error": figures.mean_signed_error,
            "mse": figures.mse,
        })
    rows.sort(key=lambda r: (r["question_label"], r["question"], r["order"] is None, r["order"] or 0, r["sub_question"]))
    return rows
