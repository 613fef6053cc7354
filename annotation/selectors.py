"""Read-side queries of the dataset core."""
from decimal import Decimal, InvalidOperation

from django.db.models import Count, Q

from .models import Question, Response


def question_list():
    return (
        Question.objects.select_related("exam")
        .annotate(
            n_responses=Count("responses", distinct=True),
            n_human=Count("responses", filter=Q(responses__source=Response.Source.HUMAN), distinct=True),
            n_synthetic=Count("responses", filter=Q(responses__source=Response.Source.SYNTHETIC), distinct=True),
        )
        .order_by("exam__name", "location", "id")
    )


def question_detail(pk):
    return (
        Question.objects.select_related("exam")
        .prefetch_related("checkpoints__sub_question", "sub_questions")
        .get(pk=pk)
    )


RESPONSE_FILTERS = ("source", "level", "question", "exam", "status", "gold_status", "score_min", "score_max", "q")


def _decimal_or_none(value):
    try:
        return Decimal(value) if value not in (None, "") else None
    except InvalidOperation:
        return None


def filter_responses(queryset, params):
    """Apply the response-list filters (a dict of strings, e.g. request.GET) to a queryset."""
    if params.get("source") in Response.Source.values:
        queryset = queryset.filter(source=params["source"])
    if params.get("level") in ("low", "high"):
        queryset = queryset.filter(question__level=params["level"])
    if str(params.get("question", "")).isdigit():
        queryset = queryset.filter(question_id=int(params["question"]))
    if str(params.get("exam", "")).isdigit():
        queryset = queryset.filter(question__exam_id=int(params["exam"]))
    if params.get("status") in Response.Status.values:
        queryset = queryset.filter(status=params["status"])
    if params.get("gold_status") in Response.GoldStatus.values:
        queryset = queryset.filter(gold_status=params["gold_status"])
    score_min = _decimal_or_none(params.get("score_min"))
    if score_min is not None:
        queryset = queryset.filter(gold_score__gte=score_min)
    score_max = _decimal_or_none(params.get("score_max"))
    if score_max is not None:
        queryset = queryset.filter(gold_score__lte=score_max)
    if params.get("q"):
        queryset = queryset.filter(Q(student_id__icontains=params["q"]) | Q(transcript__icontains=params["q"]))
    return queryset


def response_list(params=None):
    queryset = Response.objects.select_related("question", "question__exam").defer(
        "transcript", "judge_query", "generator_prompt", "question__reference_solution"
    )
    return filter_responses(queryset, params or {}).order_by("question_id", "id")


def response_detail(pk):
    return Response.objects.select_related("question", "question__exam").get(pk=pk)


def labels_visible_to(user, response):
    """Whether a user may see other people's labels and judge scores for a response.

    Reviewers always may. On a blind exam an annotator may only after submitting
    their own annotation of that response.
    """
    from accounts.roles import is_reviewer

    if is_reviewer(user):
        return True
    if not response.question.exam.blind:
        return True
    return response.annotations.filter(annotator=user, submitted=True).exists()
