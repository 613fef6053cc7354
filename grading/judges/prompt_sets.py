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
answers must not be judged or counted for that set. They are marked ``holdout`` from a manifest:

- the release's own manifest (``realmath_eval_fewshot_manifest.json``): ``holdout_source_indices``
  are indices into its ``source_file`` (``realmath_eval.json``), 28 in the paper. An index names
  the answer imported from that file at that index (``Response.import_file``/``import_index``),
  or, when the source file itself is given, the answer matching that record (same problem
  statement, student and text). Never by (student id, question location): that pair repeats in
  the release (3-16, 3-17 and 3-18 each name several problems). An index that names no answer,
  or several, refuses the import;
- or a JSON list of ``{"student_id", "question_location"}`` (or an object with such a list under
  ``"calibration"``, ``"examples"`` or ``"holdout"``); a pair that names answers of more than one
  question is refused as ambiguous;

or, with ``holdout_absent``, as the answers of the file's questions that the file has no record
for, counting only answers of the same source (human / synthetic) and import file as the ones it
matched (a synthetic or scanned answer is not missing from a file of human answers).
"""
from __future__ import annotations

import json

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.text import slugify
from django.utils.translation import gettext

from annotation.importers.common import ImportFormatError, as_stream, iter_json_array, require, sha256_of
from annotation.models import Response, content_hash
from core.numbers import json_int

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


def _basename(path: str) -> str:
    """The file name of a path written on Windows or POSIX (the release's manifests hold E:\\...)."""
    return str(path).replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]


def read_manifest(manifest):
    """What a parsed hold-out manifest names: ``("indices", source file name, [index, ...])`` for
    the release's manifest (``holdout_source_indices``), ``("keys", {(student id, location)})`` for a list."""
    if isinstance(manifest, dict) and "holdout_source_indices" in manifest:
        indices = manifest["holdout_source_indices"]
        if not isinstance(indices, list) or any(isinstance(i, bool) or not isinstance(i, int) or i < 0 for i in indices):
            raise ImportFormatError(gettext("The manifest's holdout_source_indices must be a list of whole numbers "
                                            "from 0 (indices into its source file)."))
        if len(set(indices)) != len(indices):
            raise ImportFormatError(gettext("The manifest's holdout_source_indices repeat an index."))
        declared = manifest.get("holdout_count")
        if isinstance(declared, int) and not isinstance(declared, bool) and declared != len(indices):
            raise ImportFormatError(gettext("The manifest says holdout_count %(count)s but lists %(n)s indices.")
                                    % {"count": declared, "n": len(indices)})
        source = manifest.get("source_file")
        if not isinstance(source, str) or not _basename(source):
            raise ImportFormatError(gettext("The manifest names hold-outs by source index but has no source_file."))
        return ("indices", _basename(source), list(indices))
    if isinstance(manifest, dict):
        for key in ("calibration", "examples", "holdout"):
            if isinstance(manifest.get(key), list):
                manifest = manifest[key]
                break
    if not isinstance(manifest, list):
        raise ImportFormatError(gettext("The hold-out manifest must be the release's manifest (holdout_source_indices) "
                                        "or a JSON list of {student_id, question_location}."))
    keys = set()
    for index, row in enumerate(manifest):
        if not isinstance(row, dict) or not row.get("student_id"):
            raise ImportFormatError(gettext("manifest entry %(index)s: expected an object with student_id and "
                                            "question_location.") % {"index": index})
        keys.add((str(row["student_id"]), str(row.get("question_location", ""))))
    return ("keys", keys)


def _holdouts_by_index(answers, source_name, indices, source_records=None):
    """{source index: answer} for the manifest's indices. `source_records` ({index: cleaned record}
    of the source file) when the file was given; else the answers imported from a file of that name."""
    found = {}
    if source_records is not None:
        by_key = {}
        for answer in answers:
            by_key.setdefault((answer.question.statement_hash, answer.student_id), []).append(answer)
        for index in indices:
            record = source_records.get(index)
            if record is None:
                raise ImportFormatError(gettext("Hold-out source index %(index)s: the source file %(file)s has no "
                                                "record %(index)s.") % {"index": index, "file": source_name})
            candidates = by_key.get((content_hash(record["problem_statement"]), record["student_id"]), [])
            same_text = [a for a in candidates if a.transcript_hash == content_hash(record["student_response"])]
            if len(same_text) > 1 or (not same_text and len(candidates) > 1):
                raise ImportFormatError(gettext(
                    "Hold-out source index %(index)s (%(student)s, %(location)s): several answers in the tool match; "
                    "name the exam.") % {"index": index, "student": record["student_id"],
                                          "location": record["question_location"]})
            if not (same_text or candidates):
                raise ImportFormatError(gettext(
                    "Hold-out source index %(index)s (%(student)s, %(location)s): no such answer in the tool; import "
                    "%(file)s first.") % {"index": index, "student": record["student_id"],
                                           "location": record["question_location"], "file": source_name})
            found[index] = (same_text or candidates)[0]
        return found
    by_index = {}
    for answer in answers:
        if answer.import_file == source_name and answer.import_index is not None:
            by_index.setdefault(answer.import_index, []).append(answer)
    for index in indices:
        named = by_index.get(index, [])
        if len(named) > 1:
            raise ImportFormatError(gettext(
                "Hold-out source index %(index)s: %(n)s answers were imported from %(file)s at that index (in "
                "several exams); name the exam.") % {"index": index, "n": len(named), "file": source_name})
        if not named:
            raise ImportFormatError(gettext(
                "Hold-out source index %(index)s: no answer of these questions was imported from %(file)s at that "
                "index; give the source file (%(file)s) with the manifest so its record can be matched.")
                % {"index": index, "file": source_name})
        found[index] = named[0]
    return found


def _holdouts_by_key(answers, keys):
    """Answers named by (student id, question location); a pair naming several questions is ambiguous."""
    named = {}
    for answer in answers:
        key = (answer.student_id, answer.question.location)
        if key in keys:
            named.setdefault(key, []).append(answer)
    for key, found in named.items():
        if len({a.question_id for a in found}) > 1:
            raise ImportFormatError(gettext(
                "Manifest entry (%(student)s, %(location)s) names answers to %(n)s different questions; use the "
                "release's manifest (holdout_source_indices) instead.") % {
                    "student": key[0], "location": key[1], "n": len({a.question_id for a in found})})
    return {a.pk for found in named.values() for a in found}


def _source_records(raw, file_name):
    """{index: cleaned record} of the manifest's source file."""
    return {index: _clean(record, index) for index, record in iter_json_array(as_stream(raw), file_name)}


def check_name(name: str) -> str:
    clean = slugify(name or "")
    if not clean or clean != name:
        raise ValidationError(gettext("A prompt set name is a short slug (letters, digits, - and _), e.g. vf; got %(name)s.")
                              % {"name": repr(name)})
    return clean


@transaction.atomic
def import_prompt_set(raw, file_name, *, name, holdout_absent=False, manifest=None, source=None, source_name=None,
                      exam_name=None, user=None):
    """Keep the prompts of the records of `raw` (bytes or a binary file) that match existing
    answers as prompt set `name`. `manifest`: the parsed hold-out manifest; `source`: the file its
    source indices point into (bytes or a binary file, named `source_name`), optional. Returns the
    report (also stored on the set). All or nothing."""
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
            if any(k[0] == key[0] for k in by_key):
                reason = gettext("no answer by this student to this question")
            elif exam_name:
                reason = gettext("the question is not in the tool (exam %(exam)s)") % {"exam": exam_name}
            else:
                reason = gettext("the question is not in the tool")
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
    holdout, rule, holdout_indices = set(), [], []
    if manifest is not None:
        plan = read_manifest(manifest)
        if plan[0] == "indices":
            _, manifest_source, indices = plan
            source_records = None
            if source is not None:
                if source_name and _basename(source_name) != manifest_source:
                    raise ImportFormatError(gettext("The manifest's source file is %(expected)s, not %(given)s.")
                                            % {"expected": manifest_source, "given": _basename(source_name)})
                source_records = _source_records(source, manifest_source)
            by_index = _holdouts_by_index(answers, manifest_source, indices, source_records)
            holdout = {answer.pk for answer in by_index.values()}
            clash = sorted(index for index, answer in by_index.items() if answer.pk in matched)
            if clash:
                raise ImportFormatError(gettext(
                    "Hold-out source index %(index)s names an answer the file also has a prompt for: the manifest "
                    "does not belong to this file.") % {"index": clash[0]})
            holdout_indices = sorted(indices)
            rule.append("manifest-indices")
        else:
            holdout = _holdouts_by_key(answers, plan[1])
            rule.append("manifest-keys")
    if holdout_absent:
        kinds = {(a.source, a.import_file) for a in answers if a.pk in matched}
        holdout |= {a.pk for a in answers if a.question_id in questions and a.pk not in matched
                    and (a.source, a.import_file) in kinds}
        rule.append("absent")
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
        "holdout_rule": " + ".join(rule), "holdout_source_indices": holdout_indices,
        "holdout_source_file": plan[1] if manifest is not None and plan[0] == "indices" else "",
        "unmatched_records": unmatched[:MAX_REPORTED], "records_without_prompt": no_prompt[:MAX_REPORTED],
        "created_set": created,
    }
    prompt_set.file_name, prompt_set.file_sha256, prompt_set.report = file_name, sha, report
    prompt_set.save(update_fields=["file_name", "file_sha256", "report"])
    return prompt_set, report


def load_manifest(raw: bytes):
    try:
        return json.loads(raw.decode("utf-8-sig"), parse_int=json_int)
    except (ValueError, RecursionError) as exc:  # also an integer literal too long to read, or nesting too deep
        raise ImportFormatError(gettext("The hold-out manifest is not JSON: %(error)s.") % {"error": exc}) from None


def prompt_set_rows():
    """Every prompt set with its counts (the prompt-set page)."""
    from django.db.models import Count, Q  # noqa: PLC0415

    return PromptSet.objects.annotate(
        n_prompts=Count("entries", filter=Q(entries__holdout=False)),
        n_holdout=Count("entries", filter=Q(entries__holdout=True)),
        n_settings=Count("settings", distinct=True),
    ).order_by("name")
