"""Read-side queries of the dataset core."""
import re
from decimal import Decimal, InvalidOperation

from django.db.models import BooleanField, Count, Exists, ExpressionWrapper, OuterRef, Q, Value

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
SCORE_FILTERS = ("gold_status", "score_min", "score_max")  # filters on data blind mode hides

MAX_ID = 2**63 - 1  # the largest value of a database id column
SCORE_LIMIT = Decimal(100000)  # beyond any gold score (7 digits, 2 after the point)
_DIGITS = re.compile(r"[0-9]+")


def _score_bound(value):
    """A score bound from request text: a finite number, clamped to the column's range (so that
    no database is asked about 1E+999999), or None for anything else ("NaN", "Infinity", "²")."""
    try:
        number = Decimal(str(value).strip()) if value not in (None, "") else None
    except InvalidOperation:
        return None
    if number is None or not number.is_finite():
        return None
    return max(-SCORE_LIMIT, min(SCORE_LIMIT, number))


def id_param(value):
    """A database id from request input (a query parameter, a form field), or None.

    Only ASCII digits count ("²" and "٣" are digits to Python's str.isdigit, not ids)."""
    text = str(value or "").strip()
    return int(text) if _DIGITS.fullmatch(text) and int(text) <= MAX_ID else None


def filter_by_id(queryset, field, value):
    """Filter on an id given as request text: no filter without digits, nothing for an id no
    column can hold (it names no row, and would overflow SQLite's integers)."""
    if not _DIGITS.fullmatch(str(value or "").strip()):
        return queryset
    pk = id_param(value)
    return queryset.filter(**{field: pk}) if pk is not None else queryset.none()


def filter_responses(queryset, params, *, viewer=None):
    """Apply the response-list filters (a dict of strings, e.g. request.GET) to a queryset.

    `viewer` is the person asking (None: a trusted caller, the command line or a job a reviewer
    started). For a viewer under blind mode, the filters on hidden data (gold status, score
    range, a status derived from other people's labels) only ever match responses whose scores
    they may see, so no filter narrows the list by what they may not see.
    """
    visible = scores_visible_to(viewer) if viewer is not None else None
    if params.get("source") in Response.Source.values:
        queryset = queryset.filter(source=params["source"])
    if params.get("level") in ("low", "high"):
        queryset = queryset.filter(question__level=params["level"])
    queryset = filter_by_id(queryset, "question_id", params.get("question"))
    queryset = filter_by_id(queryset, "question__exam_id", params.get("exam"))
    if params.get("status") in Response.Status.values:
        queryset = queryset.filter(_status_condition(params["status"], visible))
    if params.get("q"):
        queryset = queryset.filter(Q(student_id__icontains=params["q"]) | Q(transcript__icontains=params["q"]))
    return _filter_scores(queryset, params, visible)


def _filter_scores(queryset, params, visible):
    """The gold status and score-range filters, on the responses whose scores the viewer sees."""
    conditions = Q()
    if params.get("gold_status") in Response.GoldStatus.values:
        conditions &= Q(gold_status=params["gold_status"])
    score_min, score_max = _score_bound(params.get("score_min")), _score_bound(params.get("score_max"))
    if score_min is not None:
        conditions &= Q(gold_score__gte=score_min)
    if score_max is not None:
        conditions &= Q(gold_score__lte=score_max)
    if not conditions:
        return queryset
    return queryset.filter(conditions if visible is None else conditions & visible)


def _status_condition(status, visible):
    """Match a status as the viewer sees it: under blind mode a response whose scores are hidden
    shows "ready" where it is labelled or adjudicated (both tell of other people's labels)."""
    if visible is None or status == Response.Status.TRANSCRIBING:
        return Q(status=status)
    if status == Response.Status.READY:
        return Q(status=status) | (~visible & Q(status__in=Response.BLIND_MASKED_STATUSES))
    return Q(status=status) & visible


def response_list(params=None, *, viewer=None):
    """The response list page: filtered (see filter_responses), each row with `scores_visible`."""
    queryset = Response.objects.select_related("question", "question__exam").defer(
        "transcript", "judge_query", "generator_prompt", "question__reference_solution"
    )
    queryset = filter_responses(queryset, params or {}, viewer=viewer)
    return with_scores_visible(queryset, viewer).order_by("question_id", "id")


def response_detail(pk):
    return Response.objects.select_related("question", "question__exam").get(pk=pk)


# --- blind mode: who may see hidden scores ----------------------------------------------------
#
# Hidden scores are a response's gold score and gold status, other people's labels of it, its
# judge results, and the statuses "labelled" / "adjudicated" that tell of other labels. The rule
# has one definition, scores_visible_to; the helpers below apply it to one response, a set of
# ids or a queryset. Every page, API and filter that shows or selects by hidden scores uses them.


def scores_visible_to(user, *, via=""):
    """The blind rule, as a query condition on rows that are (or reach through `via`, e.g.
    "response__") a response: the rows whose hidden scores `user` may see.

    None when they may see all (reviewers and admins). Otherwise: responses of an exam that is
    not blind, and responses the user has submitted their own label of.
    """
    from accounts.roles import is_reviewer

    from .models import Annotation

    if user is not None and is_reviewer(user):
        return None
    if user is None or not user.is_authenticated:
        return Q(pk__isnull=True)  # nothing
    own = Annotation.objects.filter(response=OuterRef(via[:-2] if via else "pk"), annotator=user, submitted=True)
    return Q(**{f"{via}question__exam__blind": False}) | Exists(own)


def can_see_scores(user, response):
    """Whether `user` may see the hidden scores of one response (scores_visible_to, for one row;
    no query for reviewers, one for anyone else)."""
    rule = scores_visible_to(user)
    return rule is None or Response.objects.filter(rule, pk=response.pk).exists()


def responses_with_visible_scores(user, response_ids):
    """Of some response ids, the set whose scores `user` may see (one query at most, for lists)."""
    ids = set(response_ids)
    rule = scores_visible_to(user)
    if rule is None or not ids:
        return ids
    return set(Response.objects.filter(rule, pk__in=ids).values_list("pk", flat=True))


def with_scores_visible(queryset, user, *, via=""):
    """Annotate each row with `scores_visible` (True for everything when `user` is None: a trusted
    caller), in the same query."""
    rule = scores_visible_to(user, via=via) if user is not None else None
    if rule is None:
        return queryset.annotate(scores_visible=Value(True, output_field=BooleanField()))
    return queryset.annotate(scores_visible=ExpressionWrapper(rule, output_field=BooleanField()))


# --- labelling: permissions -----------------------------------------------------------------


def can_label(user, response, *, now=None):
    """Whether a user may start their own label of a response.

    Reviewers may label anything; an annotator what is assigned to them, an open slot they hold,
    or a response they already started.
    """
    from django.utils import timezone

    from accounts.roles import has_role, is_reviewer

    from .models import Annotation, Assignment

    if is_reviewer(user):
        return True
    if not has_role(user, "annotator"):
        return False
    now = now or timezone.now()
    return (
        Assignment.objects.filter(response=response)
        .filter(Q(annotator=user) | Q(lock_holder=user, lock_expires__gt=now))
        .exists()
        or Annotation.objects.filter(response=response, annotator=user).exists()
    )


def can_edit_annotation(user, annotation):
    """Imported labels are read-only; reviewers may correct any other; an annotator edits their own
    until they submit it on a blind exam (after that they have seen the other labels)."""
    from accounts.roles import is_reviewer

    if annotation.is_imported:
        return False
    if is_reviewer(user):
        return True
    if annotation.annotator_id != user.pk:
        return False
    return not (annotation.submitted and annotation.response.question.exam.blind)


# --- labelling: reads -----------------------------------------------------------------------


def label_page_response(pk):
    """A response with everything the labelling page shows, in three queries."""
    return (
        Response.objects.select_related("question", "question__exam")
        .prefetch_related("question__sub_questions", "question__checkpoints")
        .get(pk=pk)
    )


def submitted_labels(response):
    """Submitted labels of a response (imported gold included), oldest first."""
    return list(
        response.annotations.filter(submitted=True)
        .select_related("annotator")
        .prefetch_related("step_labels")
        .order_by("is_imported", "submitted_at", "pk")
    )


def labels_of_response(response, *, exclude_user=None):
    """All labels of a response with their step labels (for people allowed to see them)."""
    queryset = response.annotations.select_related("annotator", "updated_by").prefetch_related("step_labels")
    if exclude_user is not None:
        queryset = queryset.exclude(annotator=exclude_user)
    return list(queryset.order_by("-is_imported", "pk"))


def own_label(response, user):
    from .models import Annotation

    return (
        Annotation.objects.filter(response=response, annotator=user)
        .select_related("updated_by")
        .prefetch_related("step_labels")
        .first()
    )


QUEUE_STATES = {"todo": "To do", "done": "Submitted", "all": "All"}


def queue_of(user, state="todo"):
    """Ids of a person's assignments in response order: unfinished ("todo"), submitted ("done")
    or all. Paginate these, then load the page with queue_rows: filtering on (annotator,
    completed_at) and ordering by response keeps any page an index range."""
    from .models import Assignment

    queryset = Assignment.objects.filter(annotator=user)
    if state == "todo":
        queryset = queryset.filter(completed_at__isnull=True)
    elif state == "done":
        queryset = queryset.filter(completed_at__isnull=False)
    return queryset.order_by("response_id").values_list("pk", flat=True)


def queue_rows(user, ids):
    """One page of the queue: the assignments with their response and whether work started."""
    from django.db.models import Exists, OuterRef

    from .models import Annotation, Assignment, LabelDraft

    return list(
        Assignment.objects.filter(pk__in=list(ids))
        .select_related("response", "response__question")
        .only("id", "response_id", "annotator_id", "created", "lock_holder_id", "lock_expires", "completed_at",
              "response__id", "response__source", "response__question_id",
              "response__question__id", "response__question__location")
        .annotate(
            started=Exists(Annotation.objects.filter(response=OuterRef("response"), annotator=user)),
            drafted=Exists(LabelDraft.objects.filter(response=OuterRef("response"), user=user)),
        )
        .order_by("response_id")
    )


def held_open_slots(user, *, now=None):
    """Open-pool slots the user holds right now (not theirs until they start labelling)."""
    from django.utils import timezone

    from .models import Assignment

    now = now or timezone.now()
    return list(
        Assignment.objects.filter(lock_holder=user, lock_expires__gt=now, annotator__isnull=True, completed_at__isnull=True)
        .only("id", "response_id", "lock_expires")
        .order_by("response_id")
    )


def queue_counts(user):
    from .models import Assignment

    counts = Assignment.objects.filter(annotator=user).aggregate(
        total=Count("id"), done=Count("id", filter=Q(completed_at__isnull=False))
    )
    counts["todo"] = counts["total"] - counts["done"]
    return counts


def neighbours(user, response):
    """(previous, next) response ids around `response` in the user's queue; by question for
    people without assignments there (reviewers)."""
    from .models import Assignment

    mine = Assignment.objects.filter(annotator=user)
    if mine.filter(response=response).exists():
        ids, key = mine.values_list("response_id", flat=True), "response_id"
    else:
        ids, key = Response.objects.filter(question_id=response.question_id).values_list("pk", flat=True), "pk"
    previous = ids.filter(**{f"{key}__lt": response.pk}).order_by(f"-{key}").first()
    following = ids.filter(**{f"{key}__gt": response.pk}).order_by(key).first()
    return previous, following


def adjudication_queue(threshold, params=None):
    """Responses whose submitted labels (imported gold included) differ by at least `threshold`,
    not adjudicated yet, largest disagreement first. Reads the label summary kept by
    annotation.services.refresh_gold, so it is an index range, not a scan of every label."""
    from django.db.models import F

    params = params or {}
    queryset = (
        Response.objects.filter(label_summary__adjudicated=False, label_summary__spread__gte=threshold,
                                label_summary__n_labels__gte=2)
        .annotate(n_labels=F("label_summary__n_labels"), high=F("label_summary__high"), low=F("label_summary__low"),
                  spread=F("label_summary__spread"))
        .select_related("question")
        .defer("transcript", "judge_query", "generator_prompt", "extra", "question__reference_solution",
               "question__statement", "question__task_description")
    )
    if id_param(params.get("question")) is not None:
        queryset = queryset.filter(question_id=id_param(params["question"]))
    if id_param(params.get("exam")) is not None:
        queryset = queryset.filter(question__exam_id=id_param(params["exam"]))
    return queryset.order_by("-label_summary__spread", "pk")


def assignment_overview():
    """Per annotator: assigned and submitted; per question: labels asked, open-pool slots, submitted.

    One grouped pass over the assignments each (no joins fanning out, no DISTINCT)."""
    from django.contrib.auth import get_user_model

    from .models import Assignment

    done = Q(completed_at__isnull=False)
    by_person = {
        row["annotator"]: row
        for row in Assignment.objects.filter(annotator__isnull=False)
        .values("annotator")
        .annotate(assigned=Count("id"), done=Count("id", filter=done))
        .order_by()
    }
    people = list(get_user_model().objects.filter(pk__in=by_person).only("id", "username").order_by("username"))
    for person in people:
        person.assigned, person.done = by_person[person.pk]["assigned"], by_person[person.pk]["done"]
    by_question = {
        row["response__question"]: row
        for row in Assignment.objects.values("response__question")
        .annotate(slots=Count("id"), done=Count("id", filter=done), open_slots=Count("id", filter=Q(annotator__isnull=True)))
        .order_by()
    }
    questions = list(
        Question.objects.filter(pk__in=by_question)
        .select_related("exam")
        .only("id", "location", "external_id", "exam__name")
        .order_by("exam__name", "location", "id")
    )
    for question in questions:
        row = by_question[question.pk]
        question.slots, question.done, question.open_slots = row["slots"], row["done"], row["open_slots"]
    return {"people": people, "questions": questions, "total": sum(r["slots"] for r in by_question.values())}


def label_history(annotation):
    """Every version of a label (who, when, what changed) and every save attempt, newest first."""
    from .models import LabelSaveAttempt, StepLabel

    records = list(annotation.history.select_related("history_user").order_by("history_date", "history_id"))
    events = []
    previous = None
    for record in records:
        changes = []
        if previous is not None:
            delta = record.diff_against(previous, excluded_fields=["updated", "version"])
            changes = [{"field": c.field, "old": c.old, "new": c.new} for c in delta.changes]
        events.append(
            {
                "kind": "version",
                "when": record.history_date,
                "who": record.history_user.username if record.history_user else "system",
                "version": record.version,
                "type": record.get_history_type_display(),
                "changes": changes,
                "total": record.total,
                "submitted": record.submitted,
            }
        )
        previous = record
    steps = StepLabel.history.filter(annotation_id=annotation.pk).select_related("history_user")
    for record in steps.order_by("history_date", "history_id"):
        events.append(
            {
                "kind": "step",
                "when": record.history_date,
                "who": record.history_user.username if record.history_user else "system",
                "type": record.get_history_type_display(),
                "verdict": record.get_verdict_display(),
                "span": f"{record.start}–{record.end}",
                "quote": record.quote,
            }
        )
    for attempt in LabelSaveAttempt.objects.filter(annotation=annotation).select_related("user"):
        events.append(
            {
                "kind": "attempt",
                "when": attempt.created,
                "who": attempt.user.username,
                "outcome": attempt.outcome,
                "outcome_label": attempt.get_outcome_display(),
                "base_version": attempt.base_version,
                "found_version": attempt.found_version,
                "new_version": attempt.new_version,
                "submit": attempt.submit,
                "detail": attempt.detail,
            }
        )
    return sorted(events, key=lambda e: e["when"], reverse=True)


def agreement_ratings(params=None, *, include_imported=True):
    """(ratings, full scores, question names) for annotation.agreement.agreement_report.

    Ratings are the totals of submitted labels as (response, question, rater, total) rows;
    `params` filters like the response list (question, exam, source).
    """
    from .models import Annotation
    from .models.labels import IMPORTED_RATER

    params = params or {}
    labels = Annotation.objects.filter(submitted=True, total__isnull=False)
    if not include_imported:
        labels = labels.filter(is_imported=False)
    if id_param(params.get("question")) is not None:
        labels = labels.filter(response__question_id=id_param(params["question"]))
    if id_param(params.get("exam")) is not None:
        labels = labels.filter(response__question__exam_id=id_param(params["exam"]))
    if params.get("source") in Response.Source.values:
        labels = labels.filter(response__source=params["source"])
    rows = labels.values_list("response_id", "response__question_id", "annotator__username", "is_imported", "total")
    ratings = [(r, q, IMPORTED_RATER if imported else name, total) for r, q, name, imported, total in rows]
    question_ids = {row[1] for row in ratings}
    questions = Question.objects.filter(pk__in=question_ids).values_list("pk", "full_score", "location", "external_id")
    full_scores = {pk: full for pk, full, _, _ in questions}
    names = {pk: f"{location or external_id} #{pk}".strip() for pk, _, location, external_id in questions}
    return ratings, full_scores, names


def assignable_responses(question=None, exam=None, source=None, batch=None):
    """The responses of a question or an exam (optionally of one source) to assign.

    With a scan `batch`, the responses its pages made, once every page of them is verified (a
    response still being transcribed is not given out).
    """
    queryset = Response.objects.all()
    if question is not None:
        queryset = queryset.filter(question=question)
    if exam is not None:
        queryset = queryset.filter(question__exam=exam)
    if source in Response.Source.values:
        queryset = queryset.filter(source=source)
    if batch is not None:
        made = batch.pages.filter(response__isnull=False).values("response_id")
        queryset = queryset.filter(pk__in=made).exclude(status=Response.Status.TRANSCRIBING)
    return queryset
