"""Judge results produced elsewhere: read a file of records and attach them to responses.

The results belong to an *external* setting (kind ``external``; it cannot be run). Used by the
``import_judge_results`` command and by the meta-evaluation label import (grading.review.services).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone

from annotation.models import Question, Response, content_hash
from core.json_guard import loads

from ..models import JudgeResult, JudgeSetting
from .parsing import OK as PARSE_OK
from .parsing import parse_score
from .services import cache_key


class ImportRefused(ValueError):
    """The file cannot be read as judge results; nothing was imported."""


@dataclass
class JudgeImportReport:
    records: int = 0
    created: int = 0
    updated: int = 0
    invalid_scores: int = 0
    unmatched: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    judge_settings: list = field(default_factory=list)


SCORE_FIELDS = ("model_score", "score", "judge_score", "pred_score")
RAW_FIELDS = ("response", "raw_output", "judge_output", "output", "model_output")
MODEL_FIELDS = ("model", "judge_model", "model_name")


def read_records(raw: bytes | str) -> list[dict]:
    """A JSON array of objects, or JSON Lines."""
    text = raw.decode("utf-8-sig") if isinstance(raw, bytes) else raw
    try:
        data = loads(text)
    except RecursionError:  # the decoder recurses once per level of [[[...]]]
        raise ImportRefused("The file's JSON is nested too deeply to read.") from None
    except ValueError:
        data = []
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                data.append(loads(line))
            except ValueError as exc:
                raise ImportRefused(f"Line {number} is neither part of a JSON array nor a JSON object: {exc}.") from exc
            except RecursionError:
                raise ImportRefused(f"Line {number}: the JSON is nested too deeply to read.") from None
    if isinstance(data, dict):
        data = data.get("results") or data.get("records") or [data]
    if not isinstance(data, list):
        raise ImportRefused("Expected a JSON array of records (or JSON Lines).")
    for index, record in enumerate(data):
        if not isinstance(record, dict):
            raise ImportRefused(f"Record {index} is not a JSON object.")
    return data


def import_judge_results(
    raw: bytes | str, file_name: str, *, model: str = "", setting_name: str = "", user=None
) -> JudgeImportReport:
    """Attach judge output produced elsewhere to the matching responses (idempotent).

    A record names its response by ``response_id``, or by ``problem_statement`` and
    ``student_response`` (plus ``student_id`` when several students wrote the same text). The
    score is ``model_score`` (or ``score``), else read from the raw judge text (``response``).
    Records that match nothing are reported, never guessed. Two records for one answer (under one
    setting) refuse the file: which one counts would be a guess.
    """
    records = read_records(raw)
    report = JudgeImportReport(records=len(records))
    judge_settings = {}
    seen = {}  # (setting name, response id) -> the record that gave its result
    with transaction.atomic():
        for index, record in enumerate(records):
            responses, reason = match_record(record)
            if not responses:
                report.unmatched.append({"index": index, "reason": reason, **_record_label(record)})
                continue
            model_name = model or next((str(record[k]) for k in MODEL_FIELDS if record.get(k)), "") or "unknown"
            name = setting_name or f"imported: {model_name}"
            if name not in judge_settings:
                judge_settings[name] = _external_setting(name, model_name, user)
            for response in responses:
                first = seen.setdefault((name, response.pk), index)
                if first != index:
                    # Two results for one answer under one setting: the later silently replaced the
                    # earlier (a figure counted one of them, unsaid). Refused; nothing is imported.
                    raise ImportRefused(
                        f"Records {first} and {index} are both results for response #{response.pk} under the "
                        f"setting {name!r}: one answer takes one result per file. Remove one and import again.")
                _store_imported(judge_settings[name], response, record, index, file_name, report)
    report.judge_settings = [str(c) for c in judge_settings.values()]
    return report


def _record_label(record):
    return {
        "student_id": str(record.get("student_id", ""))[:80],
        "problem": " ".join(str(record.get("problem_statement", "")).split())[:80],
    }


def match_record(record: dict) -> tuple[list[Response], str]:
    """The responses a judge-result record is about, or ([], why not)."""
    if record.get("response_id") not in (None, ""):
        try:
            pk = int(record["response_id"])
        except (TypeError, ValueError):
            return [], f"response_id {record['response_id']!r} is not a number"
        found = list(Response.objects.select_related("question").filter(pk=pk))
        return (found, "") if found else ([], f"no response #{pk}")
    problem, answer = record.get("problem_statement"), record.get("student_response")
    if not isinstance(problem, str) or not isinstance(answer, str) or not problem.strip():
        return [], "the record has neither response_id nor problem_statement + student_response"
    question = Question.objects.filter(statement_hash=content_hash(problem)).first()
    if question is None:
        return [], "no question has this problem statement"
    responses = Response.objects.select_related("question").filter(question=question, transcript_hash=content_hash(answer))
    if record.get("student_id"):
        narrowed = responses.filter(student_id=str(record["student_id"]))
        if narrowed.exists():
            responses = narrowed
    found = list(responses)
    return (found, "") if found else ([], f"question #{question.pk} has no response with this text")


def _external_setting(name, model_name, user):
    setting = JudgeSetting.objects.filter(name=name).order_by("-version").first()
    if setting is not None:
        if setting.kind != JudgeSetting.Kind.EXTERNAL:
            raise ImportRefused(f"The setting {name!r} is a runnable judge; import under another name.")
        return setting
    return JudgeSetting.objects.create(
        name=name, version=1, kind=JudgeSetting.Kind.EXTERNAL, model=model_name, temperature=None, max_tokens=None,
        created_by=user, notes="Results imported from a file.",
    )


def _store_imported(setting, response, record, index, file_name, report):
    full = float(response.question.full_score)
    raw = next((str(record[k]) for k in RAW_FIELDS if isinstance(record.get(k), str)), "")
    parsed = parse_score(raw, full_score=full) if raw else None
    score, status, parse_status = None, JudgeResult.Status.INVALID, "unparseable"
    field_name = next((k for k in SCORE_FIELDS if record.get(k) not in (None, "")), None)
    given = record[field_name] if field_name else None
    if given is not None:
        try:
            value = float(given)
        except (TypeError, ValueError, OverflowError):  # float(10**400) overflows
            value = None
        if value is not None and 0 <= value <= full:
            score, status, parse_status = value, JudgeResult.Status.OK, "imported"
        else:
            # As the paper's scorer: a score outside [0, full score] is an invalid result, never a
            # score (a 1e308 overflowed every metric of its setting); said with record and field.
            parse_status = "out_of_range" if value is not None else "unparseable"
            report.warnings.append({"index": index, "message": (
                f"record {index}: field '{field_name}' is {str(given)[:40]}, not a score from 0 to {full:g} "
                "(the question's full score): stored as an invalid result")})
        if parsed and parsed.status == PARSE_OK and value is not None and abs(parsed.score - value) > 1e-9:
            report.warnings.append(
                {"index": index, "message": f"model_score {value:g} differs from the score in the text ({parsed.score:g}); kept model_score"}
            )
    elif parsed is not None:
        score, parse_status = parsed.score, parsed.status
        status = JudgeResult.Status.OK if parsed.status == PARSE_OK else JudgeResult.Status.INVALID
    if status != JudgeResult.Status.OK:
        report.invalid_scores += 1
    gold = record.get("gt")
    if gold not in (None, "") and response.gold_score is not None:
        try:
            if abs(float(gold) - float(response.gold_score)) > 1e-9:
                report.warnings.append({"index": index, "message": f"gt {str(gold)[:40]} differs from the gold score {response.gold_score} of response #{response.pk}"})
        except (TypeError, ValueError, OverflowError):
            pass
    key = cache_key(setting, f"{response.question.statement_hash}\n{response.transcript_hash}")
    _, created = JudgeResult.objects.update_or_create(
        setting=setting, response=response, cache_key=key,
        defaults={
            "status": status, "score": score, "raw_output": raw, "rationale": parsed.rationale if parsed else "",
            "parse_status": parse_status, "finished": timezone.now(),
            "provenance": {"file": os.path.basename(file_name), "record_index": index},
        },
    )
    if created:
        report.created += 1
    else:
        report.updated += 1
