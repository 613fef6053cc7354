"""Perturbation probes from the command line (the same runs the probe page shows).

    python manage.py probe_judge --setting rubric-gpt --probe all --inline --format json
    python manage.py probe_judge --setting rubric-gpt --probe drop-final-answer --exam 2 --limit 50 --seed 1

JSON output: {probe: {"n", "detected", "rate", "ci": [lo, hi], "skipped", "failed"}} (Wilson 95%).
Without --inline the run is queued to the Celery workers and followed until it ends.
"""
import json

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext

from annotation.management.exams import add_exam_argument, exam_id_of
from grading.management.follow import follow
from studies import probes, selectors, services


class Command(BaseCommand):
    help = "Judge derived answers (perturbation probes) with a judge setting and report detection rates."

    def add_arguments(self, parser):
        parser.add_argument("--setting", required=True, help="Judge setting name (its newest version).")
        parser.add_argument("--probe", required=True, help=f"One of {', '.join(probes.PROBES)}, a comma list, or all.")
        add_exam_argument(parser)
        parser.add_argument("--question", help="Question id.")
        parser.add_argument("--limit", type=int, help="At most this many answers.")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--inline", action="store_true", help="Work in this process (no Celery worker).")
        parser.add_argument("--format", choices=["json", "table"], default="table")

    def handle(self, *args, **options):
        setting = selectors.find_setting(options["setting"])
        if setting is None:
            raise CommandError(gettext("No setting %(setting)s.") % {"setting": repr(options['setting'])})
        try:
            names = services.parse_probe_names(options["probe"])
            if probes.RAW_OCR in names:
                raise CommandError(gettext("raw-ocr is not a probe: use the ocr_attribution command."))
            run = services.start_probe_run(
                setting, probe_names=names, exam=exam_id_of(options), question=options["question"],
                limit=options["limit"], seed=options["seed"], enqueue=not options["inline"],
            )
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        self.stderr.write(gettext("Probe run %(pk)s of %(setting)s: %(n_items)s derived answers.") % {"pk": run.pk, "setting": setting, "n_items": run.n_items})
        run = services.run_inline(run) if options["inline"] else follow_probes(run, self.stderr)
        rates = selectors.run_rates(run)
        if options["format"] == "json":
            self.stdout.write(json.dumps(rates, indent=2, sort_keys=True))
            return
        self.stdout.write(f"{'probe':28} {'n':>5} {'detected':>9} {'rate':>7}  {'95% CI':17} {'skipped':>8} {'failed':>7}")
        for name, row in rates.items():
            rate = "-" if row["rate"] is None else f"{row['rate']:.3f}"
            ci = (row.get("ci_note") or "-") if row["ci"] is None else f"[{row['ci'][0]:.3f}, {row['ci'][1]:.3f}]"
            self.stdout.write(
                f"{name:28} {row['n']:>5} {row['detected']:>9} {rate:>7}  {ci:17} {row['skipped']:>8} {row['failed']:>7}"
            )


def follow_probes(run, out):
    return follow(run, selectors.run_progress, lambda p: f"{p['done']}/{p['total']} done, {p['error']} failed", out)
