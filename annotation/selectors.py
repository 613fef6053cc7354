"""Read-side queries of the dataset core."""
import re
from decimal import Decimal, InvalidOperation

from django.db.models import BooleanField, Count, Exists, ExpressionWrapper, OuterRef, Q, Subquery, TextField, Value
from django.db.models.functions import Coalesce, Lower, Replace, Substr

from accounts.roles import is_reviewer
from core.ids import filter_by_id
from core.numbers import parse_id

from .mathtext import SEARCH_DROPPED, search_form
from .models import Assignment, Exam, ImportJob, ImportReport, Label, Question, Response, RubricVersion
from .rubric import data_problems, describe, read_rubric, sub_question_label


def dataset_counts():
    """The home page's figures: questions, answers, and answers by source."""
    return {
        "n_questions": Question.objects.count(),
        "n_responses": Response.objects.count(),
        "n_human": Response.objects.filter(source=Response.Source.HUMAN).count(),
        "n_synthetic": Response.objects.filter(source=Response.Source.SYNTHETIC).count(),
    }


def questions_with_exam():
    """Questions with their exam: what the rubric pages look one up in."""
    return Question.objects.select_related("exam")


def question_by_id(pk):
    """The question `pk` (an id already parsed, or None), or None."""
    return Question.objects.filter(pk=pk).first() if pk is not None else None


def exam_by_id(pk):
    """The exam `pk` (an id already parsed, or None), or None."""
    return Exam.objects.filter(pk=pk).first() if pk is not None else None


def exams_by_name():
    return Exam.objects.order_by("name").only("id", "name")


def exams_by_key(keys):
    """{str(id): exam} of the exams whose ids are among `keys` (strings; what is no id is left out)."""
    ids = [pk for pk in (parse_id(key) for key in keys) if pk is not None]
    return {str(exam.pk): exam for exam in Exam.objects.filter(pk__in=ids)}


def report_exams(reports):
    """{str(id): exam} of every exam the import reports name (the exam imported into, where
    skipped answers sit, where questions went or came from): one query."""
    keys = set()
    for report in reports:
        counts = report.counts if isinstance(report.counts, dict) else {}
        keys.add(str(counts.get("exam_id")))
        keys.update(str(key) for key in (counts.get("skipped_by_exam") or {}))
        for row in counts.get("questions") or []:
            if isinstance(row, dict):
                keys.update(str(row.get(key)) for key in ("exam", "from"))
    return exams_by_key(keys)


def recent_import_reports(limit=20):
    return ImportReport.objects.select_related("created_by")[:limit]


def unfinished_import_jobs(limit=10):
    """Import jobs queued, running or failed (a finished one is its report), newest first."""
    return ImportJob.objects.exclude(status=ImportJob.Status.DONE).select_related("created_by")[:limit]


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


def exam_named_or_numbered(value):
    """The exam named `value`, else the one whose id it is (ASCII digits only: "²".isdigit() is
    True), else None: how the commands take an exam."""
    exam = Exam.objects.filter(name=value).first()
    if exam is None and parse_id(value) is not None:
        exam = Exam.objects.filter(pk=parse_id(value)).first()
    return exam


_QUESTION_NUMBER = re.compile(r"^[qQ#]?([0-9]{1,19})$")  # ASCII digits: "٣" is a digit to \d, not a number here


class QuestionIndex:
    """The questions of one exam by location label or number (one query for a whole batch of
    names): how a scan's file name (ocr.filenames) and `assign_labels --question` name a question."""

    def __init__(self, exam):
        self.exam = exam
        self.by_label, self.by_pk = {}, {}
        for pk, location in exam.questions.values_list("pk", "location"):
            self.by_pk[pk] = location
            if location:
                self.by_label.setdefault(location.strip().lower(), []).append(pk)

    def candidates(self, token):
        """Every question pk a token may name: by label, or by number (`q12`, `#12`, `12`)."""
        labelled = self.by_label.get(token.strip().lower(), [])
        match = _QUESTION_NUMBER.match(token.strip())
        numbered = [int(match.group(1))] if match and int(match.group(1)) in self.by_pk else []
        if token[:1] in "qQ#" and numbered:
            labelled = []  # q12 means question number 12, whatever the labels say
        return sorted(set(labelled) | set(numbered))


def exam_choices():
    return Exam.objects.only("id", "name")


def response_filter_choices():
    """What a response-list filter form offers (the response list, the export and the judge-run
    pages): questions, exams, sources, statuses and gold statuses."""
    return {
        "questions": question_choices(),
        "exams": exam_choices(),
        "sources": Response.Source.choices,
        "statuses": Response.Status.choices,
        "gold_statuses": Response.GoldStatus.choices,
    }


def matching_responses(filters):
    """All responses matching the response-list filters (no blind rule: reviewers' pages)."""
    return filter_responses(Response.objects.all(), filters)


RESPONSE_FILTERS = ("source", "level", "question", "exam", "status", "gold_status", "score_min", "score_max", "q")
SCORE_FILTERS = ("gold_status", "score_min", "score_max")  # filters on data blind mode hides

SCORE_LIMIT = Decimal(100000)  # beyond any gold score (7 digits, 2 after the point)


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
        queryset = queryset.filter(_search_condition(params["q"]))
    return _filter_scores(queryset, params, visible)


def _search_condition(text):
    """Student id or transcript containing `text`, or the transcript's math-normalised form
    (annotation.mathtext.search_form: no spaces, backslashes, braces or dollars, lower case)
    containing the query's, so that `ln3` finds `\\ln 3`."""
    condition = Q(student_id__icontains=text) | Q(transcript__icontains=text)
    normalised = search_form(text)
    if normalised:
        condition |= Q(pk__in=Response.objects.alias(searchable=_searchable("transcript"))
                       .filter(searchable__contains=normalised).values("pk"))
    return condition


def _searchable(field):
    expression = Lower(field)
    for dropped in SEARCH_DROPPED:
        expression = Replace(expression, Value(dropped), Value(""), output_field=TextField())
    return expression


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
    if user is not None and is_reviewer(user):
        return None
    if user is None or not user.is_authenticated:
        return Q(pk__isnull=True)  # nothing
    own = Label.objects.filter(response=OuterRef(via[:-2] if via else "pk"), annotator=user, submitted=True)
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


# --- rubric versions ------------------------------------------------------------------------


def rubric_problems(question, *, with_data=False):
    """What the rubric reader cannot read in a question's reference solution, in words.

    With `with_data` (reviewers: it speaks of scores) also where the submitted labels' points on a
    sub-question exceed the full points its markers give.
    """
    labels = [s.label for s in question.sub_questions.all()]
    reading = read_rubric(question.reference_solution, labels, question.full_score)
    problems = list(reading.problems)
    stored = {s.label: s.max_points for s in question.sub_questions.all()}
    missing = [label for label, value in stored.items() if value is None and label in reading.maxima]
    if with_data:
        most = {}
        for sub_scores in Label.objects.filter(response__question=question, submitted=True).values_list(
            "sub_scores", flat=True
        ):
            for key, value in (sub_scores or {}).items():
                try:
                    points = Decimal(str(value))
                except (InvalidOperation, ValueError):
                    continue
                if points.is_finite():
                    label = sub_question_label(str(key))
                    most[label] = max(most.get(label, points), points)
        problems += data_problems(reading, most)
    return {"problems": [describe(p) for p in problems], "unset_maxima": missing, "reading": reading}


def rubric_versions(question):
    """The kept versions of a question's rubric, newest first (one query). A question never
    edited has none: its rubric is version 1, the current one."""
    return list(
        RubricVersion.objects.filter(question=question).select_related("created_by").order_by("-version")
    )


def rubric_version(question, version):
    """One kept version of a question's rubric (RubricVersion.DoesNotExist when there is none)."""
    return RubricVersion.objects.select_related("created_by").get(question=question, version=version)


def question_choices():
    """Questions for a picker: exam name, label and the start of the statement (not the whole)."""

    return (
        Question.objects.select_related("exam").only("id", "location", "external_id", "exam__name")
        .annotate(snippet=Substr("statement", 1, 80)).order_by("exam__name", "location", "id")
    )


# --- exams: the list and one exam's overview --------------------------------------------------

JUDGE_OK = "ok"  # grading.JudgeResult.Status.OK; read through the reverse relation, not an import of grading


def exam_list():
    """Every exam with its numbers of questions and answers (two subqueries, no join fan-out)."""
    questions = Question.objects.filter(exam=OuterRef("pk")).values("exam").annotate(n=Count("id")).values("n")
    responses = Response.objects.filter(question__exam=OuterRef("pk")).values("question__exam").annotate(
        n=Count("id")).values("n")
    return Exam.objects.annotate(n_questions=Coalesce(Subquery(questions), 0),
                                 n_responses=Coalesce(Subquery(responses), 0)).order_by("name")


def exam_question_rows(exam, user) -> list[dict]:
    """One row per question of `exam`, in the question list's order: the question (with the start
    of its statement) and counts. Reviewers get answers, submitted expert labels, answers with a
    gold score and ok judge results; anyone else only answers and their own work (assigned to
    them, submitted by them): nothing that tells of other labels, golds or judges (four grouped
    queries at most, whatever the number of questions)."""
    questions = list(
        exam.questions.only("id", "location", "external_id", "full_score", "kind", "exam_id")
        .annotate(snippet=Substr("statement", 1, 160)).order_by("location", "id")
    )
    answers = Response.objects.filter(question__exam=exam).values("question_id")
    counts = {row["question_id"]: row for row in answers.annotate(
        n_responses=Count("id"), n_golds=Count("id", filter=Q(gold_score__isnull=False)))}
    labels = Label.objects.filter(response__question__exam=exam, submitted=True)
    if is_reviewer(user):
        expert = dict(labels.filter(is_imported=False).values("response__question_id").annotate(n=Count("id"))
                      .values_list("response__question_id", "n"))
        judged = dict(answers.filter(judge_results__status=JUDGE_OK).annotate(n=Count("judge_results"))
                      .values_list("question_id", "n"))
        extra = {pk: {"n_labels": expert.get(pk, 0), "n_judged": judged.get(pk, 0),
                      "n_golds": counts.get(pk, {}).get("n_golds", 0)} for pk in (q.pk for q in questions)}
    else:
        mine = dict(Assignment.objects.filter(response__question__exam=exam, annotator=user)
                    .values("response__question_id").annotate(n=Count("id")).values_list("response__question_id", "n"))
        done = dict(labels.filter(annotator=user).values("response__question_id").annotate(n=Count("id"))
                    .values_list("response__question_id", "n"))
        extra = {pk: {"n_assigned": mine.get(pk, 0), "n_submitted": done.get(pk, 0)} for pk in (q.pk for q in questions)}
    return [{"question": q, "n_responses": counts.get(q.pk, {}).get("n_responses", 0), **extra[q.pk]}
            for q in questions]
