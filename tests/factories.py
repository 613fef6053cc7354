"""Small builders for test data (bulk, so that 1,000s of rows stay fast)."""
from decimal import Decimal

from annotation.models import Annotation, Exam, Question, Response, SubQuestion, content_hash


def make_question(statement="Find x such that $x^2 = 4$.", *, exam_name="Test exam", full_score=10, blind=True, **extra):
    exam, _ = Exam.objects.get_or_create(name=exam_name, defaults={"blind": blind})
    question = Question.objects.create(
        exam=exam,
        statement=statement,
        statement_hash=content_hash(statement),
        reference_solution="(1) x = 2 ------5 points\n(2) x = -2 ------10 points",
        full_score=Decimal(full_score),
        location=extra.pop("location", "T-01"),
        level=extra.pop("level", "low"),
        **extra,
    )
    SubQuestion.objects.create(question=question, label="(1)", order=0, max_points=5)
    SubQuestion.objects.create(question=question, label="(2)", order=1, max_points=5)
    return question


def make_responses(question, n, *, source="human", gold=None, start=0):
    responses = [
        Response(
            question=question,
            source=source,
            student_id=f"{source}-{start + i:06d}",
            transcript=f"Answer {start + i}: $x = {i % 3}$",
            transcript_hash=content_hash(f"Answer {start + i}: $x = {i % 3}$"),
            gold_score=None if gold is None else Decimal(gold),
        )
        for i in range(n)
    ]
    return Response.objects.bulk_create(responses)


def make_imported_gold(responses, total=5):
    return Annotation.objects.bulk_create(
        Annotation(response=r, is_imported=True, total=total, sub_scores={"(1)": total}, submitted=True)
        for r in responses
    )
