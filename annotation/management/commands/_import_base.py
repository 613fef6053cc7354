from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.importers import ImportFormatError


class ImportCommand(BaseCommand):
    """Base of the dataset import commands: read a file, import it, print the report."""

    importer = None
    accepts_exam = True

    def add_arguments(self, parser):
        parser.add_argument("file", help="file to import")
        if self.accepts_exam:
            parser.add_argument("--exam", default=None, help="exam (batch) name for the imported questions")

    def handle(self, *args, **options):
        path = Path(options["file"])
        if not path.is_file():
            raise CommandError(f"{path}: no such file.")
        kwargs = {"exam_name": options["exam"]} if options.get("exam") else {}
        try:
            with path.open("rb") as stream:  # importers that can read it in blocks do
                result = type(self).importer(stream, path.name, **kwargs)
        except ImportFormatError as exc:
            raise CommandError(f"Nothing imported. {exc}") from exc
        counts = ", ".join(f"{key}: {value}" for key, value in sorted(result.counts.items()))
        self.stdout.write(f"Imported {path.name} ({counts}).")
        for warning in result.warnings:
            self.stdout.write(
                f"  needs a look: record {warning['index']} ({warning['student_id']}): {warning['problem']}"
            )
        if result.warnings:
            self.stdout.write(f"{len(result.warnings)} record(s) kept as they are; see import report #{result.report_id}.")
