"""The OCR app's part of the full export (see annotation.export.sections).

Each response line carries `ocr`: the scanned pages it was transcribed from, with file
provenance (original name, SHA-256), every engine's raw output with boxes and timings, and
the transcript with its revisions. The images themselves are not in the JSONL: pages are
named by the checksum of their pixels, so the scans can be matched up again.
"""
from datetime import datetime

from django.db.models import Prefetch

from annotation.export.load import TIME, UserRef, user_named, whole
from annotation.importers.checks import Column, ListOf, Obj, text
from annotation.models import Exam

from .models import OcrRun, Page, ScanBatch, ScanFile, Transcript, TranscriptRevision

PAGE_FIELDS = ["index_in_file", "student_id", "page_number", "assignment_note", "checksum", "width", "height",
               "status", "prepare_error", "skew_degrees", "web_width", "web_height"]
RUN_FIELDS = ["engine", "engine_version", "status", "raw_text", "tokens", "seconds", "error", "cer_edits", "cer_length"]


def _stamp(value):
    return None if value is None else value.isoformat()


def _time(value):
    return datetime.fromisoformat(value) if value else None


def _pages(response_ids):
    return (
        Page.objects.filter(response_id__in=response_ids)
        .select_related("batch__exam", "source_file", "transcript__verified_by", "transcript__source_run")
        .prefetch_related(
            Prefetch("ocr_runs", queryset=OcrRun.objects.order_by("id")),
            Prefetch("transcript__revisions", queryset=TranscriptRevision.objects.select_related("author").order_by("version", "id")),
        )
        .order_by("response_id", "page_number", "checksum")
    )


def referenced_usernames(response_ids):
    names = set(Transcript.objects.filter(page__response_id__in=response_ids).values_list("verified_by__username", flat=True))
    names.update(
        TranscriptRevision.objects.filter(transcript__page__response_id__in=response_ids).values_list("author__username", flat=True)
    )
    return names


def _transcript_line(page, runs):
    transcript = getattr(page, "transcript", None)
    if transcript is None:
        return None
    return {
        "text": transcript.text,
        "version": transcript.version,
        "status": transcript.status,
        "verified_text": transcript.verified_text,
        "verified_by": transcript.verified_by.username if transcript.verified_by else None,
        "verified_at": _stamp(transcript.verified_at),
        "source_run": runs.index(transcript.source_run_id) if transcript.source_run_id in runs else None,
        "revisions": [
            {"version": r.version, "text": r.text, "kind": r.kind, "author": r.author.username if r.author else None,
             "created": _stamp(r.created)}
            for r in transcript.revisions.all()
        ],
    }


def _page_line(page):
    runs = list(page.ocr_runs.all())
    return {
        "batch": page.batch.name,
        "exam": page.batch.exam.name,
        "engine": page.batch.engine,
        "file": {
            "original_name": page.source_file.original_name, "sha256": page.source_file.sha256,
            "detected_format": page.source_file.detected_format, "size": page.source_file.size,
        },
        **{f: getattr(page, f) for f in PAGE_FIELDS},
        "ocr_runs": [{**{f: getattr(run, f) for f in RUN_FIELDS}, "finished": _stamp(run.finished)} for run in runs],
        "transcript": _transcript_line(page, [run.pk for run in runs]),
    }


def export_responses(response_ids):
    sections = {}
    for page in _pages(response_ids):
        sections.setdefault(page.response_id, {"ocr": {"pages": []}})["ocr"]["pages"].append(_page_line(page))
    return sections


def response_shapes():
    revision = Obj(TranscriptRevision, ["version", "text", "kind"], shapes={"author": UserRef(), "created": TIME},
                   required=["version", "kind"])
    transcript = Obj(Transcript, ["text", "version", "status", "verified_text"],
                     shapes={"verified_by": UserRef(), "verified_at": TIME, "source_run": whole(0),
                             "revisions": ListOf(revision)}, null=True)
    page = Obj(
        Page, PAGE_FIELDS,
        shapes={"batch": Column(ScanBatch, "name"), "exam": Column(Exam, "name"), "engine": Column(ScanBatch, "engine"),
                "file": Obj(ScanFile, ["original_name", "sha256", "detected_format", "size"], null=True),
                "ocr_runs": ListOf(Obj(OcrRun, RUN_FIELDS, shapes={"finished": TIME})), "transcript": transcript,
                "checksum": text(64)},
        required=["batch", "exam", "width", "height"],
    )
    return {"ocr": Obj(None, shapes={"pages": ListOf(page)}, null=True)}


def _import_page(response, data, context):
    if data.get("checksum") and Page.objects.filter(checksum=data["checksum"]).exists():
        return  # a page not rendered (no checksum) cannot be matched, so it is always imported
    exam = context["exams"].get(data["exam"]) or response.question.exam
    batch, _ = ScanBatch.objects.get_or_create(name=data["batch"], exam=exam, defaults={"engine": data.get("engine", "")})
    file_data = data.get("file") or {}
    scan_file, _ = ScanFile.objects.get_or_create(
        batch=batch, sha256=file_data.get("sha256", ""), original_name=file_data.get("original_name", ""),
        defaults={"detected_format": file_data.get("detected_format", ""), "size": file_data.get("size", 0),
                  "status": ScanFile.Status.ACCEPTED},
    )
    page = Page.objects.create(batch=batch, source_file=scan_file, question=response.question, response=response,
                               **{f: data[f] for f in PAGE_FIELDS if f in data})
    runs = [
        OcrRun.objects.create(page=page, finished=_time(run.get("finished")), **{f: run[f] for f in RUN_FIELDS if f in run})
        for run in data.get("ocr_runs", [])
    ]
    transcript_data = data.get("transcript")
    if not transcript_data:
        return
    source = transcript_data.get("source_run")
    transcript = Transcript.objects.create(
        page=page, text=transcript_data.get("text", ""), version=transcript_data.get("version", 0),
        status=transcript_data.get("status", Transcript.Status.DRAFT), verified_text=transcript_data.get("verified_text", ""),
        verified_by=user_named(context, transcript_data.get("verified_by")), verified_at=_time(transcript_data.get("verified_at")),
        source_run=runs[source] if source is not None and source < len(runs) else None,
    )
    for revision in transcript_data.get("revisions", []):
        created = TranscriptRevision.objects.create(
            transcript=transcript, version=revision["version"], text=revision.get("text", ""), kind=revision["kind"],
            author=user_named(context, revision.get("author")),
        )
        if revision.get("created"):
            TranscriptRevision.objects.filter(pk=created.pk).update(created=_time(revision["created"]))


def import_response(response, line, context):
    for page in (line.get("ocr") or {}).get("pages", []):
        _import_page(response, page, context)
