"""The full JSONL export: everything the tool records, one JSON object per line.

Lines come in dependency order: users, exams, questions (with sub-questions, rubric and the kept
rubric versions),
other apps' global lines (e.g. judge settings), then one line per response with its labels,
step labels, adjudications, assignments and the other apps' sections (transcript revisions and
OCR provenance, judge results, meta-evaluation). Objects refer to each other by natural keys
(username, exam name, question statement hash, ...), never by database ids, so a file imports
into any database. Decimals are written as strings to stay exact.
"""
import json

from django.contrib.auth import get_user_model
from django.db.models import TextField
from django.db.models.functions import Cast

from accounts.roles import user_role

from ..models import Adjudication, Assignment, Exam, Label, Question, Response, StepLabel
from .sections import section_modules

SCHEMA_VERSION = 1


def dec(value):
    return None if value is None else str(value)


def stamp(value):
    return None if value is None else value.isoformat()


def question_line(question):
    return {
        "type": "question",
        "key": question.statement_hash,
        "exam": question.exam.name,
        "statement": question.statement,
        "reference_solution": question.reference_solution,
        "full_score": dec(question.full_score),
        "kind": question.kind,
        "gold_answer": question.gold_answer,
        "location": question.location,
        "question_type": question.question_type,
        "level": question.level,
        "task_description": question.task_description,
        "external_id": question.external_id,
        "choices": question.choices,
        "extra": question.extra,
        "sub_questions": [
            {"label": s.label, "order": s.order, "max_points": dec(s.max_points)} for s in question.sub_questions.all()
        ],
        "checkpoints": [
            {
                "order": c.order,
                "cumulative_points": dec(c.cumulative_points),
                "text": c.text,
                "start": c.start,
                "end": c.end,
                "sub_question": c.sub_question.label if c.sub_question else None,
            }
            for c in question.checkpoints.all()
        ],
        "rubric_version": question.rubric_version,
        "rubric_versions": [
            {"version": v.version, "reference_solution": v.reference_solution, "full_score": dec(v.full_score),
             "checkpoints": v.checkpoints, "sub_questions": v.sub_questions, "note": v.note,
             "created": stamp(v.created)}
            for v in sorted(question.rubric_versions.all(), key=lambda v: v.version)
        ],
    }


STEP_FIELDS = ["start", "end", "quote", "prefix", "suffix", "needs_review", "verdict", "awarded_points", "comment"]
LABEL_FIELDS = ["id", "response_id", "is_imported", "sub_scores", "total", "checkpoint_marks", "override_reason",
                "comment", "transcript_hash", "submitted", "submitted_at", "provenance", "version", "active_seconds",
                "anchoring"]
RESPONSE_FIELDS = ["id", "source", "student_id", "transcript", "generator_model", "generator_temperature",
                   "generator_prompt", "status", "gold_score", "gold_status", "judge_query", "extra", "import_file",
                   "import_index", "version", "created"]


def step_label_line(step):
    return {
        "checkpoint": step["checkpoint__order"],
        "sub_question": step["sub_question__label"],
        "start": step["start"],
        "end": step["end"],
        "quote": step["quote"],
        "prefix": step["prefix"],
        "suffix": step["suffix"],
        "needs_review": step["needs_review"],
        "verdict": step["verdict"],
        "awarded_points": dec(step["awarded_points"]),
        "comment": step["comment"],
    }


def label_line(label, steps, checkpoint_orders):
    return {
        "annotator": label["annotator__username"],
        "is_imported": label["is_imported"],
        "sub_scores": label["sub_scores"],
        "total": dec(label["total"]),
        # checkpoint marks are keyed by checkpoint id in the database; by rubric order here
        "checkpoint_marks": {
            str(checkpoint_orders.get(int(k), k)): v for k, v in (label["checkpoint_marks"] or {}).items()
        },
        "override_reason": label["override_reason"],
        "comment": label["comment"],
        "transcript_hash": label["transcript_hash"],
        "submitted": label["submitted"],
        "submitted_at": stamp(label["submitted_at"]),
        "provenance": label["provenance"],
        "version": label["version"],
        "active_seconds": label["active_seconds"],
        "anchoring": label["anchoring"] or {},
        "step_labels": [step_label_line(step) for step in steps.get(label["id"], [])],
    }


def _rater_key(label):
    if label is None:
        return None
    return "imported" if label["is_imported"] else label["annotator__username"]


def response_line(response, related, checkpoint_orders):
    labels = related["labels"].get(response["id"], [])
    by_id = {a["id"]: a for a in labels}
    return {
        "type": "response",
        "question": response["question__statement_hash"],
        **{f: response[f] for f in RESPONSE_FIELDS[1:-1]},
        "gold_score": dec(response["gold_score"]),
        "created": stamp(response["created"]),
        "annotations": [label_line(a, related["steps"], checkpoint_orders) for a in labels],
        "adjudications": [
            {
                "reviewer": a["reviewer__username"],
                "gold_score": dec(a["gold_score"]),
                "reason": a["reason"],
                "chosen": _rater_key(by_id.get(a["chosen_label_id"])),
                "previous_gold_score": dec(a["previous_gold_score"]),
                "previous_gold_status": a["previous_gold_status"],
                "label_totals": a["label_totals"],
                "sub_scores": a["sub_scores"],
                "created": stamp(a["created"]),
            }
            for a in related["adjudications"].get(response["id"], [])
        ],
        "assignments": [
            {"annotator": a["annotator__username"], "strategy": a["strategy"], "completed_at": stamp(a["completed_at"])}
            for a in related["assignments"].get(response["id"], [])
        ],
    }


def _grouped(rows, key):
    groups = {}
    for row in rows:
        groups.setdefault(row[key], []).append(row)
    return groups


JSON_EMPTY = {"{}": dict, "[]": list, "null": lambda: None}


def json_text(*names):
    """values() expressions reading JSON fields as their text, for decode_json_fields."""
    return {f"{name}__json": Cast(name, TextField()) for name in names}


def decode_json_fields(rows, names):
    """Decode the JSON text of `names` in each row (most are empty: no json.loads for those).

    Django decodes every JSON value of a values() row with json.loads; that alone cost a good
    part of the export's time.
    """
    for row in rows:
        for name in names:
            text = row.pop(f"{name}__json")
            make = JSON_EMPTY.get(text)
            row[name] = None if text is None else make() if make else json.loads(text)
        yield row


def _values(queryset, fields, json_fields=()):
    """Rows of `fields`; JSON fields among them decoded by decode_json_fields."""
    plain = [f for f in fields if f not in json_fields]
    return decode_json_fields(queryset.values(*plain, **json_text(*json_fields)), json_fields)


def _response_chunk(response_queryset, ids):
    """The responses of one chunk as rows, with their labels grouped by owner.

    Plain rows, not model instances: building objects (and a queryset per prefetched
    relation) cost most of the export's time. The chunk is named by a subquery on its id
    range, not by a list of ids that Django would prepare one by one; the range goes on the
    caller's own queryset (its filters), not on a `pk IN (whole selection)` wrapper, which
    SQLite would evaluate over the whole selection for every chunk (quadratic time).
    """
    chunk = response_queryset.filter(pk__gte=ids[0], pk__lte=ids[-1]).order_by().values("pk")
    related = {
        "labels": _grouped(_values(
            Label.objects.filter(response__in=chunk).order_by("response_id", "is_imported", "annotator__username", "id"),
            [*LABEL_FIELDS, "annotator__username"], ("sub_scores", "checkpoint_marks", "provenance", "anchoring"),
        ), "response_id"),
        "steps": _grouped(
            StepLabel.objects.filter(label__response__in=chunk)
            .order_by("label_id", "start", "id")
            .values(*STEP_FIELDS, "label_id", "checkpoint__order", "sub_question__label"),
            "label_id",
        ),
        "adjudications": _grouped(_values(
            Adjudication.objects.filter(response__in=chunk).order_by("response_id", "created", "id"),
            ["response_id", "reviewer__username", "gold_score", "reason", "chosen_label_id", "previous_gold_score",
             "previous_gold_status", "label_totals", "sub_scores", "created"], ("label_totals", "sub_scores"),
        ), "response_id"),
        "assignments": _grouped(
            Assignment.objects.filter(response__in=chunk)
            .order_by("response_id", "annotator__username", "id")
            .values("response_id", "annotator__username", "strategy", "completed_at"),
            "response_id",
        ),
    }
    responses = _values(
        Response.objects.filter(pk__in=chunk).order_by("id"), [*RESPONSE_FIELDS, "question__statement_hash"], ("extra",)
    )
    return responses, related


def _users(selected):
    User = get_user_model()
    ids = selected.values("pk")
    names = set()
    for model, name in ((Label, "annotator__username"), (Adjudication, "reviewer__username"),
                        (Assignment, "annotator__username")):
        names.update(model.objects.filter(response__in=ids).order_by().values_list(name, flat=True).distinct())
    for module in section_modules():
        if hasattr(module, "referenced_usernames"):
            names.update(module.referenced_usernames(ids))
    names.discard(None)
    for user in User.objects.filter(username__in=names).prefetch_related("groups").order_by("username"):
        yield {"type": "user", "username": user.username, "role": user_role(user)}


def _chunks(ids, size=500):
    for start in range(0, len(ids), size):
        yield ids[start : start + size]


def iter_full_lines(response_queryset, *, chunk_size=500, on_progress=None):
    """Yield the export's lines (dicts) for the responses in a queryset, in bounded memory."""
    selected = Response.objects.filter(pk__in=response_queryset.values("pk"))
    response_ids = list(selected.order_by("id").values_list("id", flat=True))
    question_ids = sorted(set(selected.order_by().values_list("question_id", flat=True).distinct()))
    yield from _users(selected)
    for exam in Exam.objects.filter(questions__id__in=question_ids).distinct().order_by("name"):
        yield {"type": "exam", "name": exam.name, "batch_date": stamp(exam.batch_date), "blind": exam.blind,
               "anchoring": exam.anchoring, "anchoring_seed": exam.anchoring_seed,
               "anchoring_setting": exam.anchoring_setting}
    checkpoint_orders = {}
    questions = Question.objects.filter(id__in=question_ids).select_related("exam").prefetch_related(
        "sub_questions", "checkpoints__sub_question", "rubric_versions"
    ).order_by("statement_hash")
    for question in questions:
        checkpoint_orders.update({c.pk: c.order for c in question.checkpoints.all()})
        yield question_line(question)
    modules = section_modules()
    for module in modules:
        if hasattr(module, "export_global"):
            yield from module.export_global(response_ids)
    done = 0
    for ids in _chunks(response_ids, chunk_size):
        extras = {}
        for module in modules:
            if hasattr(module, "export_responses"):
                for response_id, sections in module.export_responses(ids).items():
                    extras.setdefault(response_id, {}).update(sections)
        responses, related = _response_chunk(response_queryset, ids)
        for response in responses:
            line = response_line(response, related, checkpoint_orders)
            line.update(extras.get(response["id"], {}))
            yield line
        done += len(ids)
        if on_progress:
            on_progress(done, len(response_ids))
