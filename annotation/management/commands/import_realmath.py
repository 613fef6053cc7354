from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError

from annotation.importers import ImportFormatError, import_realmath

from ._import_base import ImportCommand


class Command(ImportCommand):
    help = ("Import a RealMath-Eval release file (JSON array). Idempotent; all or nothing. With --prompt-set NAME, "
            "nothing is created: the prompts of records matching answers already in the tool are kept as that "
            "named prompt set (a variant such as Verification-First), and unmatched records are reported.")
    importer = staticmethod(import_realmath)

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--prompt-set", dest="prompt_set",
                            help="keep the file's prompts for matching answers as this named prompt set (e.g. vf)")
        parser.add_argument("--holdout-absent", dest="holdout_absent", action="store_true",
                            help="with --prompt-set: answers of the file's questions absent from it are hold-outs "
                                 "(the few-shot file's calibration examples)")
        parser.add_argument("--holdout-manifest", dest="holdout_manifest",
                            help="with --prompt-set: a JSON list of {student_id, question_location} to mark as hold-out")

    def handle(self, *args, **options):
        if not options.get("prompt_set"):
            if options.get("holdout_absent") or options.get("holdout_manifest"):
                raise CommandError("--holdout-absent and --holdout-manifest go with --prompt-set.")
            return super().handle(*args, **options)
        from grading.judges.prompt_sets import import_prompt_set, load_manifest  # noqa: PLC0415

        path = Path(options["file"])
        if not path.is_file():
            raise CommandError(f"{path}: no such file.")
        try:
            manifest = None
            if options.get("holdout_manifest"):
                manifest_path = Path(options["holdout_manifest"])
                if not manifest_path.is_file():
                    raise CommandError(f"{manifest_path}: no such file.")
                manifest = load_manifest(manifest_path.read_bytes())
            with path.open("rb") as stream:
                prompt_set, report = import_prompt_set(
                    stream, path.name, name=options["prompt_set"], holdout_absent=options["holdout_absent"],
                    manifest=manifest, exam_name=options.get("exam"))
        except (ImportFormatError, ValidationError) as exc:
            message = " ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc)
            raise CommandError(f"Nothing imported. {message}") from exc
        self.stdout.write(
            f"Prompt set {prompt_set.name} from {path.name}: {report['records']} records, {report['matched']} prompts "
            f"attached to existing answers, {report['unmatched']} unmatched, {report['without_prompt']} without a "
            f"prompt, {report['holdout']} hold-out answers; nothing created.")
        for row in report["unmatched_records"]:
            self.stdout.write(f"  unmatched: record {row['index']} ({row['student_id']}, {row['question_location']}): "
                              f"{row['reason']}")
