"""Read-side queries of the dataset core."""
from decimal import Decimal, InvalidOperation

from django.db.models import Count, Q

from accounts.roles import is_reviewer

from .models import Annotation, Question, Response


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


MAX_ID = 2**63 - 1  # the largest value of a database id column


def id_param(value):
    """A database id from request input (a query parameter, a form field), or None."""
    text = str(value or "").strip()
    return int(text) if text.isdigit() and int(text) <= MAX_ID else None


def filter_by_id(queryset, field, value):
    """Filter on an id given as request text: no filter without digits, nothing for an id no
    column can hold (it names no row, and would overflow SQLite's integers)."""
    if not str(value or "").strip().isdigit():
        return queryset
    pk = id_param(value)
    return queryset.filter(**{field: pk}) if pk is not None else queryset.none()


def filter_responses(queryset, params):
    """Apply the response-list filters (a dict of strings, e.g. request.GET) to a queryset."""
    if params.get("source") in Response.Source.values:
        queryset = queryset.filter(source=params["source"])
    if params.get("level") in ("low", "high"):
        queryset = queryset.filter(question__level=params["level"])
    queryset = filter_by_id(queryset, "question_id", params.get("question"))
    queryset = filter_by_id(queryset, "question__exam_id", params.get("exam"))
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
    if is_reviewer(user):
        return True
    if not response.question.exam.blind:
        return True
    return response.annotations.filter(annotator=user, submitted=True).exists()


# --- labelling: visibility ------------------------------------------------------------------


def can_see_scores(user, response):
    """Whether a user may see any score of a response: gold, other people's labels, judge results.

    The one rule every app calls before showing a score (the judge pages included). Reviewers
    always may; on a blind exam an annotator only after submitting their own label.
    Expects `response.question.exam` loaded (select_related) to stay at one query.
    """
    return labels_visible_to(user, response)


def responses_with_visible_scores(user, response_ids):
    """Of some response ids, the set whose scores `user` may see (two queries at most, for lists)."""
    ids = set(response_ids)
    if is_reviewer(user):
        return ids
    if not user.is_authenticated:
        return set()
    open_exams = set(Response.objects.filter(pk__in=ids, question__exam__blind=False).values_list("pk", flat=True))
    submitted = set(
        Annotation.objects.filter(response_id__in=ids - open_exams, annotator=user, submitted=True).values_list(
            "response_id", flat=True
        )
    )
    return open_exams | submitted


def reference_segments(question):
    """Split the reference solution into plain text and checkpoint-marked pieces for highlighting."""
    text, pieces, cursor = question.reference_solution, [], 0
    for checkpoint in question.checkpoints.all():
        if checkpoint.start > cursor:
            pieces.append({"text": text[cursor : checkpoint.start], "checkpoint": None})
        pieces.append({"text": text[checkpoint.start : checkpoint.end], "checkpoint": checkpoint})
        cursor = max(cursor, checkpoint.end)
    if cursor < len(text):
        pieces.append({"text": text[cursor:], "checkpoint": None})
    return pieces
