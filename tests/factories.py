"""Builders for test data, the one layer every area's tests share (bulk where 1,000s of rows must stay fast).

Judge settings come two ways: `make_setting` goes through the service as a user would (validated,
version 1); `make_stored_setting` saves the row as given (any kind or version, no endpoint), as
imported results and older versions leave it.
"""
import uuid
from decimal import Decimal

from annotation.models import Exam, Label, Question, Response, RubricCheckpoint, SubQuestion, content_hash
from annotation.rubric import parse_checkpoints
from grading.judges import services as judge_services
from grading.models import JudgeResult, JudgeSetting, LlmEndpoint

API_KEY_ENV = "REALMATH_LLM_KEY_TEST"  # tests/judges/conftest.py puts a key here for every judge test


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


def make_checkpoints(question):
    """The checkpoint rows of a question's reference solution, as the importer makes them."""
    subs = {s.label: s for s in question.sub_questions.all()}
    return RubricCheckpoint.objects.bulk_create(
        RubricCheckpoint(question=question, sub_question=subs.get(c.sub_label), order=c.order,
                         cumulative_points=c.cumulative_points, text=c.text, start=c.start, end=c.end)
        for c in parse_checkpoints(question.reference_solution)
    )


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
    return Label.objects.bulk_create(
        Label(response=r, is_imported=True, total=total, sub_scores={"(1)": total}, submitted=True)
        for r in responses
    )


def set_gold(responses, golds):
    for response, gold in zip(responses, golds):
        response.gold_score = None if gold is None else Decimal(str(gold))
        response.gold_status = "imported" if gold is not None else "none"
    type(responses[0]).objects.bulk_update(responses, ["gold_score", "gold_status"])


def make_endpoint(server, **fields):
    """An LLM endpoint at a tests.llm_server.LlmServer."""
    values = {
        "name": f"test-{uuid.uuid4().hex[:8]}",
        "base_url": server.url,
        "api_key_env": API_KEY_ENV,
        "max_concurrency": 8,
        "timeout_seconds": 2.0,
        "max_attempts": 4,
    }
    values.update(fields)
    return LlmEndpoint.objects.create(**values)


def make_setting(endpoint=None, *, name=None, kind=JudgeSetting.Kind.RUBRIC, **fields):
    """A judge setting made through the service, as the settings page makes it."""
    values = {"model": "judge-model", "temperature": 0.0, "max_tokens": 512, "parse_retries": 0}
    values.update(fields)
    return judge_services.create_judge_setting(
        name=name or f"judge-{uuid.uuid4().hex[:6]}", kind=kind, endpoint=endpoint, **values
    )


def make_stored_setting(name="judge-a", kind=JudgeSetting.Kind.EXTERNAL, version=1, **fields):
    """A judge setting row saved as given (no validation, no endpoint needed)."""
    return JudgeSetting.objects.create(name=name, version=version, kind=kind, model=fields.pop("model", "m"), **fields)


def make_results(setting, responses, scores, *, status=JudgeResult.Status.OK, key_prefix="k", **fields):
    """One judge result per (response, score); score None keeps the result without a score."""
    rows = [
        JudgeResult(
            setting=setting, response=response, cache_key=f"{key_prefix}-{response.pk}", status=status,
            score=None if score is None else float(score), rationale=fields.get("rationale", f"rationale {i}"),
            **{k: v for k, v in fields.items() if k != "rationale"},
        )
        for i, (response, score) in enumerate(zip(responses, scores))
    ]
    return JudgeResult.objects.bulk_create(rows)
