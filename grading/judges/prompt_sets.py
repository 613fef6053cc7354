"""
Prompt variants from files: a release-format file (RealMath-Eval records, each with a filled judge
prompt in ``query``) whose records match answers already in the tool is kept as a **named prompt
set**, instead of being skipped as duplicates. A replay setting that names the set sends these
prompts (grading/judges/strategies.prepare).

Matching: a record matches the answer with the same question (its problem statement, hence its
exam) and the same student id; with several versions of that answer, the one with the same text,
else the newest. Nothing is ever created: records that match no answer are reported (index,
student, question location, why), as are records without a prompt. Re-importing the same set
replaces the prompts it holds for the answers matched again.

**Hold-outs.** A few-shot variant file carries calibration examples inside its prompts; those
answers must not be judged or counted for that set. They are marked ``holdout`` from a manifest
(a JSON list of ``{"student_id", "question_location"}``, or an object with such a list under
``"calibration"``, ``"examples"`` or ``"holdout"``), or, with ``holdout_absent``, as the answers
of the file's questions that the file has no record for (the paper's few-shot file: 196 of the
224 answers, the other 28 being the examples).
"""
from __future__ import annotations

import json

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.text import slugify

from annotation.importers.common import ImportFormatError, as_stream, iter_json_array, require, sha256_of
from annotation.models import Response, content_hash

from ..models import PromptSet, PromptSetEntry

MAX_REPORTED = 200


def _clean(record, index):
    return {
        "problem_statement": require(record, index, "problem_statement", str, allow_empty=False),
        "student_id": require(record, index, "student_id", str, allow_empty=False),
        "student_response": require(record, index, "student_response", str, optional=True) or "",
        "query": require(record, index, "query", str, optional=True) or "",
        "question_location": require(record, index, "question_location", str, optional=True) or "",
    }


def _manifest_keys(manifest):
    """{(student id, question location)} of a hold-out manifest (parsed JSON)."""
    if isinstance(manifest, dict):
        for key in ("calibration", "examples", "holdout"):
            if isinstance(manifest.get(key), list):
                manifest = manifest[key]
                break
    if not isinstance(manifest, list):
        raise ImportFormatError("The hold-out manifest must be a JSON list of {student_id, question_location}.")
    keys = set()
    for index, row in enumerate(manifest):
        if not isinstance(row, dict) or not row.get("student_id"):
            raise ImportFormatError(f"manifest entry {index}: expected an object with student_id and question_location.")
        keys.add((str(row["student_id"]), str(row.get("question_location", ""))))
    return keys


def check_name(name: str) -> str:
    clean = slugify(name or "")
    if not clean or clean != name:
        raise ValidationError(f"A prompt set name is a short slug (letters, digits, - and _), e.g. vf; got {name!r}.")
    return clean


@transaction.atomic
def import_prompt_set(raw, file_name, *, name, holdout_absent=False, manifest=None, exam_name=None, user=None):
    """Keep the prompts of the records of `raw` (bytes or a binary file) that match existing
    answers as prompt set `name`. Returns the report (also stored on the set). All or nothing."""
    name = check_name(name)
    stream = as_stream(raw)
    sha = sha256_of(stream)
    records = [(index, _clean(record, index)) for index, record in iter_json_array(stream, file_name)]
    hashes = {content_hash(r["problem_statement"]) for _, r in records}
    answers = Response.objects.filter(question__statement_hash__in=hashes).select_related("question", "question__exam")
    if exam_name:
        answers = answers.filter(question__exam__name=exam_name)
    by_key = {}
    for answer in answers.order_by("pk"):
        by_key.setdefault((answer.question.statement_hash, answer.student_id), []).append(answer)
    prompt_set, created = PromptSet.objects.get_or_create(name=name, defaults={"created_by": user})
    matched, unmatched, no_prompt, questions = {}, [], [], set()
    for index, record in records:
        key = (content_hash(record["problem_statement"]), record["student_id"])
        candidates = by_key.get(key)
        if not candidates:
            reason = "no answer by this student to this question" if any(k[0] == key[0] for k in by_key) else \
                "the question is not in the tool" + (f" (exam {exam_name})" if exam_name else "")
            unmatched.append({"index": index, "student_id": record["student_id"],
                              "question_location": record["question_location"], "reason": reason})
            continue
        text_hash = content_hash(record["student_response"])
        answer = next((a for a in candidates if a.transcript_hash == text_hash), candidates[-1])
        questions.add(answer.question_id)
        if not record["query"].strip():
            no_prompt.append({"index": index, "student_id": record["student_id"],
                              "question_location": record["question_location"]})
            continue
        matched[answer.pk] = (record["query"], index)
    holdout = set()
    if manifest is not None:
        keys = _manifest_keys(manifest)
        for answer in answers:
            if (answer.student_id, answer.question.location) in keys:
                holdout.add(answer.pk)
    if holdout_absent:
        holdout |= {a.pk for a in answers if a.question_id in questions and a.pk not in matched}
    holdout -= set(matched)
    PromptSetEntry.objects.filter(prompt_set=prompt_set, response_id__in=set(matched) | holdout).delete()
    PromptSetEntry.objects.bulk_create(
        [PromptSetEntry(prompt_set=prompt_set, response_id=pk, query=query, import_index=index)
         for pk, (query, index) in matched.items()]
        + [PromptSetEntry(prompt_set=prompt_set, response_id=pk, holdout=True) for pk in sorted(holdout)],
        batch_size=500,
    )
    report = {
        "file": file_name, "sha256": sha, "records": len(records), "matched": len(matched),
        "unmatched": len(unmatched), "without_prompt": len(no_prompt), "holdout": len(holdout),
        "holdout_rule": ("manifest" if manifest is not None else "") + (" + " if manifest is not None and holdout_absent else "")
        + ("answers absent from the file" if holdout_absent else ""),
        "unmatched_records": unmatched[:MAX_REPORTED], "records_without_prompt": no_prompt[:MAX_REPORTED],
        "created_set": created,
    }
    prompt_set.file_name, prompt_set.file_sha256, prompt_set.report = file_name, sha, report
    prompt_set.save(update_fields=["file_name", "file_sha256", "report"])
    return prompt_set, report


def load_manifest(raw: bytes):
    try:
        return json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ImportFormatError(f"The hold-out manifest is not JSON: {exc}.") from exc


def prompt_set_rows():
    """Every prompt set with its counts (the prompt-set page)."""
    from django.db.models import Count, Q  # noqa: PLC0415

    return PromptSet.objects.annotate(
        n_prompts=Count("entries", filter=Q(entries__holdout=False)),
        n_holdout=Count("entries", filter=Q(entries__holdout=True)),
        n_settings=Count("settings", distinct=True),
    ).order_by("name")
