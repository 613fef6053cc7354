"""Import of IneqMath records (bound estimation and relation prediction problems)."""
from decimal import Decimal

from django.db import transaction

from ..models import Exam, ImportReport, Question, content_hash
from .common import ImportFormatError, ImportResult, load_json_array, require, sha256_of

KINDS = {"bound": Question.Kind.BOUND, "relation": Question.Kind.RELATION}
EXTERNAL_ID_LENGTH = Question._meta.get_field("external_id").max_length
SPLIT_LENGTH = Exam._meta.get_field("name").max_length - len("IneqMath ")


def validate_record(record, index):
    kind = require(record, index, "type", str)
    if kind not in KINDS:
        raise ImportFormatError(f"record {index}: field 'type' must be 'bound' or 'relation', got {kind!r}.")
    solution = require(record, index, "solution", (str, list), optional=True)
    if isinstance(solution, list) and not all(isinstance(s, str) for s in solution):
        raise ImportFormatError(f"record {index}: field 'solution' must be a string or a list of strings.")
    theorems = require(record, index, "theorems", dict, optional=True) or {}
    choices = require(record, index, "choices", list, optional=True) or []
    if kind == "relation" and not choices:
        raise ImportFormatError(f"record {index}: field 'choices' is required for relation problems.")
    data_id = require(record, index, "data_id", (str, int), max_length=EXTERNAL_ID_LENGTH)
    if isinstance(data_id, int) and not isinstance(data_id, bool) and len(str(data_id)) > EXTERNAL_ID_LENGTH:
        raise ImportFormatError(f"record {index}: field 'data_id' is longer than {EXTERNAL_ID_LENGTH} characters.")
    if isinstance(solution, list) and any("\x00" in s for s in solution):
        raise ImportFormatError(f"record {index}: field 'solution' holds a NUL character.")
    return {
        "data_id": str(data_id),
        "problem": require(record, index, "problem", str, allow_empty=False),
        "type": kind,
        # the exam is named "IneqMath <split>"
        "data_split": require(record, index, "data_split", str, optional=True, max_length=SPLIT_LENGTH) or "",
        "answer": require(record, index, "answer", str, optional=True) or "",
        "solution": solution,
        "theorems": theorems,
        "choices": choices,
        "difficulty": record.get("difficulty", ""),
    }


def import_ineqmath(raw, file_name, *, exam_name=None, user=None, on_progress=None, writer=None):
    """Import IneqMath problems as questions; idempotent by problem text; all or nothing (every
    record is validated before anything is written; with a `writer`, a background job on
    SQLite, in short transactions the writer undoes if the import fails)."""
    records = load_json_array(raw, file_name)
    cleaned_records = [validate_record(record, index) for index, record in enumerate(records)]
    if writer is None:
        with transaction.atomic():
            return _import(raw, file_name, records, cleaned_records, exam_name, user, on_progress, lambda: None)
    return _import(raw, file_name, records, cleaned_records, exam_name, user, on_progress, writer.step)


def _import(raw, file_name, records, cleaned_records, exam_name, user, on_progress, step):
    result = ImportResult(kind="ineqmath", file_name=file_name, sha256=sha256_of(raw))
    step()
    existing = set(
        Question.objects.filter(
            statement_hash__in=[content_hash(c["problem"]) for c in cleaned_records]
        ).values_list("statement_hash", flat=True)
    )
    for cleaned in cleaned_records:
        step()
        statement_hash = content_hash(cleaned["problem"])
        if statement_hash in existing:
            result.count("questions_skipped")
            continue
        existing.add(statement_hash)
        split = cleaned["data_split"] or "unsplit"
        exam, _ = Exam.objects.get_or_create(name=exam_name or f"IneqMath {split}")
        solution = cleaned["solution"]
        Question.objects.create(
            exam=exam,
            statement=cleaned["problem"],
            statement_hash=statement_hash,
            reference_solution="\n\n".join(solution) if isinstance(solution, list) else (solution or ""),
            full_score=Decimal(1),
            kind=KINDS[cleaned["type"]],
            gold_answer=cleaned["answer"],
            external_id=cleaned["data_id"],
            choices=cleaned["choices"],
            extra={
                "dataset": "ineqmath",
                "data_split": cleaned["data_split"],
                "solution": solution,
                "theorems": cleaned["theorems"],
                "difficulty": cleaned["difficulty"],
            },
        )
        result.count("questions_created")
    if on_progress:
        on_progress(len(records), len(records))
    result.counts.setdefault("questions_created", 0)
    result.counts.setdefault("questions_skipped", 0)
    result.counts["records"] = len(records)
    step()
    report = ImportReport.objects.create(
        kind=result.kind, file_name=file_name, file_sha256=result.sha256, created_by=user, counts=result.counts
    )
    result.report_id = report.pk
    return result
