"""The RealMath-Eval release format: one judge-ready record per response.

Records carry the same fields, in the same order and with the same number types, as the
published files, so the published scripts read them. Gold and sub-question scores come from
the response's gold label: the adjudicated choice, the agreed or single label, or the
imported one.

The format holds rubric-scored answers with a gold score only (`release_scope`): an answer
without gold (an OCR'd answer nobody has labelled yet) has no `gt`, and an IneqMath answer has
no rubric. Those are left out, counted with the reason in the manifest (`left_out`); the full
JSONL export keeps everything. Each record's `source` says where the answer came from
(`record_source`): an imported record keeps its own, others name their origin here.
"""
from decimal import Decimal

from django.db.models import Prefetch, Q

from ..models import Adjudication, Label, Question, Response
from ..rubric import sub_question_label

RELEASE_FIELDS = [
    "query", "student_response", "sub_question_scores", "gt", "reference_answer", "problem_statement",
    "student_id", "question_location", "question_type", "question_level", "full_score", "task_description",
    "source", "tag",
]


def _number(value, kind=None):
    """A Decimal as the int or float the source file used (int when whole and unknown)."""
    if value is None:
        return None
    value = Decimal(value)
    whole = value == value.to_integral_value()
    if kind == "float" or (kind is None and not whole):
        return float(value)
    return int(value) if whole else float(value)


def gold_label(response):
    """The label the gold score comes from, using prefetched labels and adjudications."""
    labels = list(response.labels.all())
    adjudications = list(response.adjudications.all())
    if response.gold_status == Response.GoldStatus.ADJUDICATED and adjudications:
        chosen = adjudications[0].chosen_label_id
        return next((a for a in labels if a.pk == chosen), None)
    if response.gold_status == Response.GoldStatus.IMPORTED:
        return next((a for a in labels if a.is_imported), None)
    matching = [a for a in labels if a.submitted and a.total == response.gold_score]
    matching.sort(key=lambda a: (a.is_imported, a.pk))  # expert labels before imported ones
    return matching[0] if matching else None


def gold_breakdown(response):
    """{sub-question: points} of the gold: an adjudication's own points per sub-question (or the
    picked label's breakdown it kept), else the gold label's."""
    adjudications = list(response.adjudications.all())
    if response.gold_status == Response.GoldStatus.ADJUDICATED and adjudications and adjudications[0].sub_scores:
        return adjudications[0].sub_scores
    gold = gold_label(response)
    if gold is None or (response.gold_status == Response.GoldStatus.ADJUDICATED and gold.total != response.gold_score):
        return {}  # a score of the reviewer's own on top of a picked label: its breakdown does not add up
    return gold.sub_scores


def _sub_scores(response, breakdown):
    if not breakdown:
        return {}
    extra = response.extra or {}
    original_keys = {sub_question_label(key): key for key in extra.get("sub_score_keys", [])}
    types = extra.get("number_types", {}).get("sub_question_scores", {})
    scores = {}
    for label, value in breakdown.items():
        key = original_keys.get(label, label)
        scores[key] = _number(Decimal(str(value)), types.get(key))
    order = list(original_keys.values())
    return dict(sorted(scores.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order)))


BELONGS = Q(question__kind=Question.Kind.RUBRIC, gold_score__isnull=False)
LEFT_OUT_REASONS = {
    "not_rubric": "IneqMath (bound or relation) answers: the release format has no rubric or score for them",
    "no_gold_score": "answers without a gold score yet (e.g. OCR'd answers not labelled): the format needs gt",
}


def release_scope(queryset):
    """The responses of `queryset` that the release format can hold: rubric questions, gold score set."""
    return queryset.filter(BELONGS)


def left_out(queryset):
    """What an export of `queryset` in the release format leaves out, by reason (for the manifest)."""
    counts = {
        "not_rubric": queryset.exclude(question__kind=Question.Kind.RUBRIC).count(),
        "no_gold_score": queryset.filter(question__kind=Question.Kind.RUBRIC, gold_score__isnull=True).count(),
    }
    return {
        "responses": sum(counts.values()),
        "by_reason": {reason: {"responses": n, "why": LEFT_OUT_REASONS[reason]} for reason, n in counts.items() if n},
        "note": "The full JSONL export holds every response.",
    }


def record_source(response):
    """Where an answer came from: an imported record's own `source`, else its origin here."""
    extra = response.extra or {}
    if extra.get("source"):
        return extra["source"]
    if extra.get("origin") == "scan":
        return "ocr_scan"
    if response.source == Response.Source.SYNTHETIC:
        return "synthetic_generation" if extra.get("generation_run") else "synthetic"
    return "workbench"


def release_record(response):
    question = response.question
    extra = response.extra or {}
    types = extra.get("number_types", {})
    location = question.location
    return {
        "query": response.judge_query,
        "student_response": response.transcript,
        "sub_question_scores": _sub_scores(response, gold_breakdown(response)),
        "gt": _number(response.gold_score, types.get("gt")),
        "reference_answer": question.reference_solution,
        "problem_statement": question.statement,
        "student_id": response.student_id,
        "question_location": location,
        "question_type": question.question_type,
        "question_level": question.level,
        "full_score": _number(question.full_score, types.get("full_score")),
        "task_description": extra.get("task_description")
        or f"Score the student response for mathematical problem {location}",
        "source": record_source(response),
        "tag": extra.get("tag")
        or ["llm_judge", "pointwise", "math_scoring", record_source(response), f"level_{question.level or 'unknown'}"],
    }


def release_queryset(queryset):
    return queryset.select_related("question").prefetch_related(
        Prefetch("labels", queryset=Label.objects.order_by("id")),
        Prefetch("adjudications", queryset=Adjudication.objects.order_by("-created", "-id")),
    )


def iter_release_records(queryset, chunk_size=500):
    """Release records of the responses in queryset that the format holds (`release_scope`), read
    in chunks (bounded memory)."""
    ids = list(release_scope(queryset).order_by("id").values_list("id", flat=True))
    for start in range(0, len(ids), chunk_size):
        chunk = release_queryset(Response.objects.filter(id__in=ids[start : start + chunk_size]).order_by("id"))
        for response in chunk:
            yield release_record(response)
