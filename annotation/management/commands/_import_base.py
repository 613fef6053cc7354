from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext

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
            raise CommandError(gettext("%(path)s: no such file.") % {"path": path})
        kwargs = {"exam_name": options["exam"]} if options.get("exam") else {}
        try:
            with path.open("rb") as stream:  # importers that can read it in blocks do
                result = type(self).importer(stream, path.name, **kwargs)
        except ImportFormatError as exc:
            raise CommandError(gettext("Nothing imported. %(exc)s") % {"exc": exc}) from exc
        counts = ", ".join(f"{key}: {value}" for key, value in sorted(result.counts.items()))
        self.stdout.write(gettext("Imported %(name)s (%(counts)s).") % {"name": path.name, "counts": counts})
        for warning in result.warnings:
            self.stdout.write(
                gettext("  needs a look: record %(index)s (%(student_id)s): %(problem)s") % {"index": warning['index'], "student_id": warning['student_id'], "problem": warning['problem']}
            )
        if result.warnings:
            self.stdout.write(gettext("%(n_warnings)s record(s) kept as they are; see import report #%(report_id)s.") % {"n_warnings": len(result.warnings), "report_id": result.report_id})
