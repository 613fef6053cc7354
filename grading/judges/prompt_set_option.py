"""`manage.py import_realmath FILE --prompt-set NAME`: grading's option of annotation's release
import command (`release_import_option` on grading's AppConfig, read by the command through
core.app_hooks). With --prompt-set nothing is created: the prompts of records matching answers
already in the tool are kept as that named prompt set (`prompt_sets.import_prompt_set`), and
unmatched records are reported.
"""
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError
from django.utils.translation import gettext

from annotation.importers import ImportFormatError

from .prompt_sets import import_prompt_set, load_manifest


def add_arguments(parser):
    parser.add_argument("--prompt-set", dest="prompt_set",
                        help="keep the file's prompts for matching answers as this named prompt set (e.g. vf)")
    parser.add_argument("--holdout-absent", dest="holdout_absent", action="store_true",
                        help="with --prompt-set: answers of the file's questions absent from it are hold-outs "
                             "(the few-shot file's calibration examples)")
    parser.add_argument("--holdout-manifest", dest="holdout_manifest",
                        help="with --prompt-set: the release's few-shot manifest (holdout_source_indices into its "
                             "source file), or a JSON list of {student_id, question_location} to mark as hold-out")
    parser.add_argument("--holdout-source", dest="holdout_source",
                        help="with --holdout-manifest: the source file its indices point into (realmath_eval.json), "
                             "when its answers were not imported from a file of that name")


def handle(options, stdout) -> bool:
    """Import the file as a prompt set when --prompt-set is given (True: the command is done);
    else refuse the options that go with it and return False (the release is imported as usual)."""
    if not options.get("prompt_set"):
        if options.get("holdout_absent") or options.get("holdout_manifest") or options.get("holdout_source"):
            raise CommandError(gettext("--holdout-absent, --holdout-manifest and --holdout-source go with --prompt-set."))
        return False
    path = _existing(options["file"])
    try:
        manifest = load_manifest(_existing(options["holdout_manifest"]).read_bytes()) \
            if options.get("holdout_manifest") else None
        source = None
        if options.get("holdout_source"):
            if manifest is None:
                raise CommandError(gettext("--holdout-source goes with --holdout-manifest."))
            source = _existing(options["holdout_source"])
        with path.open("rb") as stream:
            prompt_set, report = import_prompt_set(
                stream, path.name, name=options["prompt_set"], holdout_absent=options["holdout_absent"],
                manifest=manifest, source=source.read_bytes() if source else None,
                source_name=source.name if source else None, exam_name=options.get("exam"))
    except (ImportFormatError, ValidationError) as exc:
        message = " ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc)
        raise CommandError(gettext("Nothing imported. %(exc)s") % {"exc": message}) from exc
    _write_report(stdout, prompt_set, path, report)
    return True


def _existing(name):
    path = Path(name)
    if not path.is_file():
        raise CommandError(gettext("%(path)s: no such file.") % {"path": path})
    return path


def _write_report(stdout, prompt_set, path, report):
    stdout.write(gettext(
        "Prompt set %(name)s from %(file)s: %(records)s records, %(matched)s prompts attached to existing answers, "
        "%(unmatched)s unmatched, %(without)s without a prompt, %(holdout)s hold-out answers; nothing created.") % {
        "name": prompt_set.name, "file": path.name, "records": report["records"], "matched": report["matched"],
        "unmatched": report["unmatched"], "without": report["without_prompt"], "holdout": report["holdout"]})
    for row in report["unmatched_records"]:
        stdout.write(gettext("  unmatched: record %(index)s (%(student_id)s, %(location)s): %(reason)s") % {
            "index": row["index"], "student_id": row["student_id"], "location": row["question_location"],
            "reason": row["reason"]})
