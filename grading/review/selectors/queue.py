"""The disagreement queue: its one FilterSet, its rows, counts and neighbours, one case."""

import django_filters
from django import forms
from django.db.models import CharField, Count, Exists, F, FloatField, OuterRef, Q, Subquery, Value
from django.db.models.functions import Abs, Cast
from django.utils.translation import gettext_lazy, pgettext

from annotation.labelling.rules import rubric_groups
from annotation.models import Response
from core.app_hooks import app_modules
from core.ids import id_param

from ...models import JudgeResult, MetaEvalProposal, MetaEvaluation
from ..meta_eval import CATEGORIES, direction
from .scopes import DEFAULT_THRESHOLD, EPS, current_results

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


def _id_choice(value):
    pk = id_param(value)
    if pk is None:
        raise forms.ValidationError(gettext_lazy("Give an id."), code="invalid")
    return pk


class IdField(forms.CharField):
    """An object id (the rule of `core.ids.id_param`); anything else is invalid."""

    def clean(self, value):
        value = super().clean(value)
        return None if value in (None, "") else _id_choice(value)


class IdFilter(django_filters.Filter):
    field_class = IdField


class CategoryField(forms.ChoiceField):
    """A category code A-E, in either case."""

    def to_python(self, value):
        return super().to_python(value).upper()


class CategoryFilter(django_filters.ChoiceFilter):
    field_class = CategoryField


class QueueFilter(django_filters.FilterSet):
    """The disagreement queue's filters, the one set the page, the API and the `disagreements`
    command use. Runs over `disagreement_queue`'s rows (``delta`` and ``ocr_tag`` annotated).
    An invalid value is an error of `errors` and is left out of the filtering."""

    source = django_filters.ChoiceFilter(field_name="response__source", choices=Response.Source.choices)
    question = IdFilter(field_name="response__question_id")
    exam = IdFilter(field_name="response__question__exam_id")
    level = django_filters.ChoiceFilter(field_name="response__question__level",
                                        choices=[("low", "low"), ("high", "high")])
    direction = django_filters.ChoiceFilter(choices=[("over", "over"), ("under", "under")], method="filter_direction")
    category = CategoryFilter(field_name="meta_evaluation__category", choices=[(c, c) for c in CATEGORIES])
    state = django_filters.ChoiceFilter(choices=list(QUEUE_STATES.items()), method="filter_state")
    attribution = django_filters.ChoiceFilter(
        choices=[("ocr", "ocr"), ("judge", "judge"), ("both", "both"), ("none", "none")], method="filter_attribution"
    )

    class Meta:
        model = JudgeResult
        fields = []

    def filter_direction(self, queryset, name, value):
        return queryset.filter(delta__gt=0) if value == "over" else queryset.filter(delta__lt=0)

    def filter_state(self, queryset, name, value):
        classified = Q(meta_evaluation__isnull=False) & ~Q(meta_evaluation__category="")
        if value == "todo":
            return queryset.exclude(classified)
        if value == "confirmed":
            return queryset.filter(classified)
        proposed = Exists(MetaEvalProposal.objects.filter(
            meta_evaluation__result=OuterRef("pk"), status=MetaEvalProposal.Status.OK
        ))
        return queryset.exclude(classified).filter(proposed)

    def filter_attribution(self, queryset, name, value):
        """Rows with this OCR-vs-judge tag ("none": no raw-OCR judgement, `ocr_tag` blank)."""
        return queryset.filter(ocr_tag="" if value == "none" else value)


QUEUE_FILTERS = tuple(QueueFilter.base_filters)


def _with_attribution(queryset, threshold):
    """OCR-vs-judge attribution on every row, `ocr_tag` and `ocr_raw_score`, by the module an app
    names as `queue_attribution` on its AppConfig (core.app_hooks), with `with_attribution(queryset,
    threshold)`: studies.selectors (review does not import the studies); without one, no row has a tag."""
    modules = app_modules("queue_attribution")
    if modules:
        return modules[0].with_attribution(queryset, threshold)
    return queryset.annotate(ocr_raw_score=Value(None, output_field=FloatField()),
                             ocr_tag=Value("", output_field=CharField()))


def queue_filter_errors(params) -> dict:
    """{filter: [messages]} for the values of `params` the queue cannot use (empty: none)."""
    form = QueueFilter(_present(params), queryset=JudgeResult.objects.none()).form
    return {name: list(errors) for name, errors in form.errors.items()}


def _present(params):
    params = params or {}
    return {key: params.get(key) for key in QUEUE_FILTERS if params.get(key) not in (None, "")}


def disagreement_queue(scope, threshold=DEFAULT_THRESHOLD, params=None):
    """Results of the scope with |judge - gold| >= threshold (status ok, with a gold score),
    filtered by `QueueFilter` (invalid values left out: see `queue_filter_errors`)."""
    queryset = _with_deltas(
        current_results(scope).filter(
            status=JudgeResult.Status.OK, score__isnull=False, response__gold_score__isnull=False
        )
    ).filter(abs_delta__gte=threshold - EPS)
    queryset = _with_attribution(queryset, threshold)
    return QueueFilter(_present(params), queryset=queryset).qs


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
        queryset.select_related("response", "response__question", "setting", "meta_evaluation",
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
        JudgeResult.objects.select_related("setting", "run", "response__question__exam")
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
    # A step's checkpoint shows what the step is worth and what reaching it earns (the checkpoint's
    # cumulative points), as the labelling screen's captions do: never the cumulative figure alone.
    checkpoints = {c.id: c for group in rubric_groups(result.response.question) for c in group.checkpoints}
    for label in gold_labels:
        for step in label.step_labels.all():
            step.checkpoint_info = checkpoints.get(step.checkpoint_id)
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
            "when": r.history_date, "who": r.history_user.username if r.history_user else pgettext("history author", "system"),
            "category": r.category, "analysis": r.analysis, "proposed_by": r.proposed_by,
            "proposed_by_display": r.get_proposed_by_display(), "version": r.version,
        }
        for r in records
    ]
