"""The RealMath-Eval release format: one judge-ready record per response.

Records carry the same fields, in the same order and with the same number types, as the
published files, so the published scripts read them. Gold and sub-question scores come from
the response's gold label: the adjudicated choice, the agreed or single label, or the
imported one.
"""
from decimal import Decimal

from django.db.models import Prefetch

from ..models import Adjudication, Annotation, Response
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


def gold_annotation(response):
    """The annotation the gold score comes from, using prefetched annotations and adjudications."""
    annotations = list(response.annotations.all())
    adjudications = list(response.adjudications.all())
    if response.gold_status == Response.GoldStatus.ADJUDICATED and adjudications:
        chosen = adjudications[0].chosen_annotation_id
        return next((a for a in annotations if a.pk == chosen), None)
    if response.gold_status == Response.GoldStatus.IMPORTED:
        return next((a for a in annotations if a.is_imported), None)
    matching = [a for a in annotations if a.submitted and a.total == response.gold_score]
    matching.sort(key=lambda a: (a.is_imported, a.pk))  # expert labels before imported ones
    return matching[0] if matching else None


def _sub_scores(response, annotation):
    if annotation is None:
        return {}
    extra = response.extra or {}
    original_keys = {sub_question_label(key): key for key in extra.get("sub_score_keys", [])}
    types = extra.get("number_types", {}).get("sub_question_scores", {})
    scores = {}
    for label, value in annotation.sub_scores.items():
        key = original_keys.get(label, label)
        scores[key] = _number(Decimal(str(value)), types.get(key))
    order = list(original_keys.values())
    return dict(sorted(scores.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order)))


def release_record(response):
    question = response.question
    extra = response.extra or {}
    types = extra.get("number_types", {})
    location = question.location
    return {
        "query": response.judge_query,
        "student_response": response.transcript,
        "sub_question_scores": _sub_scores(response, gold_annotation(response)),
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
        "source": extra.get("source", "realmath_eval"),
        "tag": extra.get("tag")
        or ["llm_judge", "pointwise", "math_scoring", "realmath_eval", f"level_{question.level or 'unknown'}"],
    }


def release_queryset(queryset):
    return queryset.select_related("question").prefetch_related(
        Prefetch("annotations", queryset=Annotation.objects.order_by("id")),
        Prefetch("adjudications", queryset=Adjudication.objects.order_by("-created", "-id")),
    )


def iter_release_records(queryset, chunk_size=500):
    """Release records of the responses in queryset, read in chunks (bounded memory)."""
    ids = list(queryset.order_by("id").values_list("id", flat=True))
    for start in range(0, len(ids), chunk_size):
        chunk = release_queryset(Response.objects.filter(id__in=ids[start : start + chunk_size]).order_by("id"))
        for response in chunk:
            yield release_record(response)
