"""The figures of the methods report, gathered once as plain data: the JSON appendix.

`report_data` reads everything the report prints; grading.report.document only formats it, so
every figure in the text is a value of this appendix. Metrics come from grading.review
(selectors.metrics_report, metrics.*), agreement from annotation.labelling (agreement_ratings,
agreement_report), category counts from grading.review.selectors.category_summary; nothing here
computes a metric of its own beyond resampling them for intervals.

Later apps add their parts through one seam, the `report_section` module each names on its
AppConfig (document.app_report_modules): the judge studies (studies/report_section.py: probe rates
in each setting's entry, the style ablation, the OCR attribution, error geometry and step
surprisal, and the runs a reader may choose) and the Validity view. grading imports neither.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from itertools import combinations

import numpy as np
from django.db import connection
from django.db.models import BooleanField, Case, Count, Q, Value, When
from django.utils.translation import gettext

from annotation.labelling import experiment as anchoring
from annotation.labelling.agreement import agreement_report
from annotation.labelling.selectors import agreement_ratings
from annotation.models import Exam, Label, Question, Response
from core import uncertainty

from ..judges.selectors import setting_summary
from ..models import JudgeSetting, PromptSetEntry
from ..review import metrics
from ..review import selectors as review
from ..review.meta_eval import CATEGORIES
from .document import app_report_modules

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
    """(a, b, response) of every pair of labels of one response."""
    units = defaultdict(dict)
    for response, _question, rater, score in ratings:
        units[response][rater] = float(score)
    return [(u[r], u[s], response) for response, u in units.items() for r, s in combinations(sorted(u), 2)]


_PAIR_STATISTICS = {  # per pair (a mean over pairs is the measure)
    "exact": lambda a, b: (np.abs(a - b) < 1e-9).astype(float).ravel(),
    "within_one": lambda a, b: (np.abs(a - b) <= 1 + 1e-9).astype(float).ravel(),
    "mad": lambda a, b: np.abs(a - b).astype(float).ravel(),
}


def agreement_figures(*, bootstrap: int, seed: int) -> dict:
    """Expert-expert agreement (imported gold counts as a rater), with intervals of the pair
    measures clustered by answer (core.uncertainty: an answer with three labels gives three
    dependent pairs, so whole answers are resampled; Wilson for a share of 0 or 1)."""
    ratings, full_scores, names = agreement_ratings({})
    overall = agreement_report(ratings, full_scores, names)["overall"]
    pairs = _label_pairs(ratings)
    a = np.array([p[0] for p in pairs], dtype=float)
    b = np.array([p[1] for p in pairs], dtype=float)
    columns = {name: _PAIR_STATISTICS[name](a[:, None], b[:, None]) for name in AGREEMENT_MEASURES} if pairs else {}
    intervals = uncertainty.cluster_bootstrap(
        columns, [p[2] for p in pairs], n_resamples=bootstrap, seed=seed, unit="answer",
        proportions={"exact", "within_one"}) if pairs else {}
    for name in AGREEMENT_MEASURES:
        overall[f"{name}_ci"] = intervals[name].bounds() if name in intervals else [None, None]
    overall["ci_unit"] = "answer"
    return overall


def _pairs_of(report):
    """(distinct (judge, gold) pairs, their counts) from a metrics report's scatter points."""
    points = [(p, g, n) for source_points in report["plots"]["scatter"].values() for g, p, n in source_points]
    pairs = np.array([[p, g] for p, g, _ in points], dtype=float).reshape(-1, 2)
    return pairs, np.array([n for _, _, n in points], dtype=int)


ANSWER_KINDS = ("cas_final_answer", "ineq_final_answer")  # judges of the final answer against the gold answer


def judge_figures(setting: JudgeSetting, *, bootstrap: int, seed: int, holdouts: dict | None = None) -> dict:
    """One setting version's figures: against gold points, or for an answer-checking kind
    (ANSWER_KINDS) its accuracy against the gold answer (`answer_check`, `overall` None)."""
    summary = setting_summary(setting)
    if setting.prompt_set_id and holdouts is not None:
        summary["prompt_set_holdout"] = holdouts.get(setting.prompt_set_id, 0)
    if setting.kind in ANSWER_KINDS:
        return {**summary, "prompt_hash_short": summary["prompt_hash"][:16], "overall": None, "by_source": [],
                "answer_check": answer_check_figures(setting, bootstrap=bootstrap, seed=seed),
                **_judge_parts(setting, seed)}
    # Intervals over whole questions (core.uncertainty), drawn with the report's seed.
    report = review.metrics_report(review.Scope(setting=setting), bootstrap=bootstrap, headline=True, seed=seed,
                                   correlations=True)
    overall = dict(report["overall"])
    for method in ("pearson", "spearman"):
        overall.setdefault(f"{method}_ci", [None, None])  # no resamples: no interval
    keep = ("n", "mse", "mse_ci", "mae", "fr_1", "fr_2", "fr_2_ci", "pearson", "spearman", "uncertainty")
    return {
        **summary,
        "prompt_hash_short": summary["prompt_hash"][:16],
        "n_results": report["n_results"],
        "n_counted": report["n_counted"],
        "left_out": report["left_out"],
        "overall": overall,
        "by_source": [{"source": row["key"], **{k: row.get(k) for k in keep}} for row in report["by_source"]],
        **_judge_parts(setting, seed),
    }


def answer_check_figures(setting: JudgeSetting, *, bootstrap: int = review.BOOTSTRAP_RESAMPLES, seed: int = 0) -> dict:
    """An answer-checking setting scored against the gold answer: of its current results on
    answers whose question has a gold answer, the share it found right (accuracy), overall and by
    source; n counts decided verdicts (status ok); undecided or failed ones and answers without a
    gold answer are counted apart (one query). Answers to one question share its gold answer, so
    the 95% interval resamples whole questions (core.uncertainty.cluster_bootstrap, `bootstrap`
    resamples, the report's `seed`): a Wilson interval at an accuracy of 0 or 1, none from fewer
    than five questions (`ci_note`: "not estimable: 1 question")."""
    rows = (review.current_results(review.Scope(setting=setting))
            .annotate(has_gold=Case(When(response__question__gold_answer="", then=Value(False)), default=Value(True),
                                    output_field=BooleanField()))
            .values("status", "score", "has_gold", "response__source", "response__question_id")
            .annotate(n=Count("pk")).order_by()
            .values_list("status", "score", "has_gold", "response__source", "response__question_id", "n"))
    groups = defaultdict(lambda: ([], []))  # key -> (question of each decided answer, 1.0 if found right)
    undecided = no_gold = 0
    for status, score, has_gold, source, question, n in rows:
        if not has_gold:
            no_gold += n
        elif status != "ok" or score is None:
            undecided += n
        else:
            for key in ("all", source):
                groups[key][0].extend([question] * n)
                groups[key][1].extend([float(score >= 0.5)] * n)

    def entry(questions, hits):
        n, right = len(hits), int(round(sum(hits)))
        if not n:
            return {"n": 0, "correct": 0, "accuracy": None, "ci": [None, None], "ci_note": "", "ci_method": None,
                    "questions": 0}
        interval = uncertainty.cluster_bootstrap({"correct": hits}, questions, proportions={"correct"},
                                                 n_resamples=bootstrap, seed=seed)["correct"]
        return {"n": n, "correct": right, "accuracy": right / n,
                "ci": interval.bounds() if interval.estimable else [None, None], "ci_note": interval.note(),
                "ci_method": interval.method, "questions": len(set(questions))}
    return {
        "measure": "accuracy: share of answers whose final answer the setting found equal to the gold answer",
        "interval": (f"95% cluster bootstrap of whole questions ({bootstrap} resamples, seed {seed}); Wilson score "
                     f"interval at an accuracy of 0 or 1; none from fewer than {uncertainty.MIN_CLUSTERS} questions"),
        "seed": seed, "resamples": bootstrap,
        **entry(*groups.get("all", ([], []))),
        "by_source": [{"source": source, **entry(*groups[source])} for source in Response.Source.values if source in groups],
        "n_undecided": undecided, "n_without_gold_answer": no_gold,
    }


SCORE_KINDS = ("rubric", "replay", "external")  # judges whose results are points, comparable pairwise
MAX_COMPARED = 8


def comparison_figures(judge_settings, *, bootstrap: int, seed: int) -> dict:
    """Issue 27: paired differences between the score judges of the report (at most MAX_COMPARED,
    in the report's order) on the answers each pair scored, hold-outs excluded and counted
    (grading.review.selectors.comparison); compact: the overall measures, the tests, the counts. Each
    setting is compared with one baseline, the first reason-then-score rubric setting (else the
    first): n - 1 pairs, not every pair (the Compare settings page gives the whole matrix)."""
    compared = [c for c in judge_settings if c.kind in SCORE_KINDS][:MAX_COMPARED]
    if len(compared) < 2:
        return {"settings": [str(c) for c in compared], "baseline": None, "pairs": []}
    baseline = next((c for c in compared if c.kind == "rubric" and (c.strategy or "reason-then-score") == "reason-then-score"),
                    compared[0])
    ordered = [baseline, *(c for c in compared if c.pk != baseline.pk)]
    full = review.compare_settings(ordered, n_resamples=bootstrap, seed=seed, overall_only=True, against_first=True)
    keep = ("mse", "mae", "fr_2", "bias", "abs_bias", "pearson")
    return {
        "settings": [str(c) for c in ordered], "baseline": str(baseline),
        "resampling": full["resampling"], "rule": full["selection"]["rule"], "difference": full["difference"],
        "pairs": [{
            "a": pair["a_label"], "b": pair["b_label"], "n_common": pair["n_common"],
            "n_holdout_excluded": pair["n_holdout_excluded"], "n_questions": pair["overall"]["n_questions"],
            "measures": {k: pair["overall"]["measures"][k] for k in keep},
            "interval_note": pair["overall"].get("interval_note", ""),
            "permutation_p": pair["overall"]["permutation"]["p_value"],
            "permutation_resolution": pair["overall"]["permutation"].get("resolution"),
            "permutation_p_text": uncertainty.format_p(pair["overall"]["permutation"]["p_value"],
                                                       pair["overall"]["permutation"].get("resolution")),
            "sign_test_p": pair["overall"]["sign_test"]["p_value"],
            "sign_test_p_text": uncertainty.format_p(pair["overall"]["sign_test"]["p_value"]),
        } for pair in full["pairs"]],
    }


def category_figures(judge_settings) -> dict:
    summary = review.category_summary()
    wanted = {str(c) for c in judge_settings}
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
                seed: int = 0, choices: dict | None = None) -> dict:
    """Everything the methods report prints (one setting version, or every version with results).
    `choices`: {name: the run a reader chose} for the later apps' parts (`report_choices`; default:
    the newest of each)."""
    judge_settings = list(JudgeSetting.objects.select_related("endpoint", "prompt_set")
                   .filter(pk__in=[c.pk for c in _scopes(setting)]).order_by("name", "-version"))
    holdouts = dict(PromptSetEntry.objects.filter(holdout=True, prompt_set_id__in={c.prompt_set_id for c in judge_settings})
                    .values("prompt_set_id").annotate(n=Count("id")).order_by().values_list("prompt_set_id", "n")) \
        if any(c.prompt_set_id for c in judge_settings) else {}
    return {
        "setting": setting.name if setting else None,
        "confidence_percent": CONFIDENCE_PERCENT,
        "bootstrap_resamples": bootstrap,
        "seed": seed,
        "fr_distances": list(metrics.FR_DISTANCES),
        "n_settings": len(judge_settings),
        "definitions": DEFINITIONS,
        "dataset": dataset_figures(),
        "agreement": agreement_figures(bootstrap=bootstrap, seed=seed),
        "judges": [judge_figures(each, bootstrap=bootstrap, seed=seed, holdouts=holdouts) for each in judge_settings],
        "categories": category_figures(judge_settings),
        "comparison": comparison_figures(judge_settings, bootstrap=bootstrap, seed=seed),
        "anchoring": anchoring_experiments(bootstrap=bootstrap, seed=seed),
        "rubric_rejudge": rubric_rejudge_figures(setting),
        **_app_parts(judge_settings, setting, bootstrap=bootstrap, seed=seed, choices=choices or {}),
    }


def anchoring_experiments(*, bootstrap: int, seed: int) -> dict:
    """The anchoring experiment (annotation/labelling/experiment.py), once per exam and (setting,
    seed) it ran with: the shown and hidden halves' figures and their differences (one query)."""
    labels = (Label.objects.filter(submitted=True, is_imported=False, total__isnull=False, anchoring__has_key="shown")
              .order_by("response__question__exam__name", "response_id", "annotator_id")
              .values_list("response__question__exam_id", "response__question__exam__name", "response_id",
                           "annotator_id", "total", "anchoring"))
    groups = defaultdict(list)
    for exam_id, exam_name, response_id, annotator_id, total, record in labels:
        key = (exam_name, exam_id, str(record.get("setting") or ""), record.get("seed"))
        groups[key].append({"response": response_id, "rater": annotator_id, "expert": float(total),
                            "judge": record.get("score"), "shown": bool(record.get("shown"))})
    out, test = [], None
    for (exam_name, _exam_id, setting_name, experiment_seed), rows in sorted(groups.items(), key=lambda kv: (*kv[0][:3], str(kv[0][3]))):
        figures = anchoring.anchoring_figures(rows, n_resamples=bootstrap, seed=seed)
        test = figures["test"]
        for measure_test in figures["tests"].values():  # printed at the test's resolution, never 0
            measure_test["p_text"] = uncertainty.format_p(
                measure_test.get("p_value"), 1 / (1 + figures["permutations"]) if figures["permutations"] else None)
        out.append({"exam": exam_name, "setting": setting_name, "experiment_seed": experiment_seed,
                    "n_labels": figures["n_labels"], "mixed_pairs": figures["mixed_pairs"], "arms": figures["arms"],
                    "tests": figures["tests"], "permutations": figures["permutations"]})
    return {"measures": dict(anchoring.MEASURES), "test": test, "experiments": out}


def rubric_rejudge_figures(setting=None) -> dict:
    """Rubric re-judging (grading/review/selectors/rubric.py): for every question whose rubric
    was edited, each setting's MSE and FR_2 against older rubric versions (before) and the current
    one (after), with the answers not yet judged again (three queries whatever the number of
    questions)."""
    questions = list(Question.objects.filter(rubric_version__gt=1).order_by("exam__name", "location", "id")
                     .only("id", "location", "external_id", "rubric_version"))
    rows = []
    for comparison in review.rubric_comparisons(questions):
        question = comparison["question"]
        for entry in comparison["settings"]:
            judged = entry["setting"]
            if judged.kind != "rubric" or (setting is not None and judged.pk != setting.pk):
                continue  # only rubric scorers read the rubric and score against gold points
            if entry["before"] is None:
                continue  # judged against the current rubric only: nothing to compare
            sides = {name: ({k: entry[name][k] for k in ("n", "mse", "fr_2", "mae")} if entry[name] else None)
                     for name in ("before", "after")}
            rows.append({"question": review.question_label(question.pk, question.location, question.external_id),
                         "rubric_version": question.rubric_version, "setting": str(judged), **sides,
                         "not_rejudged": entry["stale"]})
    return {"questions_edited": len(questions), "rows": rows}


# --- later apps' parts (document.app_report_modules) ----------------------------------------

def _judge_parts(setting, seed) -> dict:
    """A setting's figures from later apps (a report module's `judge_parts`: the probe rates)."""
    parts = {}
    for module in app_report_modules():
        if hasattr(module, "judge_parts"):
            parts.update(module.judge_parts(setting, seed=seed))
    return parts


def _app_parts(judge_settings, setting, *, bootstrap, seed, choices) -> dict:
    """Later apps' keys of the appendix: a module's `report_parts` (several keys: the studies) or
    its `report_figures` under its `APPENDIX_KEY` (the Validity view)."""
    parts = {}
    for module in app_report_modules():
        if hasattr(module, "report_parts"):
            parts.update(module.report_parts(judge_settings, setting=setting, bootstrap=bootstrap, seed=seed,
                                             choices={name: choices.get(name) for name in getattr(module, "CHOICES", {})}))
        else:
            parts[module.APPENDIX_KEY] = module.report_figures(judge_settings, seed=seed)
    return parts


def report_choices() -> dict:
    """{name: the report module offering it}: the runs a reader may choose instead of the newest
    (a module's `CHOICES`, with `choice_options(name)` and `chosen(name, pk)`; the page's query
    parameter `name`, the command's `--<name>-run`)."""
    return {name: module for module in app_report_modules() for name in getattr(module, "CHOICES", {})}
