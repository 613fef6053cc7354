"""Import of the RealMath-Eval release format (a JSON array of judge-ready records)."""
import re

from django.db import transaction
from django.utils import timezone
from simple_history.utils import bulk_create_with_history

from ..models import Annotation, Exam, ImportReport, Question, Response, RubricCheckpoint, SubQuestion, content_hash
from ..rubric import parse_checkpoints, sub_question_label, sub_question_maxima
from .common import ImportFormatError, ImportResult, load_json_array, number_type, require, sha256_of, to_decimal

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


def validate_record(record, index):
    """Check one record's fields and types; return the cleaned values."""
    sub_scores = require(record, index, "sub_question_scores", dict)
    for key, value in sub_scores.items():
        if isinstance(value, bool) or not isinstance(value, NUMBER):
            raise ImportFormatError(
                f"record {index}: field 'sub_question_scores' entry '{key}' must be a number, got {value!r}."
            )
        to_decimal(value, index, f"sub_question_scores.{key}")
    cleaned = {
        "student_response": require(record, index, "student_response", str),
        "sub_question_scores": sub_scores,
        "gt": require(record, index, "gt", NUMBER),
        "reference_answer": require(record, index, "reference_answer", str),
        "problem_statement": require(record, index, "problem_statement", str, allow_empty=False),
        "student_id": require(record, index, "student_id", str, allow_empty=False),
        "full_score": require(record, index, "full_score", NUMBER),
        "question_location": require(record, index, "question_location", str, optional=True) or "",
        "question_type": require(record, index, "question_type", str, optional=True) or "",
        "question_level": require(record, index, "question_level", str, optional=True) or "",
        "query": require(record, index, "query", str, optional=True) or "",
        "task_description": require(record, index, "task_description", str, optional=True) or "",
        "source": require(record, index, "source", str, optional=True),
        "tag": require(record, index, "tag", list, optional=True),
    }
    cleaned["gt_decimal"] = to_decimal(cleaned["gt"], index, "gt")
    cleaned["full_score_decimal"] = to_decimal(cleaned["full_score"], index, "full_score")
    if cleaned["full_score_decimal"] <= 0:
        raise ImportFormatError(f"record {index}: field 'full_score' must be positive, got {cleaned['full_score']!r}.")
    if cleaned["question_level"] not in ("", "low", "high"):
        raise ImportFormatError(
            f"record {index}: field 'question_level' must be 'low' or 'high', got {cleaned['question_level']!r}."
        )
    return cleaned


def _record_warnings(cleaned, index):
    problems = []
    total = sum(to_decimal(v, index, "sub_question_scores") for v in cleaned["sub_question_scores"].values())
    if cleaned["sub_question_scores"] and total != cleaned["gt_decimal"]:
        problems.append(f"sub-question scores sum to {total}, gt is {cleaned['gt']}")
    if cleaned["gt_decimal"] > cleaned["full_score_decimal"]:
        problems.append(f"gt {cleaned['gt']} exceeds the full score {cleaned['full_score']}")
    if cleaned["gt_decimal"] < 0:
        problems.append(f"gt {cleaned['gt']} is negative")
    return problems


def _create_question(exam, cleaned, statement_hash):
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
    parsed = parse_checkpoints(question.reference_solution)
    maxima = sub_question_maxima(parsed)
    labels = list(dict.fromkeys([c.sub_label for c in parsed if c.sub_label]))
    for key in cleaned["sub_question_scores"]:
        label = sub_question_label(key)
        if label not in labels:
            labels.append(label)
    subs = {
        label: SubQuestion.objects.create(question=question, label=label, order=order, max_points=maxima.get(label))
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
        for c in parsed
    )
    return question


def _ensure_sub_questions(question, keys, known):
    for key in keys:
        label = sub_question_label(key)
        if label not in known[question.pk]:
            order = len(known[question.pk])
            SubQuestion.objects.create(question=question, label=label, order=order)
            known[question.pk].add(label)


@transaction.atomic
def import_realmath(raw, file_name, *, exam_name="RealMath-Eval", user=None):
    """Import a release-format file given as bytes. Idempotent; all or nothing."""
    records = load_json_array(raw, file_name)
    cleaned_records = [validate_record(record, index) for index, record in enumerate(records)]
    result = ImportResult(kind="realmath", file_name=file_name, sha256=sha256_of(raw))
    exam, _ = Exam.objects.get_or_create(name=exam_name)

    questions = {}
    hashes = {content_hash(c["problem_statement"]) for c in cleaned_records}
    for question in Question.objects.filter(statement_hash__in=hashes):
        questions[question.statement_hash] = question
    known_labels = {}
    for sub in SubQuestion.objects.filter(question__statement_hash__in=hashes):
        known_labels.setdefault(sub.question_id, set()).add(sub.label)

    existing = set(
        Response.objects.filter(question__statement_hash__in=hashes).values_list(
            "question_id", "student_id", "transcript_hash"
        )
    )
    new_responses, gold_rows = [], []
    for index, cleaned in enumerate(cleaned_records):
        statement_hash = content_hash(cleaned["problem_statement"])
        question = questions.get(statement_hash)
        if question is None:
            question = questions[statement_hash] = _create_question(exam, cleaned, statement_hash)
            known_labels[question.pk] = set(question.sub_questions.values_list("label", flat=True))
            result.count("questions_created")
        _ensure_sub_questions(question, cleaned["sub_question_scores"], known_labels)

        transcript_hash = content_hash(cleaned["student_response"])
        key = (question.pk, cleaned["student_id"], transcript_hash)
        if key in existing:
            result.count("responses_skipped")
            continue
        existing.add(key)
        for problem in _record_warnings(cleaned, index):
            result.warnings.append({"index": index, "student_id": cleaned["student_id"], "problem": problem})
        source, model, temperature = parse_student_id(cleaned["student_id"])
        new_responses.append(
            Response(
                question=question,
                source=source,
                student_id=cleaned["student_id"],
                transcript=cleaned["student_response"],
                transcript_hash=transcript_hash,
                generator_model=model,
                generator_temperature=temperature,
                status=Response.Status.LABELLED,
                gold_score=cleaned["gt_decimal"],
                gold_status=Response.GoldStatus.IMPORTED,
                judge_query=cleaned["query"],
                extra=_release_extra(cleaned),
                import_file=file_name,
                import_index=index,
            )
        )
        gold_rows.append((index, cleaned))
    created = bulk_create_with_history(new_responses, Response, batch_size=1000)
    if any(r.pk is None for r in created):  # backends that return no keys on bulk insert
        created = list(Response.objects.filter(import_file=file_name, import_index__isnull=False).order_by("id"))[
            -len(new_responses) :
        ]
    now = timezone.now()
    annotations = [
        Annotation(
            response=response,
            annotator=None,
            is_imported=True,
            sub_scores={sub_question_label(k): v for k, v in cleaned["sub_question_scores"].items()},
            total=cleaned["gt_decimal"],
            submitted=True,
            submitted_at=now,
            provenance={"file": file_name, "record_index": index, "sha256": result.sha256},
        )
        for response, (index, cleaned) in zip(created, gold_rows)
    ]
    bulk_create_with_history(annotations, Annotation, batch_size=1000)
    result.count("responses_created", len(created))
    result.counts.setdefault("questions_created", 0)
    result.counts.setdefault("responses_skipped", 0)
    result.counts["records"] = len(records)
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

