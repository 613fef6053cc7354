"""Write the methods report and its JSON appendix.

    python manage.py methods_report --format markdown --output report.md    # report.md and report.md.json
    python manage.py methods_report --setting rubric-gpt --format latex     # stdout, the appendix embedded
    python manage.py methods_report --geometry-run 4 --surprisal-run 5      # those study runs, not the newest

Every figure of the text is a value of the appendix (grading.report.selectors.report_data).
"""
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext

from grading.report import document
from grading.report import selectors as report
from grading.review import selectors as review


class Command(BaseCommand):
    help = "The methods report (Markdown or LaTeX) with a JSON appendix holding every figure it prints."

    def add_arguments(self, parser):
        parser.add_argument("--setting", help="One judge setting (its newest version unless --setting-version); "
                                              "default: every setting version with results.")
        parser.add_argument("--setting-version", dest="setting_version", type=int)
        parser.add_argument("--format", choices=document.FORMATS, default="markdown")
        parser.add_argument("--output", help="Write the report here and the appendix to OUTPUT.json; "
                                             "default: stdout, with the appendix embedded.")
        parser.add_argument("--bootstrap", type=int, default=review.BOOTSTRAP_RESAMPLES,
                            help="Bootstrap resamples for the intervals (0: none).")
        parser.add_argument("--seed", type=int, default=0, help="Seed of the bootstrap.")
        parser.add_argument("--geometry-run", dest="geometry_run", type=int,
                            help="The analysed error-geometry run to report (default: the newest).")
        parser.add_argument("--surprisal-run", dest="surprisal_run", type=int,
                            help="The analysed step-surprisal run to report (default: the newest).")

    def handle(self, *args, **options):
        if options["bootstrap"] < 0:
            raise CommandError(gettext("--bootstrap must be 0 or more."))
        if options["setting_version"] is not None and not options["setting"]:
            raise CommandError(gettext("--setting-version needs --setting."))
        setting = None
        if options["setting"]:
            try:
                setting = review.find_setting(options["setting"], options["setting_version"])
            except review.ScopeError as exc:
                raise CommandError(str(exc)) from exc
        runs = {}
        for kind in ("geometry", "surprisal"):
            pk = options[f"{kind}_run"]
            runs[kind] = report.geometry_run(pk, kind) if pk is not None else None
            if pk is not None and runs[kind] is None:
                choices = ", ".join(str(row["id"]) for row in report.geometry_runs(kind)) or gettext("none")
                raise CommandError(gettext("--%(kind)s-run %(pk)s: no analysed %(kind)s run has this id (analysed "
                                           "runs: %(choices)s).") % {"kind": kind, "pk": pk, "choices": choices})
        data = report.report_data(setting, bootstrap=options["bootstrap"], seed=options["seed"],
                                  geometry_run=runs["geometry"], surprisal_run=runs["surprisal"])
        text = document.build(data, options["format"])
        if not options["output"]:
            self.stdout.write(document.embedded(text, data, options["format"]))
            return
        path = Path(options["output"])
        appendix = path.with_name(path.name + ".json")
        try:
            path.write_text(text, encoding="utf-8")
            appendix.write_text(document.appendix_json(data), encoding="utf-8")
        except OSError as exc:
            raise CommandError(gettext("Cannot write the report: %(exc)s") % {"exc": exc}) from exc
        self.stdout.write(gettext("Report: %(path)s\nAppendix: %(appendix)s") % {"path": path, "appendix": appendix})
