"""List the disagreement queue: `manage.py disagreements [--setting NAME] [--threshold 2] --format jsonl`."""
import csv
import json

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext

from annotation.export.csv_cells import safe_row
from grading.review import selectors

FIELDS = ("result", "response", "question", "question_location", "source", "student_id", "setting", "version",
          "gold", "judge_score", "delta", "direction", "category", "proposed_by")


class Command(BaseCommand):
    help = "Every judge result with |judge − gold| ≥ threshold: response, gold, judge score, delta, category if any."

    def add_arguments(self, parser):
        parser.add_argument("--setting", help="Judge setting name (its newest version unless --setting-version).")
        parser.add_argument("--setting-version", type=int, dest="setting_version", help="Setting version.")
        parser.add_argument("--run", type=int, help="One judge run instead of a setting.")
        parser.add_argument("--threshold", type=float, default=selectors.DEFAULT_THRESHOLD)
        parser.add_argument("--source", choices=["human", "synthetic"])
        parser.add_argument("--category", help="Only cases classified A..E.")
        parser.add_argument("--format", choices=["jsonl", "csv"], default="jsonl")

    def handle(self, *args, **options):
        if options["threshold"] < 0:
            raise CommandError(gettext("--threshold must be 0 or more."))
        params = {k: options[k] for k in ("source", "category") if options.get(k)}
        if options.get("category") and options["category"].upper() not in "ABCDE":
            raise CommandError(gettext("--category is one of A, B, C, D, E."))
        writer = csv.DictWriter(self.stdout, fieldnames=FIELDS) if options["format"] == "csv" else None
        if writer:
            writer.writeheader()
        for scope in self._scopes(options):
            queue = selectors.disagreement_queue(scope, options["threshold"], params)
            for result in selectors.queue_page_rows(queue).iterator(chunk_size=2000):
                row = self._row(result)
                if writer:
                    writer.writerow(safe_row(row))
                else:
                    self.stdout.write(json.dumps(row, ensure_ascii=False))

    def _scopes(self, options):
        try:
            if options["run"] is not None:
                return [selectors.resolve_scope({"run": str(options["run"])})]
            if options["setting"]:
                return [selectors.Scope(config=selectors.find_setting(options["setting"], options["setting_version"]))]
        except selectors.ScopeError as exc:
            raise CommandError(str(exc)) from exc
        return [selectors.Scope(config=config) for config in selectors.settings_with_results()]

    @staticmethod
    def _row(result):
        response = result.response
        meta = getattr(result, "meta_evaluation", None) if hasattr(result, "meta_evaluation") else None
        return {
            "result": result.pk, "response": response.pk, "question": response.question_id,
            "question_location": response.question.location, "source": response.source,
            "student_id": response.student_id, "setting": result.config.name, "version": result.config.version,
            "gold": result.gold, "judge_score": result.score, "delta": result.delta,
            "direction": "over" if result.delta > 0 else "under",
            "category": meta.category if meta and meta.category else None,
            "proposed_by": meta.proposed_by if meta and meta.category else None,
        }
