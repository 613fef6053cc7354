"""OCR-vs-judge attribution from the command line.

    python manage.py ocr_attribution --setting rubric-gpt --inline --format jsonl [--threshold 2]

Judges the raw OCR text of every answer made from scans with the setting (the verified text's
judgement is reused or made as for probes), then prints one JSON line per answer whose judge
score differs from the gold by the threshold on either text, tagged ocr, judge or both
(studies.selectors.attribution_tag). Without --inline the run is queued and followed.
"""
import json

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext

from annotation.management.exams import add_exam_argument, exam_id_of
from studies import probes, selectors, services

from .probe_judge import follow_probes


class Command(BaseCommand):
    help = "Judge the raw OCR text of scanned answers and tag each judge-vs-gold disagreement ocr, judge or both."

    def add_arguments(self, parser):
        parser.add_argument("--setting", required=True, help="Judge setting name (its newest version).")
        parser.add_argument("--threshold", type=float, default=selectors.DEFAULT_THRESHOLD)
        add_exam_argument(parser)
        parser.add_argument("--inline", action="store_true", help="Work in this process (no Celery worker).")
        parser.add_argument("--format", choices=["jsonl"], default="jsonl")

    def handle(self, *args, **options):
        setting = selectors.find_setting(options["setting"])
        if setting is None:
            raise CommandError(gettext("No setting %(setting)s.") % {"setting": repr(options['setting'])})
        if options["threshold"] < 0:
            raise CommandError(gettext("--threshold must not be negative."))
        try:
            run = services.start_probe_run(
                setting, probe_names=[probes.RAW_OCR], exam=exam_id_of(options), enqueue=not options["inline"],
            )
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        self.stderr.write(gettext("Probe run %(pk)s of %(setting)s: %(n_items)s scanned answers (%(get)s not from scans).") % {"pk": run.pk, "setting": setting, "n_items": run.n_items, "get": run.skipped.get(probes.RAW_OCR, 0)})
        if options["inline"]:
            services.run_inline(run)
        else:
            follow_probes(run, self.stderr)
        for row in selectors.attribution_rows(setting, options["threshold"]):
            self.stdout.write(json.dumps(row, sort_keys=True))
