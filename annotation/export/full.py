"""The full JSONL export: everything the tool records, one JSON object per line.

Lines come in dependency order: users, exams, questions (with sub-questions and rubric),
other apps' global lines (e.g. judge settings), then one line per response with its labels,
step labels, adjudications, assignments and the other apps' sections (transcript revisions and
OCR provenance, judge results, meta-evaluation). Objects refer to each other by natural keys
(username, exam name, question statement hash, ...), never by database ids, so a file imports
into any database. Decimals are written as strings to stay exact.
"""
from django.contrib.auth import get_user_model
from django.db.models import Prefetch

from accounts.roles import user_role

from ..models import Adjudication, Annotation, Assignment, Exam, Question, Response, StepLabel
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
    }


def _username(user):
    return user.username if user else None


def step_label_line(step):
    return {
        "checkpoint": step.checkpoint.order if step.checkpoint else None,
        "sub_question": step.sub_question.label if step.sub_question else None,
        "start": step.start,
        "end": step.end,
        "quote": step.quote,
        "verdict": step.verdict,
        "awarded_points": dec(step.awarded_points),
        "comment": step.comment,
    }


def annotation_line(annotation, checkpoint_orders):
    return {
        "annotator": _username(annotation.annotator),
        "is_imported": annotation.is_imported,
        "sub_scores": annotation.sub_scores,
        "total": dec(annotation.total),
        # checkpoint marks are keyed by checkpoint id in the database; by rubric order here
        "checkpoint_marks": {
            str(checkpoint_orders.get(int(k), k)): v for k, v in (annotation.checkpoint_marks or {}).items()
        },
        "override_reason": annotation.override_reason,
        "comment": annotation.comment,
        "transcript_hash": annotation.transcript_hash,
        "submitted": annotation.submitted,
        "submitted_at": stamp(annotation.submitted_at),
        "provenance": annotation.provenance,
        "version": annotation.version,
        "step_labels": [step_label_line(s) for s in annotation.exported_steps],
    }


def _rater_key(annotation):
    if annotation is None:
        return None
    return "imported" if annotation.is_imported else _username(annotation.annotator)


def response_line(response, checkpoint_orders):
    annotations = response.exported_annotations
    by_id = {a.pk: a for a in annotations}
    return {
        "type": "response",
        "question": response.question.statement_hash,
        "source": response.source,
        "student_id": response.student_id,
        "transcript": response.transcript,
        "generator_model": response.generator_model,
        "generator_temperature": response.generator_temperature,
        "generator_prompt": response.generator_prompt,
        "status": response.status,
        "gold_score": dec(response.gold_score),
        "gold_status": response.gold_status,
        "judge_query": response.judge_query,
        "extra": response.extra,
        "import_file": response.import_file,
        "import_index": response.import_index,
        "version": response.version,
        "created": stamp(response.created),
        "annotations": [annotation_line(a, checkpoint_orders) for a in annotations],
        "adjudications": [
            {
                "reviewer": _username(a.reviewer),
                "gold_score": dec(a.gold_score),
                "reason": a.reason,
                "chosen": _rater_key(by_id.get(a.chosen_annotation_id)),
                "previous_gold_score": dec(a.previous_gold_score),
                "previous_gold_status": a.previous_gold_status,
                "label_totals": a.label_totals,
                "created": stamp(a.created),
            }
            for a in response.exported_adjudications
        ],
        "assignments": [
            {"annotator": _username(a.annotator), "strategy": a.strategy, "completed_at": stamp(a.completed_at)}
            for a in response.exported_assignments
        ],
    }


def _response_chunk(ids):
    # Prefetches land in plain lists (to_attr): Django would otherwise build a queryset per object.
    return (
        Response.objects.filter(id__in=ids)
        .select_related("question")
        .prefetch_related(
            Prefetch(
                "annotations",
                queryset=Annotation.objects.select_related("annotator").prefetch_related(
                    Prefetch(
                        "step_labels", queryset=StepLabel.objects.select_related("checkpoint", "sub_question"),
                        to_attr="exported_steps",
                    )
                ).order_by("is_imported", "annotator__username", "id"),
                to_attr="exported_annotations",
            ),
            Prefetch(
                "adjudications", queryset=Adjudication.objects.select_related("reviewer").order_by("created", "id"),
                to_attr="exported_adjudications",
            ),
            Prefetch(
                "assignments", queryset=Assignment.objects.select_related("annotator").order_by("annotator__username", "id"),
                to_attr="exported_assignments",
            ),
        )
        .order_by("id")
    )


def _users(response_ids):
    User = get_user_model()
    names = set()
    for ids in _chunks(response_ids):
        names.update(Annotation.objects.filter(response_id__in=ids, annotator__isnull=False).values_list("annotator__username", flat=True))
        names.update(Adjudication.objects.filter(response_id__in=ids).values_list("reviewer__username", flat=True))
        names.update(Assignment.objects.filter(response_id__in=ids, annotator__isnull=False).values_list("annotator__username", flat=True))
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
    response_ids = list(response_queryset.order_by("id").values_list("id", flat=True))
    question_ids = sorted(set(Response.objects.filter(id__in=response_ids).values_list("question_id", flat=True)))
    yield from _users(response_ids)
    for exam in Exam.objects.filter(questions__id__in=question_ids).distinct().order_by("name"):
        yield {"type": "exam", "name": exam.name, "batch_date": stamp(exam.batch_date), "blind": exam.blind}
    checkpoint_orders = {}
    questions = Question.objects.filter(id__in=question_ids).select_related("exam").prefetch_related(
        "sub_questions", "checkpoints__sub_question"
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
        for response in _response_chunk(ids):
            line = response_line(response, checkpoint_orders)
            line.update(extras.get(response.pk, {}))
            yield line
        done += len(ids)
        if on_progress:
            on_progress(done, len(response_ids))
