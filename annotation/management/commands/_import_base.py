from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext

from annotation.importers import ImportFormatError
from annotation.importers.placement import ASK, OVERLAPS, ExamOverlap
from annotation.selectors import exams_by_key

from ..exams import add_exam_argument, exam_name_option


class ImportCommand(BaseCommand):
    """Base of the dataset import commands: read a file, import it, print the report."""

    importer = None
    accepts_exam = True
    # Release files: --overlap, what to do with the file's questions already in another exam.
    places_questions = False

    def add_arguments(self, parser):
        parser.add_argument("file", help="file to import")
        if self.accepts_exam:
            add_exam_argument(parser, new_name=True)
        if self.places_questions:
            parser.add_argument(
                "--overlap", choices=OVERLAPS, default=ASK,
                help=gettext("the file's questions already in another exam: ask (import nothing and say where they "
                             "are, the default), join (import the file into that exam), move (move them, with their "
                             "answers, labels and judge results, into --exam), keep (leave them there)"))

    def handle(self, *args, **options):
        path = Path(options["file"])
        if not path.is_file():
            raise CommandError(gettext("%(path)s: no such file.") % {"path": path})
        kwargs = {"exam_name": exam_name_option(options["exam"])} if options.get("exam") else {}
        if self.places_questions:
            kwargs["overlap"] = options.get("overlap") or ASK
        try:
            with path.open("rb") as stream:  # importers that can read it in blocks do
                result = type(self).importer(stream, path.name, **kwargs)
        except ExamOverlap as exc:
            raise CommandError(gettext("Nothing imported. %(exc)s (--overlap join, move or keep.)") % {"exc": exc}) from exc
        except ImportFormatError as exc:
            raise CommandError(gettext("Nothing imported. %(exc)s") % {"exc": exc}) from exc
        counts = ", ".join(f"{key}: {value}" for key, value in sorted(result.counts.items())
                           if not isinstance(value, (list, dict)))
        self.stdout.write(gettext("Imported %(name)s (%(counts)s).") % {"name": path.name, "counts": counts})
        self._write_placement(result.counts)
        for warning in result.warnings:
            if "index" not in warning:  # a question's warning (its rubric), not a record's
                self.stdout.write(gettext("  needs a look: question %(location)s: %(problem)s") % {
                    "location": warning.get("location") or warning.get("question_id"), "problem": warning["problem"]})
                continue
            self.stdout.write(
                gettext("  needs a look: record %(index)s (%(student_id)s): %(problem)s") % {"index": warning['index'], "student_id": warning['student_id'], "problem": warning['problem']}
            )
        if result.warnings:
            self.stdout.write(gettext("%(n_warnings)s record(s) kept as they are; see import report #%(report_id)s.") % {"n_warnings": len(result.warnings), "report_id": result.report_id})

    def _write_placement(self, counts):
        """Where each question went (release imports): one line per question."""
        rows = counts.get("questions") or []
        names = {key: exam.name for key, exam in exams_by_key(
            {str(row.get(k)) for row in rows for k in ("exam", "from")}).items()}
        words = {
            "created": gettext("  question %(location)s (#%(id)s): added to %(exam)s"),
            "here": gettext("  question %(location)s (#%(id)s): already in %(exam)s"),
            "moved": gettext("  question %(location)s (#%(id)s): moved from %(source)s into %(exam)s, with its answers"),
            "elsewhere": gettext("  question %(location)s (#%(id)s): left in %(exam)s, where it already was"),
        }
        for row in rows:
            self.stdout.write(words[row["how"]] % {"location": row["location"] or "-", "id": row["id"],
                                                   "exam": names.get(str(row["exam"]), row["exam"]),
                                                   "source": names.get(str(row.get("from")), row.get("from"))})
