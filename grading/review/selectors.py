"""Read side of the judge-vs-human review: metrics, the disagreement queue, category counts and
step-judge validation figures.

Every figure is computed from plain value lists fetched in one query (plus one or two for
labels), so the number of queries does not grow with the number of results.

A *scope* is what the figures are about: one judge setting version (its current result per
response: the newest, since a newer one means the response's text changed), or one judge run
(the result each of its items points to).
"""
from collections import Counter, defaultdict
from dataclasses import dataclass

import numpy as np
from django.db.models import Count, Exists, F, FloatField, Max, OuterRef, Q, Subquery
from django.db.models.functions import Abs, Cast
from django.utils.translation import gettext, gettext_lazy

from annotation.models import Exam, Label, Question, Response, SubQuestion
from annotation.rubric import sub_question_label
from annotation.selectors import id_param

from ..judges import strategies
from ..judges.selectors import NOT_REJUDGED_KINDS, is_older_rubric
from ..models import JudgeResult, JudgeRun, JudgeRunItem, JudgeSetting, MetaEvalProposal, MetaEvalRun, MetaEvaluation
from ..runs import stalled
from ..studies import selectors as studies_selectors
from . import metrics
from .meta_eval import CATEGORIES, direction

DEFAULT_THRESHOLD = 2.0
BOOTSTRAP_RESAMPLES = 1000
_EPS = 1e-9

LEFT_OUT_REASONS = {
    "running": gettext_lazy("judge still running"),
    "invalid": gettext_lazy("judge output unreadable"),
    "error": gettext_lazy("judge call failed"),
    "no_score": gettext_lazy("no judge score"),
    "no_gold": gettext_lazy("no gold score"),
}


def _choice_labels(choices):
    """{code: label} in the active language, as plain strings (the report is also JSON)."""
    return {code: str(label) for code, label in choices}


class ScopeError(ValueError):
    """The requested setting or run does not exist."""


@dataclass
class Scope:
    config: JudgeSetting | None = None
    run: JudgeRun | None = None

    def __bool__(self):
        return self.config is not None or self.run is not None

    @property
    def label(self):
        if self.run is not None:
            return f"run {self.run.pk} of {self.run.config}"
        return str(self.config) if self.config else "—"

    def as_dict(self):
        return {
            "setting": self.config.name if self.config else None,
            "version": self.config.version if self.config else None,
            "setting_id": self.config.pk if self.config else None,
            "run": self.run.pk if self.run else None,
        }

    def query(self):
        """Querystring parameters that select this scope again."""
        return {"run": self.run.pk} if self.run else {"setting": self.config.pk} if self.config else {}


# --- scopes --------------------------------------------------------------------------------

def settings_with_results():
    """Judge setting versions that have produced results, for the setting picker (one query)."""
    return list(
        JudgeSetting.objects.annotate(n_results=Count("results"))
        .filter(n_results__gt=0)
        .only("id", "name", "version", "kind", "model")
        .order_by("name", "-version")
    )


def recent_runs(limit=100):
    return list(JudgeRun.objects.select_related("config").only(
        "id", "created", "status", "n_items", "config__name", "config__version"
    ).order_by("-created", "-id")[:limit])


def resolve_scope(params, *, default=True, preferred=None):
    """The scope named by `setting` (a setting version id) or `run` (a run id) in `params`.

    Without either (when `default`): the setting version `preferred` (the one the person chose
    last) if it still has results, else the newest one with results to compare with a gold, else
    the most recently used one."""
    run_id, setting = str(params.get("run") or "").strip(), str(params.get("setting") or "").strip()
    if run_id:
        run = JudgeRun.objects.select_related("config").filter(pk=id_param(run_id) or 0).first()
        if run is None:
            raise ScopeError(gettext("No judge run %(run_id)s.") % {"run_id": run_id})
        return Scope(config=run.config, run=run)
    if setting:
        config = JudgeSetting.objects.filter(pk=id_param(setting) or 0).first()
        if config is None:
            raise ScopeError(gettext("No judge setting version with id %(setting)s.") % {"setting": setting})
        return Scope(config=config)
    if not default:
        return Scope()
    return Scope(config=default_setting(preferred))


def default_setting(preferred=None):
    """The setting version a review page opens on when none is named (see resolve_scope)."""
    preferred = id_param(preferred)
    if preferred is not None and JudgeResult.objects.filter(config_id=preferred).exists():
        return JudgeSetting.objects.filter(pk=preferred).first()
    comparable = JudgeResult.objects.filter(
        status=JudgeResult.Status.OK, score__isnull=False, response__gold_score__isnull=False,
    ).order_by("-id").values_list("config_id", flat=True).first()
    latest = comparable or JudgeResult.objects.order_by("-id").values_list("config_id", flat=True).first()
    return JudgeSetting.objects.filter(pk=latest).first() if latest else None


def find_setting(name, version=None):
    """A setting version by name (the newest version unless `version` is given)."""
    configs = JudgeSetting.objects.filter(name=name)
    if version is not None:
        configs = configs.filter(version=version)
    config = configs.order_by("-version").first()
    if config is None:
        raise ScopeError(f"No judge setting named {name!r}" + (f" with version {version}." if version else "."))
    return config


def current_results(scope):
    """The results a scope's figures are about: one per response."""
    if scope.run is not None:
        items = JudgeRunItem.objects.filter(run=scope.run, result__isnull=False).values("result_id")
        return JudgeResult.objects.filter(pk__in=items)
    if scope.config is None:
        return JudgeResult.objects.none()
    newer = JudgeResult.objects.filter(config=OuterRef("config"), response=OuterRef("response"), pk__gt=OuterRef("pk"))
    results = JudgeResult.objects.filter(config=scope.config).exclude(Exists(newer))
    holdout = strategies.holdout_ids(scope.config)  # issue 27: a setting's hold-outs never count for it
    return results.exclude(response_id__in=holdout) if holdout else results


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
    counted = ok & has_score & has_gold
    columns = _Columns(score[counted], gold[counted], source[counted], question[counted], level[counted], exam[counted])
    return columns, left_out


def _group_metrics(columns, key, labels, *, bootstrap):
    keys = getattr(columns, key)
    out = []
    for value in sorted(set(keys.tolist()), key=lambda k: (str(labels.get(k, k)), str(k))):
        mask = keys == value
        figures = metrics.score_metrics(columns.pred[mask], columns.gold[mask], bootstrap=bootstrap).as_dict()
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


def question_label(pk, location="", external_id=""):
    """How a question is named in tables: its label and its typed id, e.g. '3-07 · question #1'."""
    return " · ".join(filter(None, [location or external_id, f"question #{pk}"]))


def _labels(question_ids, exam_ids):
    questions = {
        pk: question_label(pk, location, external_id)
        for pk, location, external_id in Question.objects.filter(pk__in=question_ids).values_list(
            "pk", "location", "external_id"
        )
    } if question_ids else {}
    exams = dict(Exam.objects.filter(pk__in=exam_ids).values_list("pk", "name")) if exam_ids else {}
    return questions, exams


def metrics_report(scope, *, bootstrap=BOOTSTRAP_RESAMPLES):
    """Every figure of the metrics page for a scope, as plain data (JSON-ready). Three queries: the
    scope's results grouped by (status, judge, gold, source, question, level, exam) with counts,
    then the question and exam names."""
    rows = list(
        current_results(scope).annotate(gold=Cast("response__gold_score", FloatField()))
        .values(*_ROW_FIELDS).annotate(n=Count("pk")).order_by().values_list(*_ROW_FIELDS, "n")
    ) if scope else []
    columns, left_out = _columns(rows)
    question_labels, exam_labels = _labels(set(columns.question.tolist()), set(columns.exam.tolist()))
    by_source = {source: columns.subset(columns.source == source) for source in sorted(set(columns.source.tolist()))}
    empty = (np.array([]), np.array([]))
    human = (by_source[Response.Source.HUMAN].pred, by_source[Response.Source.HUMAN].gold) if Response.Source.HUMAN in by_source else empty
    synthetic = (
        (by_source[Response.Source.SYNTHETIC].pred, by_source[Response.Source.SYNTHETIC].gold)
        if Response.Source.SYNTHETIC in by_source else empty
    )
    report = {
        "scope": scope.as_dict(),
        "scope_label": scope.label,
        "n_results": sum(row[-1] for row in rows),
        "n_counted": int(columns.pred.size),
        "left_out": [
            {"reason": reason, "label": str(LEFT_OUT_REASONS[reason]), "n": left_out[reason]}
            for reason in LEFT_OUT_REASONS if left_out[reason]
        ],
        "overall": metrics.score_metrics(columns.pred, columns.gold, bootstrap=bootstrap).as_dict(),
        "by_source": _group_metrics(columns, "source", _choice_labels(Response.Source.choices), bootstrap=bootstrap),
        "by_question": _group_metrics(columns, "question", question_labels, bootstrap=bootstrap),
        "by_level": _group_metrics(columns, "level", _choice_labels(Question.Level.choices), bootstrap=bootstrap),
        "by_exam": _group_metrics(columns, "exam", exam_labels, bootstrap=bootstrap),
        "gap": metrics.evaluation_gap(*human, *synthetic, n_resamples=bootstrap).as_dict(),
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
    names, _ = _labels(question_ids, set())
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
        and abs(score - float(gold)) >= DEFAULT_THRESHOLD - _EPS
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
    current = question.rubric_version
    before, after = defaultdict(dict), defaultdict(dict)
    for config_id, response_id, version, status, score, gold, category in (
        JudgeResult.objects.filter(response__question=question).exclude(config__kind__in=NOT_REJUDGED_KINDS)
        .exclude(status=JudgeResult.Status.RUNNING).order_by("pk")
        .values_list("config_id", "response_id", "rubric_version", "status", "score",
                     "response__gold_score", "meta_evaluation__category")
    ):
        side = before if is_older_rubric(version, current) else after
        side[config_id][response_id] = (response_id, version, status, score, gold, category)
    configs = JudgeSetting.objects.filter(pk__in=set(before) | set(after)).only("id", "name", "version", "kind", "model")
    return {
        "question": question,
        "rubric_version": current,
        "categories": list(CATEGORIES),
        "settings": [
            {"config": config, "before": _side_figures(list(before[config.pk].values())) if before[config.pk] else None,
             "after": _side_figures(list(after[config.pk].values())) if after[config.pk] else None,
             "stale": sum(1 for rid in before[config.pk] if rid not in after[config.pk])}
            for config in sorted(configs, key=lambda c: (c.name, c.version))
        ],
    }


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
            rows.append(row)
    return rows


# --- disagreement queue --------------------------------------------------------------------

QUEUE_STATES = {"todo": gettext_lazy("Not classified"), "proposed": gettext_lazy("LLM proposal waiting"), "confirmed": gettext_lazy("Classified")}


def parse_threshold(value, default=DEFAULT_THRESHOLD):
    """A threshold from user input; None when it is not a non-negative number."""
    if value in (None, ""):
        return default
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if 0 <= number < 1e6 else None


def _with_deltas(queryset):
    return queryset.annotate(
        gold=Cast("response__gold_score", FloatField()),
    ).annotate(delta=F("score") - F("gold")).annotate(abs_delta=Abs(F("score") - F("gold")))


def disagreement_queue(scope, threshold=DEFAULT_THRESHOLD, params=None):
    """Results of the scope with |judge - gold| >= threshold (status ok, with a gold score)."""
    params = params or {}
    queryset = _with_deltas(
        current_results(scope).filter(
            status=JudgeResult.Status.OK, score__isnull=False, response__gold_score__isnull=False
        )
    ).filter(abs_delta__gte=threshold - _EPS)
    if params.get("source") in Response.Source.values:
        queryset = queryset.filter(response__source=params["source"])
    if id_param(params.get("question")) is not None:
        queryset = queryset.filter(response__question_id=id_param(params["question"]))
    if id_param(params.get("exam")) is not None:
        queryset = queryset.filter(response__question__exam_id=id_param(params["exam"]))
    if params.get("level") in ("low", "high"):
        queryset = queryset.filter(response__question__level=params["level"])
    if params.get("direction") == "over":
        queryset = queryset.filter(delta__gt=0)
    elif params.get("direction") == "under":
        queryset = queryset.filter(delta__lt=0)
    category = str(params.get("category", "")).upper()
    if category in CATEGORIES:
        queryset = queryset.filter(meta_evaluation__category=category)
    state = params.get("state")
    classified = Q(meta_evaluation__isnull=False) & ~Q(meta_evaluation__category="")
    proposed = Exists(MetaEvalProposal.objects.filter(
        meta_evaluation__result=OuterRef("pk"), status=MetaEvalProposal.Status.OK
    ))
    if state == "todo":
        queryset = queryset.exclude(classified)
    elif state == "confirmed":
        queryset = queryset.filter(classified)
    elif state == "proposed":
        queryset = queryset.exclude(classified).filter(proposed)
    # OCR-vs-judge attribution (grading.studies): `ocr_tag` and `ocr_raw_score` on every row.
    queryset = studies_selectors.with_attribution(queryset, threshold)
    return studies_selectors.filter_attribution(queryset, str(params.get("attribution", "")))


QUEUE_ORDERS = {"id": ("pk",), "delta": ("-abs_delta", "pk")}


def queue_ordering(order):
    """The ORDER BY of the queue as listed: by result id, or largest |Δ| first (ties by id)."""
    return list(QUEUE_ORDERS.get(order, QUEUE_ORDERS["id"]))


def queue_page_rows(queryset, *, order="id"):
    """The queue with what its table shows, without the big text fields, and each row's newest
    usable LLM proposal (`proposed_category`) for the category column."""
    latest_proposal = MetaEvalProposal.objects.filter(
        meta_evaluation__result=OuterRef("pk"), status=MetaEvalProposal.Status.OK,
    ).order_by("-id").values("category")[:1]
    return (
        queryset.select_related("response", "response__question", "config", "meta_evaluation",
                                "meta_evaluation__confirmed_by")
        .annotate(proposed_category=Subquery(latest_proposal))
        .defer(
            "raw_output", "rationale", "samples", "errors", "step_verdicts", "provenance",
            "response__transcript", "response__judge_query", "response__generator_prompt", "response__extra",
            "response__question__statement", "response__question__reference_solution",
            "response__question__task_description", "response__question__extra",
            "meta_evaluation__analysis", "meta_evaluation__provenance",
        )
        .order_by(*queue_ordering(order))
    )


def queue_stats(queryset):
    """Total, classified and waiting-for-review counts of a queue, in one query."""
    classified = Q(meta_evaluation__isnull=False) & ~Q(meta_evaluation__category="")
    counts = queryset.aggregate(
        total=Count("pk", distinct=True),
        confirmed=Count("pk", filter=classified, distinct=True),
        over=Count("pk", filter=Q(delta__gt=0), distinct=True),
    )
    counts["todo"] = counts["total"] - counts["confirmed"]
    counts["under"] = counts["total"] - counts["over"]
    return counts


def proposal_counts(queryset):
    """Of a queue: cases whose latest LLM proposal is usable, unreadable or failed."""
    return dict(
        MetaEvalProposal.objects.filter(meta_evaluation__result__in=queryset.values("pk"))
        .values_list("status").annotate(n=Count("meta_evaluation", distinct=True)).order_by()
    )


def neighbours(queryset, result_pk, order="id"):
    """Previous, next and next-not-yet-classified result ids around one, and its position, in the
    queue's order as listed (`order`: "id" or "delta"). The result need not be in the queue any
    more (it was just classified under a "not classified" filter): its place is where it would
    sort."""
    ids = queryset.values_list("pk", flat=True)
    if order == "delta":
        own = _with_deltas(JudgeResult.objects.filter(pk=result_pk)).values_list("abs_delta", flat=True).first()
    if order == "delta" and own is not None:
        before = Q(abs_delta__gt=own) | Q(abs_delta=own, pk__lt=result_pk)
        after = Q(abs_delta__lt=own) | Q(abs_delta=own, pk__gt=result_pk)
        forward, backward = ("-abs_delta", "pk"), ("abs_delta", "-pk")
    else:
        before, after = Q(pk__lt=result_pk), Q(pk__gt=result_pk)
        forward, backward = ("pk",), ("-pk",)
    previous = ids.filter(before).order_by(*backward).first()
    following = ids.filter(after).order_by(*forward).first()
    classified = Q(meta_evaluation__isnull=False) & ~Q(meta_evaluation__category="")
    todo = ids.exclude(classified)
    next_todo = (todo.filter(after).order_by(*forward).first()
                 or todo.exclude(pk=result_pk).order_by(*forward).first())
    position = ids.filter(before).count() + 1
    return {"previous": previous, "next": following, "next_todo": next_todo, "position": position}


def review_case(result_pk):
    """A judge result with everything the review screen shows."""
    result = (
        JudgeResult.objects.select_related("config", "run", "response__question__exam")
        .prefetch_related("response__question__checkpoints", "response__question__sub_questions")
        .get(pk=result_pk)
    )
    meta = MetaEvaluation.objects.filter(result=result).select_related("confirmed_by", "proposal").first()
    proposals = list(meta.proposals.select_related("run").order_by("-id")[:5]) if meta else []
    gold_labels = list(
        result.response.labels.filter(submitted=True)
        .select_related("annotator")
        .prefetch_related("step_labels__checkpoint", "step_labels__sub_question")
        .order_by("-is_imported", "submitted_at", "pk")
    )
    gold = float(result.response.gold_score) if result.response.gold_score is not None else None
    return {
        "result": result,
        "response": result.response,
        "question": result.response.question,
        "meta": meta,
        "proposals": proposals,
        "latest_proposal": next((p for p in proposals if p.status == MetaEvalProposal.Status.OK), None),
        "gold_labels": gold_labels,
        "gold": gold,
        "delta": (result.score - gold) if result.score is not None and gold is not None else None,
        "direction": direction(result.score, gold),
    }


def meta_history(meta):
    """Every version of a meta-evaluation: who, when, category and analysis."""
    if meta is None:
        return []
    records = meta.history.select_related("history_user").order_by("-history_date", "-history_id")
    return [
        {
            "when": r.history_date, "who": r.history_user.username if r.history_user else "system",
            "category": r.category, "analysis": r.analysis, "proposed_by": r.proposed_by, "version": r.version,
        }
        for r in records
    ]


# --- category counts -----------------------------------------------------------------------

def category_summary(params=None):
    """Counts of confirmed categories overall and by judge, source, question and direction, and
    how often the expert kept the LLM's proposal (two queries)."""
    params = params or {}
    labels = MetaEvaluation.objects.exclude(category="")
    if id_param(params.get("setting")) is not None:
        labels = labels.filter(result__config_id=id_param(params["setting"]))
    rows = list(labels.values_list(
        "category", "direction", "result__config_id", "result__response__source", "result__response__question_id",
        "proposed_by", "kept_proposal", "proposal__category",
    ))
    config_ids = {r[2] for r in rows}
    question_ids = {r[4] for r in rows}
    config_labels = {c.pk: str(c) for c in JudgeSetting.objects.filter(pk__in=config_ids).only("name", "version")}
    question_labels = {
        pk: question_label(pk, location, external_id)
        for pk, location, external_id in Question.objects.filter(pk__in=question_ids).values_list(
            "pk", "location", "external_id"
        )
    }

    def breakdown(index, names):
        table = defaultdict(Counter)
        for row in rows:
            table[row[index]][row[0]] += 1
        return [
            {"key": key, "label": names.get(key, key or "—"), "counts": [table[key][c] for c in CATEGORIES],
             "total": sum(table[key].values())}
            for key in sorted(table, key=lambda k: str(names.get(k, k)))
        ]

    with_proposal = [r for r in rows if r[6] is not None]
    kept = sum(1 for r in with_proposal if r[6])
    confusion = Counter((r[7], r[0]) for r in with_proposal if r[7])
    return {
        "categories": [{"code": c, "name": gettext(n), "definition": gettext(d)} for c, (n, d) in CATEGORIES.items()],
        "total": len(rows),
        "counts": [sum(1 for r in rows if r[0] == c) for c in CATEGORIES],
        "by_direction": breakdown(1, {"over": gettext("Judge over-scored"), "under": gettext("Judge under-scored"), "": "—"}),
        "by_judge": breakdown(2, config_labels),
        "by_source": breakdown(3, _choice_labels(Response.Source.choices)),
        "by_question": breakdown(4, question_labels),
        "by_origin": breakdown(5, _choice_labels(MetaEvaluation.Source.choices)),
        "prelabel": {
            "with_proposal": len(with_proposal),
            "kept": kept,
            "changed": len(with_proposal) - kept,
            "kept_rate": kept / len(with_proposal) if with_proposal else None,
            "confusion": [[confusion[(llm, expert)] for expert in CATEGORIES] for llm in CATEGORIES],
        },
    }


def meta_eval_run_progress(run):
    """Proposals written so far by status (one query)."""
    counts = dict(run.proposals.values_list("status").annotate(n=Count("id")).order_by())
    done = sum(counts.values())
    last = run.proposals.aggregate(last=Max("created"))["last"]
    is_stalled = stalled(run.status, last, run.resumed or run.created)
    return {
        "id": run.pk, "status": run.status, "model": run.model, "n_items": run.n_items, "done": done,
        "epoch": run.epoch, "stalled": is_stalled,
        "can_resume": run.status == MetaEvalRun.Status.CANCELLED or is_stalled,
        "ok": counts.get(MetaEvalProposal.Status.OK, 0),
        "invalid": counts.get(MetaEvalProposal.Status.INVALID, 0),
        "error": counts.get(MetaEvalProposal.Status.ERROR, 0),
        "fraction": done / run.n_items if run.n_items else 1.0,
    }


def recent_meta_eval_runs(limit=10):
    return list(MetaEvalRun.objects.select_related("endpoint").order_by("-created", "-id")[:limit])


# --- step-judge validation (IneqMath) ------------------------------------------------------

FINAL_ANSWER_KINDS = (JudgeSetting.Kind.INEQ_FINAL_ANSWER, JudgeSetting.Kind.CAS_FINAL_ANSWER)
JUDGE_SLOTS = (
    ("final_answer", gettext_lazy("Final answer"), FINAL_ANSWER_KINDS),
    ("toy_case", gettext_lazy("Toy case"), (JudgeSetting.Kind.INEQ_TOY_CASE,)),
    ("logical_gap", gettext_lazy("Logical gap"), (JudgeSetting.Kind.INEQ_LOGICAL_GAP,)),
    ("numerical_approximation", gettext_lazy("Numerical approximation"), (JudgeSetting.Kind.INEQ_NUMERICAL_APPROXIMATION,)),
    ("numerical_computation", gettext_lazy("Numerical computation"), (JudgeSetting.Kind.INEQ_NUMERICAL_COMPUTATION,)),
    ("holistic", gettext_lazy("Holistic baseline"), (JudgeSetting.Kind.INEQ_HOLISTIC,)),
)
STEP_SLOTS = ("toy_case", "logical_gap", "numerical_approximation", "numerical_computation")
OVERALL_SLOTS = ("final_answer", *STEP_SLOTS)
SLOT_LABELS = {slot: label for slot, label, _ in JUDGE_SLOTS}
POSITIVE_CLASSES = {"flaw": gettext_lazy("the judge fails the solution (finds a flaw)"), "pass": gettext_lazy("the judge passes the solution")}


def validation_judges(params=None):
    """Per judge slot (final answer, the four step judges, holistic): the setting versions that
    have results, and the one chosen (`judge_<slot>` in params, else the newest). One query."""
    params = params or {}
    kinds = {kind: slot for slot, _, slot_kinds in JUDGE_SLOTS for kind in slot_kinds}
    configs = (
        JudgeSetting.objects.filter(kind__in=list(kinds))
        .annotate(n_results=Count("results"))
        .filter(n_results__gt=0)
        .only("id", "name", "version", "kind", "model")
        .order_by("-created", "-id")
    )
    available = {slot: [] for slot, _, _ in JUDGE_SLOTS}
    for config in configs:
        available[kinds[config.kind]].append(config)
    chosen = {}
    for slot, options in available.items():
        wanted = str(params.get(f"judge_{slot}", "")).strip()
        if wanted == "none":
            chosen[slot] = None
            continue
        picked = next((c for c in options if str(c.pk) == wanted), None)
        chosen[slot] = picked or (options[0] if options else None)
    return {"available": available, "chosen": chosen}


def _current_of_configs(config_ids):
    newer = JudgeResult.objects.filter(config=OuterRef("config"), response=OuterRef("response"), pk__gt=OuterRef("pk"))
    return JudgeResult.objects.filter(config__in=config_ids).exclude(Exists(newer))


def _chosen_ids(chosen):
    return {config.pk: slot for slot, config in chosen.items() if config is not None}


def validation_response_ids(chosen, params=None):
    """Ids of the responses judged by any chosen setting, in order (a queryset, for paging)."""
    params = params or {}
    results = _current_of_configs(list(_chosen_ids(chosen)))
    if params.get("state") == "open":
        results = results.filter(status=JudgeResult.Status.OK, validation__isnull=True)
    elif params.get("state") == "done":
        results = results.filter(validation__isnull=False)
    if id_param(params.get("question")) is not None:
        results = results.filter(response__question_id=id_param(params["question"]))
    return results.order_by("response_id").values_list("response_id", flat=True).distinct()


def validation_rows(chosen, response_ids):
    """For some responses: each chosen judge's verdict and the expert's mark (three queries)."""
    slots = _chosen_ids(chosen)
    results = _current_of_configs(list(slots)).filter(response_id__in=response_ids).values_list(
        "pk", "config_id", "response_id", "status", "score", "validation__verdict_right"
    )
    cells = defaultdict(dict)
    for pk, config_id, response_id, status, score, right in results:
        cells[response_id][slots[config_id]] = {
            "result": pk, "status": status, "passes": None if score is None else score >= 0.5, "right": right,
        }
    responses = Response.objects.filter(pk__in=response_ids).select_related("question").only(
        "id", "student_id", "source", "generator_model", "question__id", "question__location", "question__external_id"
    )
    order = {pk: i for i, pk in enumerate(response_ids)}
    return [
        {"response": r, "cells": [cells[r.pk].get(slot) for slot, _, _ in JUDGE_SLOTS if chosen.get(slot)]}
        for r in sorted(responses, key=lambda r: order[r.pk])
    ]


def validation_case(response_pk, chosen):
    """One response with the chosen judges' results and their validations."""
    response = Response.objects.select_related("question__exam").get(pk=response_pk)
    slots = _chosen_ids(chosen)
    results = {
        slots[r.config_id]: r
        for r in _current_of_configs(list(slots)).filter(response=response).select_related("config", "validation__validated_by")
    }
    judges = [
        {"slot": slot, "label": label, "config": chosen[slot], "result": results.get(slot),
         "validation": getattr(results.get(slot), "validation", None) if results.get(slot) else None}
        for slot, label, _ in JUDGE_SLOTS if chosen.get(slot)
    ]
    return {"response": response, "question": response.question, "judges": judges}


def _model_of(generator_model, student_id, source):
    if generator_model:
        return generator_model
    if source == Response.Source.SYNTHETIC and "_t_" in (student_id or ""):
        return student_id.split("_t_")[0]
    return "human answers" if source == Response.Source.HUMAN else (source or "—")


def confusion_figures(pairs, positive="flaw"):
    """Confusion matrix and accuracy/precision/recall/F1 of judge verdicts against the experts'.

    `pairs` are (judge passes, expert says it passes). The positive class is a failed check
    (`positive="flaw"`, the judge's job is to catch flaws) or a passed one (`"pass"`)."""
    flip = positive == "flaw"
    tp = fp = fn = tn = 0
    for judge_pass, expert_pass in pairs:
        judge_pos, expert_pos = (not judge_pass, not expert_pass) if flip else (judge_pass, expert_pass)
        if judge_pos and expert_pos:
            tp += 1
        elif judge_pos:
            fp += 1
        elif expert_pos:
            fn += 1
        else:
            tn += 1
    n = tp + fp + fn + tn
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    if precision is None or recall is None:
        f1 = None
    else:
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "n": n, "tp": tp, "fp": fp, "fn": fn, "tn": tn,
        "accuracy": (tp + tn) / n if n else None, "precision": precision, "recall": recall, "f1": f1,
    }


def validation_report(chosen, positive="flaw"):
    """Per judge: agreement with the experts; per model: Answer Acc, Step Acc per judge, Overall Acc.

    Accuracies are the share of a model's responses the judge passes; Overall Acc counts a
    response only when every one of the five judges (final answer and four step judges) has a
    verdict, and it is correct when all five pass. One query."""
    slots = _chosen_ids(chosen)
    rows = _current_of_configs(list(slots)).filter(status=JudgeResult.Status.OK, score__isnull=False).values_list(
        "config_id", "response_id", "score", "validation__verdict_right", "validation__judge_says_pass",
        "response__generator_model", "response__student_id", "response__source",
    )
    pairs, verdicts, models = defaultdict(list), defaultdict(dict), {}
    for config_id, response_id, score, right, judged_pass, generator, student, source in rows:
        slot, passes = slots[config_id], score >= 0.5
        verdicts[response_id][slot] = passes
        models[response_id] = _model_of(generator, student, source)
        if right is not None and judged_pass == passes:  # a mark on an older verdict no longer applies
            pairs[slot].append((passes, passes if right else not passes))
    judges = [
        {"slot": slot, "label": label, "config": chosen[slot], **confusion_figures(pairs[slot], positive)}
        for slot, label, _ in JUDGE_SLOTS if chosen.get(slot)
    ]
    return {"judges": judges, "models": _accuracy_by_model(verdicts, models, chosen), "positive": positive,
            "positive_label": POSITIVE_CLASSES.get(positive, "")}


def _share(values):
    return (sum(values) / len(values), len(values)) if values else (None, 0)


def _accuracy_by_model(verdicts, models, chosen):
    step_slots = [s for s in STEP_SLOTS if chosen.get(s)]
    complete = all(chosen.get(s) for s in OVERALL_SLOTS)
    grouped = defaultdict(list)
    for response_id, by_slot in verdicts.items():
        grouped[models[response_id]].append(by_slot)
    table = []
    for model in sorted(grouped):
        entries = grouped[model]
        answer, n_answer = _share([e["final_answer"] for e in entries if "final_answer" in e])
        steps = {slot: _share([e[slot] for e in entries if slot in e]) for slot in step_slots}
        full = [all(e[s] for s in OVERALL_SLOTS) for e in entries if all(s in e for s in OVERALL_SLOTS)] if complete else []
        overall, n_overall = _share(full)
        table.append({
            "model": model, "n": len(entries), "answer_acc": answer, "n_answer": n_answer,
            "step_acc": [{"slot": s, "label": SLOT_LABELS[s], "acc": steps[s][0], "n": steps[s][1]} for s in step_slots],
            "overall_acc": overall, "n_overall": n_overall,
        })
    return table
