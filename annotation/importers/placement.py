"""Which exam a release file's questions go to: one exam per release, whatever is already here.

A question is known by its statement (its hash), and a question already here keeps the exam it
is in. So a release that overlaps what is here (the demo sample holds 2 of the full release's
14 questions) would be split over two exams. Before it writes anything, an import finds the
file's questions already in another exam than the one it was given and does what `overlap` says:

- ``ask`` (the page, the API and ``import_realmath`` by default): nothing is imported; the
  refusal (`ExamOverlap`) names the exams that hold them and the choices below;
- ``join``: import the whole file into the exam that already holds them (one exam only);
- ``move``: import into the given exam and move those questions into it, with their answers,
  labels, judge results and everything else that hangs off a question, at the end of the
  import (in its last transaction: a failed import moves nothing);
- ``keep``: leave them in their exam (their answers in the file join them there), as before.

The import report lists where each question went (`counts["questions"]`).
"""
from dataclasses import dataclass, field

from django.db.models import Count
from django.utils.translation import gettext, gettext_lazy, ngettext

from ..models import Exam, Question, content_hash
from .common import ImportFormatError, iter_json_array

ASK, JOIN, MOVE, KEEP = "ask", "join", "move", "keep"
OVERLAP_CHOICES = [
    (ASK, gettext_lazy("Ask me first: import nothing if some of its questions are already in another exam")),
    (JOIN, gettext_lazy("Import the file into the exam that already holds some of its questions")),
    (MOVE, gettext_lazy("Move those questions into this exam, with their answers, labels and judge results")),
    (KEEP, gettext_lazy("Leave those questions in their exam (their answers in the file join them there)")),
]
OVERLAPS = [value for value, _ in OVERLAP_CHOICES]

# How a question of the file was placed (`counts["questions"][i]["how"]`).
CREATED, HERE, MOVED, ELSEWHERE = "created", "here", "moved", "elsewhere"


class ExamOverlap(ImportFormatError):
    """Some of the file's questions are in other exams and the import was told to ask first.

    `holders` is [(exam, number of the file's questions it holds)], most first; `exam_name` the
    exam the file was given."""

    def __init__(self, message, *, holders, exam_name, questions):
        super().__init__(message)
        self.holders, self.exam_name, self.questions = holders, exam_name, questions


@dataclass
class Placement:
    """Where the file's questions go: `exam_name` for new ones; `moves` {question id: exam id it
    leaves}, moved at the end of the import."""

    exam_name: str
    moves: dict = field(default_factory=dict)


def statement_hashes(stream, file_name):
    """The statement hashes of a release file's records (a pass that writes nothing; the stream
    is left at its start). Fields are checked by the import's own pass."""
    hashes = set()
    for _, record in iter_json_array(stream, file_name):
        statement = record.get("problem_statement")
        if isinstance(statement, str) and statement.strip():
            hashes.add(content_hash(statement))
    stream.seek(0)
    return hashes


def _holders(hashes, exclude_exam):
    """[(exam, n, question ids)] of the exams other than `exclude_exam` holding some of the questions."""
    rows = (Question.objects.filter(statement_hash__in=hashes).exclude(exam_id=getattr(exclude_exam, "pk", None))
            .values("exam_id").annotate(n=Count("id")).order_by("-n", "exam_id"))
    exams = Exam.objects.in_bulk([row["exam_id"] for row in rows])
    return [(exams[row["exam_id"]], row["n"]) for row in rows]


def _names(holders):
    return gettext(", ").join(
        ngettext("“%(exam)s” (%(n)s question)", "“%(exam)s” (%(n)s questions)", n) % {"exam": exam.name, "n": n}
        for exam, n in holders)


def plan(exam_name, overlap, file_hashes):
    """The `Placement` of an import into `exam_name`; `file_hashes()` gives the file's statement
    hashes (read only when some question could be elsewhere). Raises `ExamOverlap` (ask) or
    `ImportFormatError` (a choice that cannot be followed) before anything is written."""
    if overlap not in OVERLAPS:
        raise ImportFormatError(gettext("Unknown choice %(value)s for questions already in another exam; choose one "
                                        "of %(choices)s.") % {"value": repr(overlap), "choices": ", ".join(OVERLAPS)})
    target = Exam.objects.filter(name=exam_name).first()
    others = Question.objects.all() if target is None else Question.objects.exclude(exam=target)
    if overlap == KEEP or not others.exists():
        return Placement(exam_name)
    hashes = file_hashes()
    holders = _holders(hashes, target)
    if not holders:
        return Placement(exam_name)
    elsewhere = sum(n for _, n in holders)
    if overlap == ASK:
        raise ExamOverlap(
            ngettext(
                "%(n)s of the file's %(total)s questions is already in another exam: %(exams)s. Choose what to do "
                "with it: import the file into that exam, move it (with its answers, labels and judge results) "
                "into “%(exam)s”, or leave it where it is.",
                "%(n)s of the file's %(total)s questions are already in other exams: %(exams)s. Choose what to do "
                "with them: import the file into the exam that holds them, move them (with their answers, labels "
                "and judge results) into “%(exam)s”, or leave them where they are.", elsewhere,
            ) % {"n": elsewhere, "total": len(hashes), "exams": _names(holders), "exam": exam_name},
            holders=holders, exam_name=exam_name, questions=len(hashes))
    if overlap == JOIN:
        in_target = target is not None and Question.objects.filter(exam=target, statement_hash__in=hashes).exists()
        if len(holders) > 1 or in_target:
            where = holders + ([(target, Question.objects.filter(exam=target, statement_hash__in=hashes).count())]
                               if in_target else [])
            raise ImportFormatError(gettext(
                "The file's questions are in more than one exam (%(exams)s): there is no one exam to import it "
                "into. Move them into one exam instead.") % {"exams": _names(where)})
        return Placement(holders[0][0].name)
    blind_sources = [exam.name for exam, _ in holders if exam.blind]
    if blind_sources and target is not None and not target.blind:
        raise ImportFormatError(gettext(
            "“%(source)s” is a blind exam and “%(exam)s” is not: moving its questions would show annotators the "
            "scores of their answers. Make “%(exam)s” blind first, or import into another exam.")
            % {"source": blind_sources[0], "exam": exam_name})
    moves = dict(Question.objects.filter(statement_hash__in=hashes).exclude(exam_id=getattr(target, "pk", None))
                 .values_list("id", "exam_id"))
    return Placement(exam_name, moves=moves)


def move_questions(placement, exam):
    """Move the planned questions into `exam` (their answers and all that hangs off them follow)."""
    for question in Question.objects.filter(pk__in=list(placement.moves)):
        question.exam = exam
        question.save(update_fields=["exam"])  # one at a time: the question's history records the move
    return len(placement.moves)
