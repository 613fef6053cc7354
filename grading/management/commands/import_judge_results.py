"""Import judge output produced elsewhere, attached to the matching responses.

    python manage.py import_judge_results results.json --model gpt-5.2 [--setting NAME]

Records are matched by ``response_id``, or by ``problem_statement`` + ``student_response``
(+ ``student_id``). The score is ``model_score`` (or ``score``), else read from the raw judge
text in ``response``. Unmatched records are listed; a file that cannot be read imports nothing.
"""
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext

from grading.judges import result_import


class Command(BaseCommand):
    help = "Import external judge results (JSON array or JSON Lines) and report what did not match."

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--model", default="", help="Judge model name when the records do not carry one.")
        parser.add_argument("--setting", default="", help="Name of the (external) setting to file them under.")

    def handle(self, *args, **options):
        path = Path(options["file"])
        if not path.is_file():
            raise CommandError(gettext("No such file: %(path)s") % {"path": path})
        try:
            report = result_import.import_judge_results(
                path.read_bytes(), str(path), model=options["model"], setting_name=options["setting"]
            )
        except (result_import.ImportRefused, UnicodeDecodeError) as exc:
            raise CommandError(gettext("Nothing was imported. %(exc)s") % {"exc": exc}) from exc
        self.stdout.write(
            gettext("%(records)s records: %(created)s results created, %(updated)s updated, %(invalid_scores)s without a valid score, %(n_unmatched)s unmatched. Setting(s): %(value)s.") % {"records": report.records, "created": report.created, "updated": report.updated, "invalid_scores": report.invalid_scores, "n_unmatched": len(report.unmatched), "value": ', '.join(report.judge_settings) or '—'}
        )
        for row in report.unmatched:
            self.stdout.write(gettext("  unmatched record %(index)s: %(reason)s (student %(value)s; %(value2)s)") % {"index": row['index'], "reason": row['reason'], "value": row['student_id'] or '—', "value2": row['problem'] or 'no problem text'})
        for row in report.warnings:
            self.stdout.write(gettext("  note on record %(index)s: %(message)s") % {"index": row['index'], "message": row['message']})
