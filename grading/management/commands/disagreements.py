"""List the disagreement queue: `manage.py disagreements [--setting NAME] [--threshold 2] --format jsonl`."""
import csv
import json

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext

from annotation.management.exams import add_exam_argument, exam_id_of
from core.csv_cells import safe_row
from grading.review import selectors

from ._scopes import named_scopes

FIELDS = ("result", "response", "question", "question_location", "source", "student_id", "setting", "version",
          "gold", "judge_score", "delta", "direction", "category", "proposed_by")


class Command(BaseCommand):
    help = "Every judge result with |judge − gold| ≥ threshold: response, gold, judge score, delta, category if any."

    def add_arguments(self, parser):
        parser.add_argument("--setting", help="Judge setting name (its newest version unless --setting-version).")
        parser.add_argument("--setting-version", type=int, dest="setting_version", help="Setting version.")
        parser.add_argument("--run", type=int, help="One judge run instead of a setting.")
        parser.add_argument("--threshold", type=float, default=selectors.DEFAULT_THRESHOLD)
        # The queue's filters, as on the page and in the API (grading.review.selectors.QueueFilter).
        parser.add_argument("--source", help="human or synthetic.")
        parser.add_argument("--category", help="Only cases classified A..E.")
        parser.add_argument("--question", help="A question id.")
        add_exam_argument(parser)
        parser.add_argument("--level", help="low or high.")
        parser.add_argument("--direction", help="over (the judge scored higher than the gold) or under.")
        parser.add_argument("--state", help="todo, proposed or confirmed.")
        parser.add_argument("--attribution", help="ocr, judge, both or none (OCR-vs-judge attribution).")
        parser.add_argument("--format", choices=["jsonl", "csv"], default="jsonl")

    def handle(self, *args, **options):
        if options["threshold"] < 0:
            raise CommandError(gettext("--threshold must be 0 or more."))
        params = {k: options[k] for k in selectors.QUEUE_FILTERS if options.get(k)}
        if options.get("exam"):  # the queue filters an exam by id
            params["exam"] = exam_id_of(options)
        if errors := selectors.queue_filter_errors(params):
            raise CommandError("; ".join(f"--{name}: {' '.join(messages)}" for name, messages in errors.items()))
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
        named = named_scopes(options)
        if named is not None:
            return named
        return [selectors.Scope(setting=setting) for setting in selectors.settings_with_results()]

    @staticmethod
    def _row(result):
        response = result.response
        meta = getattr(result, "meta_evaluation", None) if hasattr(result, "meta_evaluation") else None
        return {
            "result": result.pk, "response": response.pk, "question": response.question_id,
            "question_location": response.question.location, "source": response.source,
            "student_id": response.student_id, "setting": result.setting.name, "version": result.setting.version,
            "gold": result.gold, "judge_score": result.score, "delta": result.delta,
            "direction": "over" if result.delta > 0 else "under",
            "category": meta.category if meta and meta.category else None,
            "proposed_by": meta.proposed_by if meta and meta.category else None,
        }
