"""Metrics reports of a scope: every figure of the metrics page, one query of plain values
(plus one or two for labels), so the number of queries does not grow with the number of results."""
from collections import Counter
from dataclasses import dataclass

import numpy as np
from django.db.models import Count, FloatField
from django.db.models.functions import Cast

from annotation.models import Question, Response

from ...models import JudgeResult
from .. import metrics
from .ledger import sub_question_ledger
from .scopes import BOOTSTRAP_RESAMPLES, LEFT_OUT_REASONS, SCORE_CEILING, choice_labels, current_results, labels_of

# --- metrics -------------------------------------------------------------------------------

_ROW_FIELDS = (
    "status", "score", "gold", "response__source", "response__question_id", "response__question__level",
    "response__question__exam_id",
)


@dataclass
class _Columns:
    """The counted results as parallel numpy arrays (judge, gold and the grouping keys)."""

    pred: np.ndarray
    gold: np.ndarray
    source: np.ndarray
    question: np.ndarray
    level: np.ndarray
    exam: np.ndarray

    def subset(self, mask):
        return _Columns(*(getattr(self, name)[mask] for name in ("pred", "gold", "source", "question", "level", "exam")))


def _columns(rows):
    """(counted columns, Counter of left-out reasons) from grouped rows: the fields, then how many
    results share them (scores are mostly whole points, so there are far fewer rows than results)."""
    if not rows:
        empty = np.array([], dtype=float)
        return _Columns(empty, empty, *(np.array([], dtype=object) for _ in range(4))), Counter()
    *fields, counts = zip(*rows)
    counts = np.array(counts, dtype=int)
    status, score, gold, source, question, level, exam = (
        np.repeat(np.array(column, dtype=object), counts) for column in fields
    )
    score, gold = score.astype(float), gold.astype(float)
    ok = status == JudgeResult.Status.OK
    has_score, has_gold = ~np.isnan(score), ~np.isnan(gold)
    left_out = Counter({key: int(n) for key, n in Counter(status[~ok]).items()})
    for reason in list(left_out):
        if reason not in LEFT_OUT_REASONS:
            left_out["error"] += left_out.pop(reason)
    left_out["no_score"] = int(np.sum(ok & ~has_score))
    left_out["no_gold"] = int(np.sum(ok & has_score & ~has_gold))
    with np.errstate(invalid="ignore"):
        in_range = (score >= 0) & (score < SCORE_CEILING) & (gold >= 0)
    left_out["out_of_range"] = int(np.sum(ok & has_score & has_gold & ~in_range))
    counted = ok & has_score & has_gold & in_range
    columns = _Columns(score[counted], gold[counted], source[counted], question[counted], level[counted], exam[counted])
    return columns, left_out


def _group_metrics(columns, key, labels, *, bootstrap, seed=0):
    """One row per value of `key`. Intervals resample whole questions (core.uncertainty); within
    one question (key "question") the answers are the unit, resampled one by one."""
    keys = getattr(columns, key)
    out = []
    for value in sorted(set(keys.tolist()), key=lambda k: (str(labels.get(k, k)), str(k))):
        mask = keys == value
        clusters = None if key == "question" else columns.question[mask]
        figures = metrics.score_metrics(columns.pred[mask], columns.gold[mask], bootstrap=bootstrap, seed=seed,
                                        clusters=clusters).as_dict()
        out.append({"key": value, "label": labels.get(value, str(value) or "—"), **figures})
    return out


def _scatter(columns):
    """{source: [[gold, judge, count], ...]}: distinct points with their multiplicity."""
    out = {}
    for source in sorted(set(columns.source.tolist())):
        mask = columns.source == source
        gold, pred = np.round(columns.gold[mask] * 100), np.round(columns.pred[mask] * 100)
        offset = pred.min() if pred.size else 0
        span = (pred.max() - offset + 1) if pred.size else 1
        keys, counts = np.unique(gold * span + (pred - offset), return_counts=True)  # one sort, not a row sort
        out[source] = [
            [float(k // span) / 100, float(k % span + offset) / 100, int(n)] for k, n in zip(keys, counts)
        ]
    return out


def metrics_report(scope, *, bootstrap=BOOTSTRAP_RESAMPLES, headline=False, seed=0, correlations=False):
    """Every figure of the metrics page for a scope, as plain data (JSON-ready). Three queries: the
    scope's results grouped by (status, judge, gold, source, question, level, exam) with counts,
    then the question and exam names. `headline`: only what the methods report prints (counts,
    overall, by source, the scatter's pairs), without the per-question, level and exam groups,
    the gap, the curves and the ledger (one query). Intervals: cluster bootstrap over questions
    (per question: over answers), drawn with `seed`; `correlations` adds the overall Pearson and
    Spearman intervals."""
    rows = list(
        current_results(scope).annotate(gold=Cast("response__gold_score", FloatField()))
        .values(*_ROW_FIELDS).annotate(n=Count("pk")).order_by().values_list(*_ROW_FIELDS, "n")
    ) if scope else []
    columns, left_out = _columns(rows)
    overall = metrics.score_metrics(columns.pred, columns.gold, bootstrap=bootstrap, seed=seed, clusters=columns.question,
                                    correlations=correlations).as_dict()
    sources = _group_metrics(columns, "source", choice_labels(Response.Source.choices), bootstrap=bootstrap, seed=seed)
    if headline:
        return {
            "scope": scope.as_dict(), "scope_label": scope.label, "n_results": sum(row[-1] for row in rows),
            "n_counted": int(columns.pred.size), "left_out": _left_out_rows(left_out), "overall": overall,
            "by_source": sources, "plots": {"scatter": _scatter(columns)},
        }
    question_labels, exam_labels = labels_of(set(columns.question.tolist()), set(columns.exam.tolist()))
    by_source = {source: columns.subset(columns.source == source) for source in sorted(set(columns.source.tolist()))}
    empty = _Columns(*(np.array([]) for _ in range(6)))
    human = by_source.get(Response.Source.HUMAN, empty)
    synthetic = by_source.get(Response.Source.SYNTHETIC, empty)
    gap = metrics.evaluation_gap(human.pred, human.gold, synthetic.pred, synthetic.gold, human_clusters=human.question,
                                 synthetic_clusters=synthetic.question, n_resamples=bootstrap, seed=seed)
    report = {
        "scope": scope.as_dict(),
        "scope_label": scope.label,
        "n_results": sum(row[-1] for row in rows),
        "n_counted": int(columns.pred.size),
        "left_out": _left_out_rows(left_out),
        "overall": overall,
        "by_source": sources,
        "by_question": _group_metrics(columns, "question", question_labels, bootstrap=bootstrap, seed=seed),
        "by_level": _group_metrics(columns, "level", choice_labels(Question.Level.choices), bootstrap=bootstrap, seed=seed),
        "by_exam": _group_metrics(columns, "exam", exam_labels, bootstrap=bootstrap, seed=seed),
        "gap": gap.as_dict(),
        "plots": {
            "scatter": _scatter(columns),
            "fr_curve": {
                "distances": list(metrics.FR_DISTANCES),
                **{source: metrics.fr_curve(part.pred, part.gold) for source, part in by_source.items()},
            },
            "delta_histogram": {source: metrics.delta_histogram(part.pred, part.gold) for source, part in by_source.items()},
        },
    }
    # Added last, so every key before it reads as it did before the ledger existed.
    report["sub_question_ledger"] = sub_question_ledger(scope) if scope else []
    return report


def _left_out_rows(left_out):
    return [{"reason": reason, "label": str(LEFT_OUT_REASONS[reason]), "n": left_out[reason]}
            for reason in LEFT_OUT_REASONS if left_out[reason]]


METRIC_COLUMNS = (
    "n", "mse", "mae", "mean_signed_error", "fr_1", "fr_2", "fr_3", "fr_4", "fr_5", "pearson", "spearman",
    "over", "under",
)
CI_COLUMNS = ("mse", "mae", "mean_signed_error", "fr_1", "fr_2", "fr_3", "fr_4", "fr_5")


def metrics_table(report):
    """The metrics as flat rows (header first), for CSV: one row per group."""
    header = ["setting", "version", "run", "group", "key", "label", *METRIC_COLUMNS]
    for name in CI_COLUMNS:
        header += [f"{name}_ci_low", f"{name}_ci_high"]
    header += ["ci_unit", "ci_clusters", "ci_resamples", "ci_seed", "ci_note", "ci_wilson"]
    scope = report["scope"]
    rows = [header]
    groups = [("all", [{"key": "", "label": "All", **report["overall"]}])]
    groups += [(name, report[f"by_{name}"]) for name in ("source", "level", "exam", "question")]
    for group, entries in groups:
        for entry in entries:
            row = [scope["setting"], scope["version"], scope["run"], group, entry["key"], entry["label"]]
            row += [entry.get(column) for column in METRIC_COLUMNS]
            for name in CI_COLUMNS:
                row += list(entry.get(f"{name}_ci") or (None, None))
            info = entry.get("uncertainty") or {}
            row += [info.get("unit"), info.get("clusters"), info.get("resamples"), info.get("seed"),
                    info.get("note"), " ".join(info.get("wilson") or [])]
            rows.append(row)
    return rows
