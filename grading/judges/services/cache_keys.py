"""What a judge is shown about a response (`judge_input`) and the cache key a result is claimed
by: the setting version, that input's fingerprint and the question's rubric version."""
from __future__ import annotations

import hashlib

from annotation.models import Response

from ...models import JudgeSetting
from ..kinds import JudgeInput, JudgeSpec


def judge_input(response: Response) -> JudgeInput:
    question = response.question
    return JudgeInput(
        response_id=response.pk,
        problem=question.statement,
        reference=question.reference_solution,
        response=response.transcript,
        full_score=float(question.full_score),
        question_kind=question.kind,
        gold_answer=question.gold_answer,
        choices=tuple(str(c) for c in (question.choices or [])),
        judge_query=response.judge_query,
        sub_questions=tuple(
            (sub.label, None if sub.max_points is None else float(sub.max_points))
            for sub in sorted(question.sub_questions.all(), key=lambda sub: (sub.order, sub.pk))
        ) if question.kind == question.Kind.RUBRIC else (),
        rubric_version=question.rubric_version,
    )


def cache_key(setting: JudgeSetting, fingerprint: str, rubric_version: int | None = None) -> str:
    """Hash of (setting version, everything the judge is shown about the response, and the
    question's rubric version once its rubric has been edited). Version 1 adds nothing, so the
    keys of questions never edited are those made before rubrics had versions; an edit always
    changes the key (even for a prompt that does not show the reference), so a re-judge calls."""
    digest = hashlib.sha256(f"{setting.pk}:{setting.name}:{setting.version}\n".encode())
    if rubric_version and rubric_version > 1:
        digest.update(f"rubric-version:{rubric_version}\n".encode())
    digest.update(fingerprint.encode("utf-8"))
    return digest.hexdigest()


def input_cache_key(setting: JudgeSetting, kind, spec: JudgeSpec, the_input: JudgeInput) -> str:
    """The cache key of one judge input under a setting (what runs claim results by)."""
    return cache_key(setting, kind.fingerprint(spec, the_input), the_input.rubric_version)
