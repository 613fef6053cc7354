"""Import released meta-evaluation labels: `manage.py import_meta_eval_labels FILE [--input FILE] [--setting NAME]`."""
import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext

from grading.judges.result_import import ImportRefused
from grading.review import services


class Command(BaseCommand):
    help = (
        "Attach released meta-evaluation labels ({\"detailed_results\": [...]} with sample_id, "
        "primary_category_code, gt, model_score, student_id_mapped, question_location_mapped) to judge results. "
        "Labels that match nothing are listed with the reason."
    )

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--input", help="The meta-evaluation input file with the same sample_ids (to match by sample).")
        parser.add_argument("--setting", help="Match only results of this judge setting (and store missing scores under it).")
        parser.add_argument("--no-create", action="store_true",
                            help="Never store a label's model_score as a new imported judge result.")
        parser.add_argument("--format", choices=["text", "json"], default="text")

    def handle(self, *args, **options):
        path = Path(options["file"])
        if not path.is_file():
            raise CommandError(gettext("No file %(path)s.") % {"path": path})
        input_raw = None
        if options["input"]:
            input_path = Path(options["input"])
            if not input_path.is_file():
                raise CommandError(gettext("No file %(input_path)s.") % {"input_path": input_path})
            input_raw = input_path.read_bytes()

        try:
            report = services.import_meta_eval_labels(
                path.read_bytes(), str(path), setting=options["setting"], input_raw=input_raw,
                create_results=not options["no_create"],
            )
        except (services.LabelImportRefused, ImportRefused) as exc:
            raise CommandError(gettext("Nothing was imported. %(exc)s") % {"exc": exc}) from exc
        if options["format"] == "json":
            self.stdout.write(json.dumps(report.as_dict(), indent=2, ensure_ascii=False))
            return
        self.stdout.write(
            gettext("%(records)s labels: %(matched)s matched (%(created)s new, %(updated)s updated, %(unchanged)s unchanged), %(results_created)s judge scores stored from the labels, %(n_unmatched)s unmatched.") % {"records": report.records, "matched": report.matched, "created": report.created, "updated": report.updated, "unchanged": report.unchanged, "results_created": report.results_created, "n_unmatched": len(report.unmatched)}
        )
        for match in report.matches:
            self.stdout.write(gettext("  sample %(sample_id)s: category %(category)s -> judge result #%(result)s (response #%(response)s, by %(how)s)") % {"sample_id": match['sample_id'], "category": match['category'], "result": match['result'], "response": match['response'], "how": match['how']})
        for kept in report.kept_expert:
            self.stdout.write(gettext("  sample %(sample_id)s: kept the expert's %(expert)s over the file's %(file)s (result #%(result)s)") % {"sample_id": kept['sample_id'], "expert": kept['expert'], "file": kept['file'], "result": kept['result']})
        if report.unmatched:
            self.stdout.write(self.style.WARNING(gettext("Unmatched labels:")))
            for item in report.unmatched:
                self.stdout.write(gettext("  record %(index)s (sample %(sample_id)s): %(reason)s") % {"index": item['index'], "sample_id": item['sample_id'], "reason": item['reason']})
