"""Import released meta-evaluation labels: `manage.py import_meta_eval_labels FILE [--input FILE] [--setting NAME]`."""
import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

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
            raise CommandError(f"No file {path}.")
        input_raw = None
        if options["input"]:
            input_path = Path(options["input"])
            if not input_path.is_file():
                raise CommandError(f"No file {input_path}.")
            input_raw = input_path.read_bytes()

        try:
            report = services.import_meta_eval_labels(
                path.read_bytes(), str(path), setting=options["setting"], input_raw=input_raw,
                create_results=not options["no_create"],
            )
        except (services.LabelImportRefused, ImportRefused) as exc:
            raise CommandError(f"Nothing was imported. {exc}") from exc
        if options["format"] == "json":
            self.stdout.write(json.dumps(report.as_dict(), indent=2, ensure_ascii=False))
            return
        self.stdout.write(
            f"{report.records} labels: {report.matched} matched ({report.created} new, {report.updated} updated, "
            f"{report.unchanged} unchanged), {report.results_created} judge scores stored from the labels, "
            f"{len(report.unmatched)} unmatched."
        )
        for match in report.matches:
            self.stdout.write(f"  sample {match['sample_id']}: category {match['category']} -> judge result "
                              f"#{match['result']} (response #{match['response']}, by {match['how']})")
        for kept in report.kept_expert:
            self.stdout.write(f"  sample {kept['sample_id']}: kept the expert's {kept['expert']} over the file's "
                              f"{kept['file']} (result #{kept['result']})")
        if report.unmatched:
            self.stdout.write(self.style.WARNING("Unmatched labels:"))
            for item in report.unmatched:
                self.stdout.write(f"  record {item['index']} (sample {item['sample_id']}): {item['reason']}")
