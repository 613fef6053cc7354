"""Import of the RealMath-Eval release format (a JSON array of judge-ready records)."""
import re

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from ..models import Exam, ImportReport, Label, Question, Response, RubricCheckpoint, SubQuestion, content_hash
from ..rubric import data_problems, describe, read_rubric, sub_question_label
from . import placement as placing
from .bulk import HistoryInserter
from .common import (
    ImportFormatError,
    ImportResult,
    as_stream,
    field_problem,
    iter_json_array,
    number_type,
    require,
    sha256_of,
    stream_size,
    to_decimal,
)

HUMAN_ID = re.compile(r"^[0-9a-f]{16,64}$")
SYNTHETIC_ID = re.compile(r"^(?P<model>.+?)_t_(?P<temperature>\d+(?:\.\d+)?)_(?P<sample>[0-9_]+)$")
NUMBER = (int, float)


def parse_student_id(student_id):
    """Source and generator of a response from its student id.

    Returns (source, model, temperature); human ids are hashes, synthetic ones
    read ``<model>_t_<temperature>_<n>``.
    """
    match = SYNTHETIC_ID.match(student_id)
    if match and not HUMAN_ID.match(student_id):
        return Response.Source.SYNTHETIC, match["model"], float(match["temperature"])
    return Response.Source.HUMAN, "", None


# Where each text field of a record goes: its column's length (None: a text column).
TEXT_COLUMNS = {
    "student_response": None, "reference_answer": None, "problem_statement": None, "query": None,
    "task_description": None, "source": None, "question_level": None,
    "student_id": Response._meta.get_field("student_id").max_length,
    "question_location": Question._meta.get_field("location").max_length,
    "question_type": Question._meta.get_field("question_type").max_length,
}
LABEL_LENGTH = SubQuestion._meta.get_field("label").max_length


def _text_of(record, index):
    def text(name, **options):
        return require(record, index, name, str, max_length=TEXT_COLUMNS[name], **options)
    return text


def validate_record(record, index):
    """Check one record's fields and types; return the cleaned values."""
    sub_scores = require(record, index, "sub_question_scores", dict)
    for key, value in sub_scores.items():
        if isinstance(value, bool) or not isinstance(value, NUMBER):
            raise ImportFormatError(
                gettext("record %(index)s: field 'sub_question_scores' entry '%(key)s' must be a number, got %(value)s.")
                % {"index": index, "key": key, "value": repr(value)}
            )
        if to_decimal(value, index, f"sub_question_scores.{key}") < 0:
            raise ImportFormatError(field_problem(index, f"sub_question_scores.{key[:40]}", gettext(
                "is %(value)s: a score cannot be negative") % {"value": value}))
        if len(sub_question_label(key)) > LABEL_LENGTH or "\x00" in key:
            raise ImportFormatError(
                gettext("record %(index)s: field 'sub_question_scores' entry '%(key)s' is not a sub-question label "
                        "(at most %(max)s characters).") % {"index": index, "key": key[:40], "max": LABEL_LENGTH}
            )
    text = _text_of(record, index)
    cleaned = {
        "student_response": text("student_response"),
        "sub_question_scores": sub_scores,
        "gt": require(record, index, "gt", NUMBER),
        "reference_answer": text("reference_answer"),
        "problem_statement": text("problem_statement", allow_empty=False),
        "student_id": text("student_id", allow_empty=False),
        "full_score": require(record, index, "full_score", NUMBER),
        "question_location": text("question_location", optional=True) or "",
        "question_type": text("question_type", optional=True) or "",
        "question_level": text("question_level", optional=True) or "",
        "query": text("query", optional=True) or "",
        "task_description": text("task_description", optional=True) or "",
        "source": text("source", optional=True),
        "tag": require(record, index, "tag", list, optional=True),
    }
    cleaned["gt_decimal"] = to_decimal(cleaned["gt"], index, "gt")
    if cleaned["gt_decimal"] < 0:  # a gold below zero poisons every metric; above the full score is reported
        raise ImportFormatError(field_problem(index, "gt", gettext("is %(value)s: a score cannot be negative")
                                              % {"value": cleaned["gt"]}))
    cleaned["full_score_decimal"] = to_decimal(cleaned["full_score"], index, "full_score")
    if cleaned["full_score_decimal"] <= 0:
        raise ImportFormatError(field_problem(index, "full_score", gettext("must be positive, got %(value)s")
                                              % {"value": repr(cleaned["full_score"])}))
    if cleaned["question_level"] not in ("", "low", "high"):
        raise ImportFormatError(field_problem(index, "question_level", gettext("must be 'low' or 'high', got %(value)s")
                                              % {"value": repr(cleaned["question_level"])}))
    return cleaned


def _record_warnings(cleaned, index):
    problems = []
    total = sum(to_decimal(v, index, "sub_question_scores") for v in cleaned["sub_question_scores"].values())
    if cleaned["sub_question_scores"] and total != cleaned["gt_decimal"]:
        problems.append(gettext("sub-question scores sum to %(total)s, gt is %(gt)s") % {"total": total, "gt": cleaned["gt"]})
    if cleaned["gt_decimal"] > cleaned["full_score_decimal"]:
        problems.append(gettext("gt %(gt)s exceeds the full score %(full)s") % {"gt": cleaned["gt"],
                                                                                "full": cleaned["full_score"]})
    return problems


def _create_question(exam, cleaned, statement_hash):
    """A new question with the rubric read from its reference solution; returns (question, reading).

    The record's score keys say which sub-questions exist (annotation/rubric.py).
    """
    question = Question.objects.create(
        exam=exam,
        statement=cleaned["problem_statement"],
        statement_hash=statement_hash,
        reference_solution=cleaned["reference_answer"],
        full_score=cleaned["full_score_decimal"],
        kind=Question.Kind.RUBRIC,
        location=cleaned["question_location"],
        question_type=cleaned["question_type"],
        level=cleaned["question_level"],
        task_description=cleaned["task_description"],
    )
    reading = read_rubric(question.reference_solution, list(cleaned["sub_question_scores"]), question.full_score)
    labels = list(reading.labels)
    for key in cleaned["sub_question_scores"]:
        label = sub_question_label(key)
        if label not in labels:
            labels.append(label)
    subs = {
        label: SubQuestion.objects.create(question=question, label=label, order=order,
                                          max_points=reading.maxima.get(label))
        for order, label in enumerate(labels)
    }
    RubricCheckpoint.objects.bulk_create(
        RubricCheckpoint(
            question=question,
            sub_question=subs.get(c.sub_label),
            order=c.order,
            cumulative_points=c.cumulative_points,
            text=c.text,
            start=c.start,
            end=c.end,
        )
        for c in reading.checkpoints
    )
    return question, reading


def _ensure_sub_questions(question, keys, known):
    for key in keys:
        label = sub_question_label(key)
        if label not in known[question.pk]:
            order = len(known[question.pk])
            SubQuestion.objects.create(question=question, label=label, order=order)
            known[question.pk].add(label)


BATCH = 2000
# In a job each batch of records is a step of its writer (write_windows.py): on SQLite a transaction is
# committed after a step once IMPORT_BATCH_SECONDS have passed, so a step must be shorter than that.
JOB_BATCH = 25


class _ImportSteps:
    """State of one import across its steps: questions by statement hash, their sub-question labels."""

    def __init__(self, exam, result, file_name, user, placement=None):
        self.exam, self.result, self.file_name, self.user = exam, result, file_name, user
        self.moves = placement.moves if placement is not None else {}
        self.questions, self.known_labels, self.placed = {}, {}, {}
        self.readings, self.most_points = {}, {}  # questions made by this import: rubric read, data seen
        self.responses, self.gold_labels = HistoryInserter(Response), HistoryInserter(Label)

    def load_questions(self, cleaned_records):
        hashes = {content_hash(c["problem_statement"]) for c in cleaned_records} - set(self.questions)
        if not hashes:
            return
        for question in Question.objects.filter(statement_hash__in=hashes):
            self.questions[question.statement_hash] = question
            self.known_labels.setdefault(question.pk, set())
        for question_id, label in SubQuestion.objects.filter(question__statement_hash__in=hashes).values_list(
            "question_id", "label"
        ):
            self.known_labels[question_id].add(label)

    def question_for(self, cleaned, statement_hash):
        question = self.questions.get(statement_hash)
        if question is None:
            question, reading = _create_question(self.exam, cleaned, statement_hash)
            self.questions[statement_hash], self.readings[question.pk] = question, reading
            self.known_labels[question.pk] = set(question.sub_questions.values_list("label", flat=True))
            self.result.count("questions_created")
            self.placed[question.pk] = (question, placing.CREATED)
        elif question.pk not in self.placed:
            how = (placing.HERE if question.exam_id == self.exam.pk
                   else placing.MOVED if question.pk in self.moves else placing.ELSEWHERE)
            self.placed[question.pk] = (question, how)
        _ensure_sub_questions(question, cleaned["sub_question_scores"], self.known_labels)
        return question

    def note_points(self, question_id, cleaned):
        if question_id in self.readings:
            most = self.most_points.setdefault(question_id, {})
            for key, value in cleaned["sub_question_scores"].items():
                label = sub_question_label(key)
                most[label] = max(most.get(label, value), value)

    def rubric_warnings(self):
        """What the rubric reader could not read in the questions this import made, and where the
        data contradicts what it read: one warning per question and problem."""
        warnings = []
        for question in self.questions.values():
            reading = self.readings.get(question.pk)
            if reading is None:
                continue
            for problem in reading.problems + data_problems(reading, self.most_points.get(question.pk, {})):
                warnings.append({"question_id": question.pk, "location": question.location, "rubric": True,
                                 "problem": describe(problem)})
        return warnings

    def existing_keys(self, keyed):
        """Keys (question, student, transcript hash) of this batch already in the database: one query."""
        if not keyed:
            return set()
        # By transcript hash (indexed, nearly unique): by question it would read every response of
        # the batch's questions, a scan that grows with the data.
        found = Response.objects.filter(transcript_hash__in={k[2] for k in keyed}).values_list(
            "question_id", "student_id", "transcript_hash"
        )
        return set(found) & set(keyed)

    def add(self, start, cleaned_records):
        self.load_questions(cleaned_records)
        keyed, exam_of = [], {}
        for cleaned in cleaned_records:
            question = self.question_for(cleaned, content_hash(cleaned["problem_statement"]))
            exam_of[question.pk] = self.exam.pk if question.pk in self.moves else question.exam_id
            keyed.append((question.pk, cleaned["student_id"], content_hash(cleaned["student_response"])))
        existing = self.existing_keys(keyed)
        responses, golds = [], []
        for offset, (cleaned, key) in enumerate(zip(cleaned_records, keyed)):
            index = start + offset
            if key in existing:  # in the database, or earlier in this file
                self.result.count("responses_skipped")
                self.result.count("labels_skipped")  # its gold, already there as an imported label
                self.result.count_in("skipped_by_exam", exam_of[key[0]])
                continue
            existing.add(key)
            self.note_points(key[0], cleaned)
            for problem in _record_warnings(cleaned, index):
                self.result.warnings.append({"index": index, "student_id": cleaned["student_id"], "problem": problem})
            source, model, temperature = parse_student_id(cleaned["student_id"])
            responses.append({
                "question_id": key[0], "source": source, "student_id": cleaned["student_id"],
                "transcript": cleaned["student_response"], "transcript_hash": key[2], "generator_model": model,
                "generator_temperature": temperature, "status": Response.Status.LABELLED,
                "gold_score": cleaned["gt_decimal"], "gold_status": Response.GoldStatus.IMPORTED,
                "judge_query": cleaned["query"], "extra": _release_extra(cleaned), "import_file": self.file_name,
                "import_index": index,
            })
            golds.append((index, cleaned))
        now = timezone.now()
        response_ids = self.responses.insert(responses, now, user=self.user)
        self.gold_labels.insert([
            {
                "response_id": response_id, "annotator_id": None, "is_imported": True,
                "sub_scores": {sub_question_label(k): v for k, v in cleaned["sub_question_scores"].items()},
                "total": cleaned["gt_decimal"], "submitted": True, "submitted_at": now,
                "provenance": {"file": self.file_name, "record_index": index, "sha256": self.result.sha256},
            }
            for response_id, (index, cleaned) in zip(response_ids, golds)
        ], now, user=self.user)
        self.result.count("responses_created", len(response_ids))
        self.result.count("labels_created", len(response_ids))  # each record's gold, as an imported label


def import_realmath(raw, file_name, *, exam_name="RealMath-Eval", overlap=placing.KEEP, user=None, on_progress=None,
                    writer=None):
    """Import a release-format file given as bytes. Idempotent; all or nothing.

    `overlap` says what to do with the file's questions already in another exam than
    `exam_name` (`annotation.importers.placement`: ask, join, move, keep); it is decided
    before anything is written.

    `raw` is bytes or a binary file; a file is read in blocks, so memory holds a batch of records,
    not the file. Records are validated and written in steps inside one transaction: a bad
    record anywhere rolls back everything before it, with the same message naming the record
    and field. With a `writer` (a background job on SQLite, `annotation.importers.write_windows`)
    every record is validated first, then the steps are written in short transactions that
    the writer undoes if the import fails.
    """
    stream = as_stream(raw)
    if writer is None:
        with transaction.atomic():
            placement = placing.plan(exam_name, overlap, lambda: placing.statement_hashes(stream, file_name))
            return _import(stream, file_name, placement, user, on_progress, writer)
    hashes = set()
    for index, record in iter_json_array(stream, file_name):  # a first pass: nothing is written
        hashes.add(content_hash(validate_record(record, index)["problem_statement"]))
    stream.seek(0)
    placement = placing.plan(exam_name, overlap, lambda: hashes)
    return _import(stream, file_name, placement, user, on_progress, writer)


def _placement_rows(steps):
    """Where each question of the file went, in the order of their locations (the report's list)."""
    rows = []
    for question, how in sorted(steps.placed.values(), key=lambda qh: (qh[0].location, qh[0].pk)):
        row = {"id": question.pk, "location": question.location, "how": how,
               "exam": steps.exam.pk if how == placing.MOVED else question.exam_id}
        if how == placing.MOVED:
            row["from"] = steps.moves[question.pk]
        rows.append(row)
    return rows


def _import(stream, file_name, placement, user, on_progress, writer):
    step = writer.step if writer is not None else lambda: None
    size_of_batch = BATCH if writer is None else JOB_BATCH
    result = ImportResult(kind="realmath", file_name=file_name, sha256=sha256_of(stream))
    size = stream_size(stream)
    step()
    exam, _ = Exam.objects.get_or_create(name=placement.exam_name)
    steps = _ImportSteps(exam, result, file_name, user, placement)
    chunk, count = [], 0
    for index, record in iter_json_array(stream, file_name):
        chunk.append(validate_record(record, index))
        count = index + 1
        if len(chunk) == size_of_batch:
            step()
            steps.add(count - len(chunk), chunk)
            chunk = []
            if on_progress:  # records are not counted ahead: progress goes by bytes read
                on_progress(stream.tell(), size)
    step()
    if chunk:
        steps.add(count - len(chunk), chunk)
    if on_progress:
        on_progress(size, size)
    # The planned moves, in the import's last transaction: a failed import moves nothing.
    moved = placing.move_questions(placement, exam)
    if moved:
        result.count("questions_moved", moved)
    result.counts["questions"] = _placement_rows(steps)  # where each question went (not a count)
    for key in ("questions_created", "responses_created", "responses_skipped", "labels_created", "labels_skipped"):
        result.counts.setdefault(key, 0)
    result.counts["records"] = count
    result.warnings[:0] = steps.rubric_warnings()
    result.counts["exam_id"] = exam.pk  # the exam the file was imported into (not a count: not shown as one)
    report = ImportReport.objects.create(
        kind=result.kind,
        file_name=file_name,
        file_sha256=result.sha256,
        created_by=user,
        counts=result.counts,
        warnings=result.warnings,
    )
    result.report_id = report.pk
    return result


def _release_extra(cleaned):
    """Record fields that have no column, and the number types, so an export can write them back."""
    return {
        "source": cleaned["source"],
        "tag": cleaned["tag"],
        "task_description": cleaned["task_description"],
        "sub_score_keys": list(cleaned["sub_question_scores"]),
        "number_types": {
            "gt": number_type(cleaned["gt"]),
            "full_score": number_type(cleaned["full_score"]),
            "sub_question_scores": {k: number_type(v) for k, v in cleaned["sub_question_scores"].items()},
        },
    }

