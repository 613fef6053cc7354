"""Run a judge setting over responses from the command line (the same runs the pages show).

    python manage.py run_judges --setting rubric-gpt [--setting-version 2] [--source human --level high ...]
    python manage.py run_judges --setting rubric-gpt --inline      # no worker: work in this process
    python manage.py run_judges --resume 12 --wait                 # resume run 12, follow it
    python manage.py run_judges --setting rubric-gpt --batch --wait  # through the Batch API (cheaper, slower)
    python manage.py run_judges --setting rubric-gpt --dry-run     # the cost estimate only: nothing is sent
"""
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext

from annotation.management.exams import add_exam_argument, exam_id_of
from grading.judges import selectors, services
from grading.management.follow import follow
from grading.models import JudgeRun, JudgeSetting

FILTERS = ("source", "level", "question", "status", "gold_status", "score_min", "score_max", "q")


class Command(BaseCommand):
    help = "Start (or resume, or cancel) a judge run; filters are those of the response list."

    def add_arguments(self, parser):
        parser.add_argument("--setting", help="Judge setting name (its newest version unless --setting-version).")
        parser.add_argument("--setting-version", dest="setting_version", type=int, help="A specific version.")
        for name in FILTERS:
            parser.add_argument(f"--{name.replace('_', '-')}", dest=name, help=f"response filter '{name}'")
        add_exam_argument(parser, help="response filter 'exam': an exam's name or id")
        parser.add_argument("--response-ids", help="Comma-separated response ids (combined with the filters).")
        parser.add_argument("--note", default="")
        parser.add_argument("--chunk-size", type=int)
        parser.add_argument("--batch", action="store_true",
                            help="Send the calls through the endpoint's Batch API (cheaper, slower; docs/judges.md).")
        parser.add_argument("--batch-retry", choices=JudgeRun.BatchRetry.values, default=JudgeRun.BatchRetry.LIVE,
                            help="With --batch: lines a batch fails are sent again live (default) or in a next batch.")
        parser.add_argument("--resume", type=int, metavar="RUN", help="Resume this run instead of starting one.")
        parser.add_argument("--cancel", type=int, metavar="RUN", help="Cancel this run.")
        mode = parser.add_mutually_exclusive_group()
        mode.add_argument("--inline", action="store_true", help="Do the work in this process (no Celery worker).")
        mode.add_argument("--wait", action="store_true", help="Queue it, then follow the progress until it ends.")
        mode.add_argument("--dry-run", dest="dry_run", action="store_true",
                          help="Print the calls, tokens and cost (live and batch) the run would have; start nothing, send nothing.")

    def handle(self, *args, **options):
        if options["cancel"]:
            run = services.cancel_judge_run(self._run(options["cancel"]))
            self.stdout.write(gettext("Run %(pk)s: %(status)s.") % {"pk": run.pk, "status": run.get_status_display()})
            return
        if options["dry_run"]:
            self._dry_run(options)
            return
        if options["resume"]:
            run = services.resume_judge_run(self._run(options["resume"]), enqueue=not options["inline"])
            self.stdout.write(gettext("Run %(pk)s resumed (epoch %(epoch)s).") % {"pk": run.pk, "epoch": run.epoch})
        else:
            run = self._start(options)
        if options["inline"]:
            run = services.run_inline(run)
        elif options["wait"]:
            run = follow(run, selectors.run_progress, lambda p: (
                f"{p['done']}/{p['total']} done, {p['error']} failed, {p['cached']} cached"), self.stdout)
        self._summary(run)

    def _run(self, pk):
        try:
            return JudgeRun.objects.get(pk=pk)
        except JudgeRun.DoesNotExist as exc:
            raise CommandError(gettext("No run %(pk)s.") % {"pk": pk}) from exc

    def _dry_run(self, options):
        setting, params, ids = self._selection(options)
        try:
            e = services.estimate_judge_run(setting, params=params, response_ids=ids)
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        cost = (gettext("cost live %(live)s, batch %(batch)s") % {"live": e["cost_live"], "batch": e["cost_batch"]}
                if e["priced"] else gettext("no prices set on this setting"))
        self.stdout.write(gettext(
            "Dry run of %(config)s over %(n)s responses (nothing sent): %(calls)s calls, %(cached)s from cache, "
            "input tokens %(tin)s, output tokens %(tout)s, %(cost)s.") % {
                "config": setting, "n": e["n_items"], "calls": e["calls"], "cached": e["cached"],
                "tin": e["input_tokens"], "tout": e["output_tokens"], "cost": cost})
        for line in services.describe_estimate(e):
            self.stdout.write(f"  - {line}")

    def _selection(self, options):
        if not options["setting"]:
            raise CommandError(gettext("Give --setting NAME (or --resume/--cancel RUN)."))
        judge_settings = JudgeSetting.objects.filter(name=options["setting"])
        if options["setting_version"]:
            judge_settings = judge_settings.filter(version=options["setting_version"])
        setting = judge_settings.order_by("-version").first()
        if setting is None:
            known = ", ".join(sorted(set(JudgeSetting.objects.values_list("name", flat=True)))) or "none yet"
            raise CommandError(gettext("No setting %(setting)s (version %(value)s). Known: %(known)s.") % {"setting": repr(options['setting']), "value": options['setting_version'] or 'any', "known": known})
        params = {name: str(options[name]) for name in FILTERS if options.get(name) not in (None, "")}
        if options.get("exam") not in (None, ""):
            params["exam"] = exam_id_of(options)
        ids = None
        if options["response_ids"]:
            try:
                ids = [int(x) for x in options["response_ids"].split(",") if x.strip()]
            except ValueError as exc:
                raise CommandError(gettext("--response-ids takes numbers separated by commas.")) from exc
        return setting, params, ids

    def _start(self, options):
        setting, params, ids = self._selection(options)
        try:
            run = services.start_judge_run(
                setting, params=params, response_ids=ids, note=options["note"], chunk_size=options["chunk_size"],
                enqueue=not options["inline"], mode=JudgeRun.Mode.BATCH if options["batch"] else JudgeRun.Mode.LIVE,
                batch_retry=options["batch_retry"],
            )
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        self.stdout.write(gettext("Run %(pk)s of %(config)s: %(n_items)s responses (%(value)s).") % {"pk": run.pk, "config": setting, "n_items": run.n_items, "value": 'in this process' if options['inline'] else 'queued'})
        return run

    def _summary(self, run):
        p = selectors.run_progress(run)
        self.stdout.write(
            gettext("Run %(pk)s: %(status)s · %(done)s/%(total)s · ok %(ok)s, invalid %(invalid)s, failed %(error)s, from cache %(cached)s · tokens %(prompt_tokens)s in / %(completion_tokens)s out · cost %(cost)s · latency p50 %(latency_ms_p50)s ms · /grading/judges/runs/%(pk)s/") % {"pk": run.pk, "status": run.get_status_display(), "done": p['done'], "total": p['total'], "ok": p['ok'], "invalid": p['invalid'], "error": p['error'], "cached": p['cached'], "prompt_tokens": p['prompt_tokens'], "completion_tokens": p['completion_tokens'], "cost": p['cost'], "latency_ms_p50": p['latency_ms_p50']}
        )
