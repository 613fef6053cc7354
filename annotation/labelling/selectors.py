"""Read-side queries of labelling: who may label what, the queue, label history, assignments,
the adjudication queue and the ratings behind agreement figures.

Who may see scores (the blind rule) is dataset-wide and lives in annotation.selectors.
"""
from __future__ import annotations

import statistics
from datetime import datetime
from decimal import Decimal, InvalidOperation

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext_lazy

from accounts.roles import has_role, is_reviewer
from core.ids import id_param
from core.numbers import natural_key

from ..models import Assignment, Label, LabelDraft, LabelSaveAttempt, Question, Response, StepLabel
from ..selectors import JUDGE_OK, SCORE_LIMIT
from .experiment import anchor_shown, anchoring_figures
from .models import IMPORTED_RATER


def can_label(user, response: Response, *, now: datetime | None = None) -> bool:
    """Whether a user may start their own label of a response.

    Reviewers may label anything; an annotator what is assigned to them, an open slot they hold,
    or a response they already started.
    """
    if is_reviewer(user):
        return True
    if not has_role(user, "annotator"):
        return False
    now = now or timezone.now()
    return (
        Assignment.objects.filter(response=response)
        .filter(Q(annotator=user) | Q(lock_holder=user, lock_expires__gt=now))
        .exists()
        or Label.objects.filter(response=response, annotator=user).exists()
    )


def can_edit_label(user, label: Label) -> bool:
    """Imported labels are read-only; reviewers may correct any other; an annotator edits their own
    until they submit it on a blind exam (after that they have seen the other labels)."""
    if label.is_imported:
        return False
    if is_reviewer(user):
        return True
    if label.annotator_id != user.pk:
        return False
    return not (label.submitted and label.response.question.exam.blind)


# --- labelling: reads -----------------------------------------------------------------------


def label_page_response(pk: int) -> Response:
    """A response with everything the labelling page shows, in three queries."""
    return (
        Response.objects.select_related("question", "question__exam")
        .prefetch_related("question__sub_questions", "question__checkpoints")
        .get(pk=pk)
    )


def responses_with_rubric() -> QuerySet[Response]:
    """Responses with their question, exam, sub-questions and checkpoints: what the adjudication
    page and the label API look one up in."""
    return Response.objects.select_related("question__exam").prefetch_related(
        "question__sub_questions", "question__checkpoints"
    )


def responses_with_exam() -> QuerySet[Response]:
    """Responses with their question and exam: what the label history looks one up in."""
    return Response.objects.select_related("question__exam")


def response_in_question(pk: int | None) -> Response | None:
    """The response `pk` with only its question's id (to find its neighbours), or None."""
    return Response.objects.filter(pk=pk).only("pk", "question_id").first() if pk is not None else None


def labels_with_history() -> QuerySet[Label]:
    """Labels with their annotator, editor and step labels: what a reviewer's edit looks one up in."""
    return Label.objects.select_related("annotator", "updated_by").prefetch_related("step_labels__sub_question")


def own_draft(response: Response, user) -> LabelDraft | None:
    """The user's autosaved, unsaved work on the response's label, if any."""
    return LabelDraft.objects.filter(response=response, user=user).first()


def submitted_labels(response: Response) -> QuerySet[Label]:
    """Submitted labels of a response (imported gold included), oldest first."""
    return list(
        response.labels.filter(submitted=True)
        .select_related("annotator")
        .prefetch_related("step_labels")
        .order_by("is_imported", "submitted_at", "pk")
    )


def labels_of_response(response: Response, *, exclude_user=None) -> list[Label]:
    """All labels of a response with their step labels (for people allowed to see them)."""
    queryset = response.labels.select_related("annotator", "updated_by").prefetch_related("step_labels")
    if exclude_user is not None:
        queryset = queryset.exclude(annotator=exclude_user)
    return list(queryset.order_by("-is_imported", "pk"))


def own_label(response: Response, user) -> Label | None:
    return (
        Label.objects.filter(response=response, annotator=user)
        .select_related("updated_by")
        .prefetch_related("step_labels")
        .first()
    )


QUEUE_STATES = {"todo": gettext_lazy("To do"), "done": gettext_lazy("Submitted"), "all": gettext_lazy("All")}


def queue_of(user, state: str = "todo") -> QuerySet:
    """Ids of a person's assignments in response order: unfinished ("todo"), submitted ("done")
    or all. Paginate these, then load the page with queue_rows: filtering on (annotator,
    completed_at) and ordering by response keeps any page an index range."""
    queryset = Assignment.objects.filter(annotator=user)
    if state == "todo":
        queryset = queryset.filter(completed_at__isnull=True)
    elif state == "done":
        queryset = queryset.filter(completed_at__isnull=False)
    return queryset.order_by("response_id").values_list("pk", flat=True)


def queue_rows(user, ids):
    """One page of the queue: the assignments with their response and whether work started."""
    return list(
        Assignment.objects.filter(pk__in=list(ids))
        .select_related("response", "response__question")
        .only("id", "response_id", "annotator_id", "created", "lock_holder_id", "lock_expires", "completed_at",
              "response__id", "response__source", "response__question_id",
              "response__question__id", "response__question__location")
        .annotate(
            started=Exists(Label.objects.filter(response=OuterRef("response"), annotator=user)),
            drafted=Exists(LabelDraft.objects.filter(response=OuterRef("response"), user=user)),
            # Made from scanned pages (ocr.Page.response): the queue marks them.
            from_scans=Exists(Response.objects.filter(pk=OuterRef("response_id"), scan_pages__isnull=False)),
        )
        .order_by("response_id")
    )


def held_open_slots(user, *, now: datetime | None = None) -> list:
    """Open-pool slots the user holds right now (not theirs until they start labelling)."""
    now = now or timezone.now()
    return list(
        Assignment.objects.filter(lock_holder=user, lock_expires__gt=now, annotator__isnull=True, completed_at__isnull=True)
        .only("id", "response_id", "lock_expires")
        .order_by("response_id")
    )


def queue_counts(user) -> dict:
    counts = Assignment.objects.filter(annotator=user).aggregate(
        total=Count("id"), done=Count("id", filter=Q(completed_at__isnull=False))
    )
    counts["todo"] = counts["total"] - counts["done"]
    return counts


def neighbours(user, response):
    """(previous, next) response ids around `response` in the user's queue; by question for
    people without assignments there (reviewers)."""
    mine = Assignment.objects.filter(annotator=user)
    if mine.filter(response=response).exists():
        ids, key = mine.values_list("response_id", flat=True), "response_id"
    else:
        ids, key = Response.objects.filter(question_id=response.question_id).values_list("pk", flat=True), "pk"
    previous = ids.filter(**{f"{key}__lt": response.pk}).order_by(f"-{key}").first()
    following = ids.filter(**{f"{key}__gt": response.pk}).order_by(key).first()
    return previous, following


# --- one question across the class (grading mode) ------------------------------------------


def class_of_question(user, question_id: int) -> QuerySet[Response]:
    """The responses to one question a user grades in turn, by student: reviewers all of them, an
    annotator those assigned to them or already labelled by them (the blind rule is the label
    page's, unchanged)."""
    queryset = Response.objects.filter(question_id=question_id)
    if not is_reviewer(user):
        queryset = queryset.filter(
            Exists(Assignment.objects.filter(response=OuterRef("pk"), annotator=user))
            | Exists(Label.objects.filter(response=OuterRef("pk"), annotator=user))
        )
    return queryset.order_by("student_id", "pk")


def _student_order(student_id: str, pk: int):
    """Natural order of student ids: "student 2" before "student 10" (ASCII digits compare as
    numbers, through core.numbers: "²" and "٣" are text, never int())."""
    return (natural_key(student_id), pk)


def class_ids(user, question_id: int) -> list[int]:
    """Response ids of the class in the order it is graded: by student id, naturally."""
    rows = class_of_question(user, question_id).values_list("pk", "student_id")
    return [pk for pk, student in sorted(rows, key=lambda row: _student_order(row[1], row[0]))]


def class_position(user, response: Response) -> dict:
    """Where `response` stands in its question's class for `user`: previous and next response
    ids, its 1-based position and the class size; None when the user does not grade it here."""
    ids = class_ids(user, response.question_id)
    if response.pk not in ids:
        return None
    at = ids.index(response.pk)
    return {
        "previous": ids[at - 1] if at > 0 else None,
        "following": ids[at + 1] if at + 1 < len(ids) else None,
        "position": at + 1,
        "total": len(ids),
    }


def first_to_grade(user, question_id: int) -> int | None:
    """The first response of the class the user has not submitted a label for, else the first."""
    ids = class_ids(user, question_id)
    done = set(
        Label.objects.filter(response_id__in=ids, annotator=user, submitted=True).values_list("response_id", flat=True)
    )
    return next((pk for pk in ids if pk not in done), ids[0] if ids else None)


def adjudication_threshold(raw: str | None) -> Decimal:
    """The |spread| threshold asked for in a request: a positive finite number no larger than any
    score can be (so the database never sees a value its numeric column overflows on), else the
    configured default."""
    default = Decimal(str(settings.REALMATH_ADJUDICATION_THRESHOLD))
    try:
        value = Decimal(raw) if raw else default
    except InvalidOperation:
        return default
    if not value.is_finite() or value <= 0:
        return default
    return min(value, SCORE_LIMIT)


def adjudication_queue(threshold: Decimal, params=None) -> QuerySet[Response]:
    """Responses whose submitted labels (imported gold included) differ by at least `threshold`,
    not adjudicated yet, largest disagreement first. Reads the label summary kept by
    annotation.labelling.services.refresh_gold, so it is an index range, not a scan of every label."""
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


def label_history(label: Label) -> list[dict]:
    """Every version of a label (who, when, what changed) and every save attempt, newest first."""
    records = list(label.history.select_related("history_user").order_by("history_date", "history_id"))
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
    steps = StepLabel.history.filter(label_id=label.pk).select_related("history_user")
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
    for attempt in LabelSaveAttempt.objects.filter(label=label).select_related("user"):
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


def _label_filters(labels, params):
    """Filter labels like the response list (question, exam, source)."""
    if id_param(params.get("question")) is not None:
        labels = labels.filter(response__question_id=id_param(params["question"]))
    if id_param(params.get("exam")) is not None:
        labels = labels.filter(response__question__exam_id=id_param(params["exam"]))
    if params.get("source") in Response.Source.values:
        labels = labels.filter(response__source=params["source"])
    return labels


def _question_names(question_rows):
    """{pk: '3-07 · question #1'} from (pk, location, external_id) rows."""
    return {pk: " · ".join(filter(None, [location or external_id, f"question #{pk}"])) for pk, location, external_id in question_rows}


def duration_text(seconds) -> str:
    """Seconds as a person reads them: '45 s', '12 min 05 s', '3 h 07 min'."""
    if seconds is None:
        return "—"
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, rest = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {rest:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def work_time(params=None) -> dict:
    """Active time on expert labels, per annotator and per question (two queries).

    Each row: labels, labels with time recorded (labels saved before time was measured have
    none), total active time and the median per timed label, as seconds and as text."""
    labels = _label_filters(Label.objects.filter(is_imported=False, annotator__isnull=False), params or {})
    rows = list(labels.values_list("annotator__username", "response__question_id", "active_seconds"))
    by_person, by_question = {}, {}
    for name, question_id, seconds in rows:
        by_person.setdefault(name, []).append(seconds)
        by_question.setdefault(question_id, []).append(seconds)
    names = _question_names(Question.objects.filter(pk__in=by_question).values_list("pk", "location", "external_id"))

    def summary(key, label, values):
        timed = [v for v in values if v]
        total = sum(timed)
        median = statistics.median(timed) if timed else None
        return {"key": key, "label": label, "labels": len(values), "timed": len(timed), "seconds": total,
                "median_seconds": median, "total_text": duration_text(total) if timed else "—",
                "median_text": duration_text(median)}

    return {
        "people": [summary(name, name, values) for name, values in sorted(by_person.items())],
        "questions": [summary(pk, names.get(pk, f"question #{pk}"), values) for pk, values in sorted(by_question.items())],
        "labels": len(rows),
    }


def agreement_ratings(params=None, *, include_imported: bool = True) -> tuple:
    """(ratings, full scores, question names) for annotation.labelling.agreement.agreement_report.

    Ratings are the totals of submitted labels as (response, question, rater, total) rows;
    `params` filters like the response list (question, exam, source).
    """
    params = params or {}
    labels = Label.objects.filter(submitted=True, total__isnull=False)
    if not include_imported:
        labels = labels.filter(is_imported=False)
    labels = _label_filters(labels, params)
    rows = labels.values_list("response_id", "response__question_id", "annotator__username", "is_imported", "total")
    ratings = [(r, q, IMPORTED_RATER if imported else name, total) for r, q, name, imported, total in rows]
    question_ids = {row[1] for row in ratings}
    questions = Question.objects.filter(pk__in=question_ids).values_list("pk", "full_score", "location", "external_id")
    full_scores = {pk: full for pk, full, _, _ in questions}
    names = _question_names((pk, location, external_id) for pk, _, location, external_id in questions)
    return ratings, full_scores, names


def assignable_responses(question=None, exam=None, source=None, batch=None) -> QuerySet[Response]:
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


def steps_needing_review(label: Label | None, transcript: str) -> list[dict]:
    """Step labels of `label` that a correction left without their text: the text they were
    on (prefix, quote, suffix) beside what the corrected transcript has at that place now."""
    if label is None:
        return []
    rows = []
    for step in label.step_labels.all():
        if not step.needs_review:
            continue
        start = min(step.start or 0, len(transcript))
        end = min(max(step.end or start, start), len(transcript))
        rows.append(
            {
                "step": step,
                "old": (step.prefix, step.quote, step.suffix),
                "new": (
                    transcript[max(0, start - len(step.prefix)):start],
                    transcript[start:end],
                    transcript[end:end + len(step.suffix)],
                ),
            }
        )
    return rows


# --- the anchoring experiment (annotation.labelling.experiment) -----------------------------



def anchor_for(user, response: Response) -> dict | None:
    """The anchoring experiment as it applies to `user` labelling `response`: None when the exam runs
    none, else {shown, score, setting, result, seed}: `score` is the newest ok judge score of the
    exam's setting (any version of that name; None when there is none yet), `shown` whether this
    assignment is in the shown half. The labelling screen shows `score` only when `shown`: it is
    the one exception to blind mode, and only for that score (one query, none without an experiment)."""
    exam = response.question.exam
    if not exam.anchoring or not exam.anchoring_setting or user is None or not user.is_authenticated:
        return None
    result = (
        response.judge_results.filter(setting__name=exam.anchoring_setting, status=JUDGE_OK, score__isnull=False)
        .order_by("-id").values_list("pk", "score").first()
    )
    return {
        "shown": anchor_shown(exam.anchoring_seed, response.pk, user.pk),
        "score": result[1] if result else None,
        "result": result[0] if result else None,
        "setting": exam.anchoring_setting,
        "seed": exam.anchoring_seed,
    }


def anchoring_labels(params=None, *, setting=None, seed=None) -> list[dict]:
    """The submitted expert labels recorded by the anchoring experiment, for
    experiment.anchoring_figures: {response, rater, expert, judge, shown} (one query); `params`
    filters like the response list (question, exam, source); `setting` and `seed`, when given,
    keep the labels recorded under that setting name and seed (one run of the experiment)."""
    labels = _label_filters(
        Label.objects.filter(submitted=True, is_imported=False, total__isnull=False, anchoring__has_key="shown"),
        params or {},
    )
    if setting is not None:
        labels = labels.filter(anchoring__setting=setting)
    if seed is not None:
        labels = labels.filter(anchoring__seed=seed)
    return [
        {"response": response_id, "rater": annotator_id, "expert": float(total),
         "judge": record.get("score"), "shown": bool(record.get("shown"))}
        for response_id, annotator_id, total, record in labels.values_list(
            "response_id", "annotator_id", "total", "anchoring"
        ).order_by("response_id", "annotator_id")
    ]


MEASURE_TITLES = {
    "abs_diff": gettext_lazy("mean |expert − judge|"),
    "signed_diff": gettext_lazy("mean expert − judge"),
    "expert_mad": gettext_lazy("mean |expert − expert|"),
    "expert_within_one": gettext_lazy("expert pairs within one point"),
}


def anchoring_table(labels) -> dict | None:
    """The anchoring experiment's figures as table rows (None when no label recorded it): the
    agreement page's and the exam page's one table."""
    if not labels:
        return None
    figures = anchoring_figures(labels)
    rows = []
    for measure in figures["measures"]:
        shown, hidden = figures["arms"]["shown"], figures["arms"]["hidden"]
        rows.append({
            "measure": measure, "title": MEASURE_TITLES.get(measure, measure),
            "shown": shown[measure], "shown_ci": shown[f"{measure}_ci"],
            "hidden": hidden[measure], "hidden_ci": hidden[f"{measure}_ci"],
            **figures["tests"][measure],
        })
    return {"figures": figures, "rows": rows}


def anchoring_setting_choices(exam) -> list[tuple[str, int]]:
    """(setting name, answers of `exam` it scored ok) for every judge setting name with an ok
    score on the exam, most answers first: what the exam page offers the experiment (one query)."""
    rows = (
        Response.objects.filter(question__exam=exam, judge_results__status=JUDGE_OK,
                                judge_results__score__isnull=False)
        .values("judge_results__setting__name").annotate(n=Count("id", distinct=True))
        .values_list("judge_results__setting__name", "n")
    )
    return sorted(rows, key=lambda row: (-row[1], row[0]))


def anchoring_progress(exam) -> dict:
    """Where the exam's experiment stands, for its current setting and seed: assignments in each
    half (the seeded split, anchor_shown), labels submitted and recorded in each half, answers the
    setting has scored, and labels recorded under an earlier setting or seed (three queries)."""
    pairs = list(Assignment.objects.filter(response__question__exam=exam, annotator__isnull=False)
                 .values_list("response_id", "annotator_id"))
    shown = sum(anchor_shown(exam.anchoring_seed, response_id, annotator_id) for response_id, annotator_id in pairs)
    recorded = Label.objects.filter(response__question__exam=exam, submitted=True, is_imported=False,
                                    anchoring__has_key="shown")
    current = recorded.filter(anchoring__setting=exam.anchoring_setting, anchoring__seed=exam.anchoring_seed)
    records = list(current.values_list("anchoring", flat=True))
    arms = {"shown": sum(bool(r.get("shown")) for r in records), "with_score": sum(r.get("score") is not None for r in records)}
    arms["hidden"] = len(records) - arms["shown"]
    responses = Response.objects.filter(question__exam=exam)
    scored = responses.filter(judge_results__setting__name=exam.anchoring_setting, judge_results__status=JUDGE_OK,
                              judge_results__score__isnull=False).distinct().count() if exam.anchoring_setting else 0
    return {
        "assignments": len(pairs), "assignments_shown": shown, "assignments_hidden": len(pairs) - shown,
        "labels_shown": arms["shown"], "labels_hidden": arms["hidden"], "labels_with_score": arms["with_score"],
        "answers": responses.count(), "answers_scored": scored,
        "labels_earlier": recorded.count() - arms["shown"] - arms["hidden"],
    }
