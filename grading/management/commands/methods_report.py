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
        for name, module in report.report_choices().items():  # the later apps' runs: --geometry-run, --surprisal-run
            parser.add_argument(f"--{name}-run", dest=f"{name}_run", type=int, help=module.CHOICES[name]["help"])

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
        for kind, module in report.report_choices().items():
            pk = options[f"{kind}_run"]
            if pk is None:
                continue
            runs[kind] = module.chosen(kind, pk)
            if runs[kind] is None:
                choices = ", ".join(str(row["id"]) for row in module.choice_options(kind)) or gettext("none")
                raise CommandError(gettext("--%(kind)s-run %(pk)s: no analysed %(kind)s run has this id (analysed "
                                           "runs: %(choices)s).") % {"kind": kind, "pk": pk, "choices": choices})
        data = report.report_data(setting, bootstrap=options["bootstrap"], seed=options["seed"], choices=runs)
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
