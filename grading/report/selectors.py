"""The figures of the methods report, gathered once as plain data: the JSON appendix.

`report_data` reads everything the report prints; grading.report.document only formats it, so
every figure in the text is a value of this appendix. Metrics come from grading.review
(selectors.metrics_report, metrics.*), agreement from annotation.labelling (agreement_ratings,
agreement_report), category counts from grading.review.selectors.category_summary; nothing here
computes a metric of its own beyond resampling them for intervals.

Probe rates come from the perturbation-probe study through one seam, `probe_rates_for`; the
error-geometry and step-surprisal figures through another, `geometry_figures`.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from itertools import combinations

import numpy as np
from django.db import connection
from django.db.models import Count, Q
from django.utils.translation import gettext

from annotation.labelling.agreement import agreement_report
from annotation.labelling.selectors import agreement_ratings
from annotation.models import Exam, Label, Question, Response

from ..judges.selectors import setting_summary
from ..models import JudgeSetting
from ..review import metrics
from ..review import selectors as review
from ..review.meta_eval import CATEGORIES
from ..studies import selectors as studies
from ..studies.geometry import selectors as geometry

CONFIDENCE_PERCENT = 95
AGREEMENT_MEASURES = ("exact", "within_one", "mad")
DEFINITIONS = {
    "exact": "share of expert label pairs on the same answer with equal totals",
    "within_one": "share of expert label pairs within one point",
    "mad": "mean absolute difference of paired expert totals",
    "kappa": "quadratic-weighted Cohen's kappa, mean over rater pairs",
    "alpha": "Krippendorff's alpha, interval level",
    "icc": "ICC(1,1), one-way random effects, single rater",
    "mse": "mean squared error of judge score against gold score",
    "fr_d": "FR_d: share of answers with |judge − gold| >= d points",
    "prompt_hash": "sha256 of the effective system prompt, a NUL byte and the effective template",
}


def probe_rates_for(config: JudgeSetting) -> dict:
    """The perturbation-probe study's rates of one setting version: {probe name: {"n", "detected",
    "rate", "ci": [lo, hi]}}, only the probes measured on at least one answer ({} when none ran)."""
    return {name: rates for name, rates in studies.probe_rates(config).items() if rates["n"]}


def _scopes(setting):
    if setting is not None:
        return [setting]
    return review.settings_with_results()


def dataset_figures() -> dict:
    """Questions, answers by source, experts and labels per answer (five queries)."""
    per_exam = list(
        Exam.objects.annotate(
            n_questions=Count("questions", distinct=True),
            n_human=Count("questions__responses", filter=Q(questions__responses__source=Response.Source.HUMAN), distinct=True),
            n_synthetic=Count("questions__responses", filter=Q(questions__responses__source=Response.Source.SYNTHETIC),
                              distinct=True),
        ).order_by("name").values("name", "n_questions", "n_human", "n_synthetic")
    )
    by_source = dict(Response.objects.values_list("source").annotate(n=Count("id")).order_by())
    submitted = Label.objects.filter(submitted=True)
    experts = submitted.filter(is_imported=False, annotator__isnull=False).values("annotator").distinct().count()
    per_answer = labels_per_answer()
    n_answers = sum(per_answer.values())
    n_labels = sum(n * c for n, c in per_answer.items())
    return {
        "questions": Question.objects.count(),
        "n_exams": len(per_exam),
        "exams": per_exam,
        "answers": {
            "total": n_answers,
            "by_source": [{"source": key, "n": by_source.get(key, 0)} for key in Response.Source.values],
        },
        "experts": experts,
        "labels": {  # imported gold labels are counted apart from the experts' own
            "total": n_labels,
            "by_experts": submitted.filter(is_imported=False).count(),
            "imported": submitted.filter(is_imported=True).count(),
            "per_answer_mean": n_labels / n_answers if n_answers else None,
            "per_answer": [{"labels": n, "answers": per_answer[n]} for n in sorted(per_answer)],
        },
    }


def labels_per_answer() -> Counter:
    """{number of submitted labels: number of answers with that many}, counted in the database
    (two grouped queries: 100,000 answers are not fetched one by one)."""
    labelled = (Label.objects.filter(submitted=True).values("response").annotate(n=Count("id"))
                .order_by().values("n"))
    counts = Counter({row["n"]: row["answers"] for row in _grouped_by_n(labelled)})
    unlabelled = Response.objects.count() - sum(counts.values())
    if unlabelled:
        counts[0] = unlabelled
    return counts


def _grouped_by_n(per_response):
    """Rows {n, answers}: how many responses have each label count (a GROUP BY over the grouped
    per-response counts, in SQL)."""
    sql, params = per_response.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT n, COUNT(*) FROM ({sql}) AS per_response GROUP BY n", params)
        return [{"n": n, "answers": answers} for n, answers in cursor.fetchall()]


def _label_pairs(ratings):
    units = defaultdict(dict)
    for response, _question, rater, score in ratings:
        units[response][rater] = float(score)
    return [(u[r], u[s]) for u in units.values() for r, s in combinations(sorted(u), 2)]


_PAIR_STATISTICS = {
    "exact": lambda a, b: float(np.mean(np.abs(a - b) < 1e-9)),
    "within_one": lambda a, b: float(np.mean(np.abs(a - b) <= 1 + 1e-9)),
    "mad": lambda a, b: float(np.mean(np.abs(a - b))),
}


def agreement_figures(*, bootstrap: int, seed: int) -> dict:
    """Expert-expert agreement (imported gold counts as a rater), with bootstrap intervals of the
    pair measures (label pairs resampled)."""
    ratings, full_scores, names = agreement_ratings({})
    overall = agreement_report(ratings, full_scores, names)["overall"]
    pairs = _label_pairs(ratings)
    a = np.array([p[0] for p in pairs], dtype=float)
    b = np.array([p[1] for p in pairs], dtype=float)
    for name in AGREEMENT_MEASURES:
        overall[f"{name}_ci"] = list(
            metrics.bootstrap_interval(a, b, _PAIR_STATISTICS[name], n_resamples=bootstrap, seed=seed)
        ) if bootstrap else [None, None]
    return overall


def _pairs_of(report):
    """(distinct (judge, gold) pairs, their counts) from a metrics report's scatter points."""
    points = [(p, g, n) for source_points in report["plots"]["scatter"].values() for g, p, n in source_points]
    pairs = np.array([[p, g] for p, g, _ in points], dtype=float).reshape(-1, 2)
    return pairs, np.array([n for _, _, n in points], dtype=int)


def judge_figures(config: JudgeSetting, *, bootstrap: int, seed: int) -> dict:
    report = review.metrics_report(review.Scope(config=config), bootstrap=bootstrap)
    overall = dict(report["overall"])
    pairs, counts = _pairs_of(report)
    for method in ("pearson", "spearman"):
        overall[f"{method}_ci"] = list(metrics.correlation_interval_from_counts(
            pairs, counts, method, n_resamples=bootstrap, seed=seed))
    keep = ("n", "mse", "mse_ci", "mae", "fr_1", "fr_2", "fr_2_ci", "pearson", "spearman")
    summary = setting_summary(config)
    return {
        **summary,
        "prompt_hash_short": summary["prompt_hash"][:16],
        "n_results": report["n_results"],
        "n_counted": report["n_counted"],
        "left_out": report["left_out"],
        "overall": overall,
        "by_source": [{"source": row["key"], **{k: row.get(k) for k in keep}} for row in report["by_source"]],
        "probes": probe_rates_for(config),
    }


SCORE_KINDS = ("rubric", "replay", "external")  # judges whose results are points, comparable pairwise
MAX_COMPARED = 6


def comparison_figures(configs, *, bootstrap: int, seed: int) -> dict:
    """Issue 27: paired differences between the score judges of the report (at most MAX_COMPARED,
    in the report's order) on the answers each pair scored, hold-outs excluded and counted
    (grading.review.comparison); compact: the overall measures, the tests, the counts."""
    from ..review import comparison  # noqa: PLC0415

    compared = [c for c in configs if c.kind in SCORE_KINDS][:MAX_COMPARED]
    if len(compared) < 2:
        return {"settings": [str(c) for c in compared], "pairs": []}
    full = comparison.compare_settings(compared, n_resamples=bootstrap, seed=seed)
    keep = ("mse", "mae", "fr_2", "bias", "pearson")
    return {
        "settings": [str(c) for c in compared],
        "resampling": full["resampling"], "rule": full["selection"]["rule"], "difference": full["difference"],
        "pairs": [{
            "a": pair["a_label"], "b": pair["b_label"], "n_common": pair["n_common"],
            "n_holdout_excluded": pair["n_holdout_excluded"], "n_questions": pair["overall"]["n_questions"],
            "measures": {k: pair["overall"]["measures"][k] for k in keep},
            "sign_test_p": pair["overall"]["sign_test"]["p_value"],
            "permutation_p": pair["overall"]["permutation"]["p_value"],
        } for pair in full["pairs"]],
    }


def category_figures(configs) -> dict:
    summary = review.category_summary()
    wanted = {str(c) for c in configs}
    return {
        "codes": [{"code": code, "name": gettext(name)} for code, (name, _) in CATEGORIES.items()],
        "total": summary["total"],
        "counts": summary["counts"],
        "by_judge": [
            {"judge": row["label"], "counts": row["counts"], "total": row["total"]}
            for row in summary["by_judge"] if row["label"] in wanted
        ],
    }


def report_data(setting: JudgeSetting | None = None, *, bootstrap: int = review.BOOTSTRAP_RESAMPLES,
                seed: int = 0) -> dict:
    """Everything the methods report prints (one setting version, or every version with results)."""
    configs = list(JudgeSetting.objects.select_related("endpoint").filter(pk__in=[c.pk for c in _scopes(setting)])
                   .order_by("name", "-version"))
    return {
        "setting": setting.name if setting else None,
        "confidence_percent": CONFIDENCE_PERCENT,
        "bootstrap_resamples": bootstrap,
        "seed": seed,
        "fr_distances": list(metrics.FR_DISTANCES),
        "n_settings": len(configs),
        "definitions": DEFINITIONS,
        "dataset": dataset_figures(),
        "agreement": agreement_figures(bootstrap=bootstrap, seed=seed),
        "judges": [judge_figures(config, bootstrap=bootstrap, seed=seed) for config in configs],
        "categories": category_figures(configs),
        "comparison": comparison_figures(configs, bootstrap=bootstrap, seed=seed),
        "geometry": geometry_figures(),
    }


GEOMETRY_KEYS = ("n", "questions", "dispersion", "dispersion_ci", "total_variance", "total_variance_ci", "top10_share",
                 "top10_share_ci", "clusters", "noise_share", "silhouette")
SURPRISAL_KEYS = ("segments", "transitions", "ll_lower_bound", "top_k")


def geometry_figures() -> dict:
    """The newest analysed error-geometry and step-surprisal runs, their headline figures only
    (no heatmaps or curves): {"geometry": {...} | None, "surprisal": {...} | None}."""
    out = {}
    for kind, keys in (("geometry", GEOMETRY_KEYS), ("surprisal", SURPRISAL_KEYS)):
        results = geometry.latest_results(kind)
        if not results:
            out[kind] = None
            continue
        groups = {}
        for name, group in (results.get("groups") or {}).items():
            entry = {key: group.get(key) for key in keys}
            if kind == "geometry":
                entry["gmm_best_k"] = (group.get("gmm") or {}).get("best_k")
            else:
                for measure in ("surprisal", "ll"):
                    entry[measure] = {k: group[measure].get(k) for k in ("mean", "mean_ci", "median", "median_ci")}
            groups[name] = entry
        out[kind] = {
            "run": results.get("run"), "label": results.get("label"), "model": results.get("model"),
            "endpoint": (results.get("endpoint") or {}).get("base_url"), "selection": results.get("selection"),
            "seed": (results.get("params") or {}).get("seed"), "groups": groups,
            "human_vs_synthetic": results.get("human_vs_synthetic"),
            "human_vs_probe_derived": results.get("human_vs_probe_derived"),
        }
    return out
