"""Print the figures of the metrics page: `manage.py metrics [--setting NAME [--version N] | --run ID] --format json`."""
import csv
import json
import sys

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext

from core.csv_cells import safe_row
from grading.review import selectors
from grading.uncertainty_text import interval as interval_text

from ._scopes import named_scopes


class Command(BaseCommand):
    help = (
        "Judge-vs-gold metrics (n, MSE, MAE, signed error, FR_1..5, Pearson, Spearman, evaluation gap, bootstrap "
        "95% intervals) by source, question, level and batch, for one judge setting version, one run, or every "
        "setting with results; per-sub-question MAE, FR_1 and signed error under `sub_question_ledger`."
    )

    def add_arguments(self, parser):
        parser.add_argument("--setting", help="Judge setting name (its newest version unless --setting-version).")
        parser.add_argument("--setting-version", type=int, dest="setting_version", help="Setting version.")
        parser.add_argument("--run", type=int, help="One judge run instead of a setting.")
        parser.add_argument("--format", choices=["json", "csv", "text"], default="text")
        parser.add_argument("--bootstrap", type=int, default=selectors.BOOTSTRAP_RESAMPLES,
                            help="Bootstrap resamples for the intervals (0: none).")

    def handle(self, *args, **options):
        if options["bootstrap"] < 0:
            raise CommandError(gettext("--bootstrap must be 0 or more."))
        reports = [selectors.metrics_report(scope, bootstrap=options["bootstrap"]) for scope in self._scopes(options)]
        if options["format"] == "json":
            self.stdout.write(json.dumps(reports if len(reports) != 1 else reports[0], indent=2, ensure_ascii=False))
        elif options["format"] == "csv":
            writer = csv.writer(self.stdout)
            for index, report in enumerate(reports):
                rows = selectors.metrics_table(report)
                writer.writerows(safe_row(row) for row in (rows if index == 0 else rows[1:]))
        else:
            for report in reports:
                self._text(report)

    def _scopes(self, options):
        named = named_scopes(options)
        if named is not None:
            return named
        if options["setting_version"] is not None:
            raise CommandError(gettext("--setting-version needs --setting."))
        scopes = [selectors.Scope(setting=setting) for setting in selectors.settings_with_results()]
        if not scopes:
            raise CommandError(gettext("No judge setting has results yet."))
        return scopes

    def _text(self, report):
        out = self.stdout
        overall = report["overall"]
        out.write(f"{report['scope_label']}: {report['n_counted']} of {report['n_results']} results counted")
        for row in report["left_out"]:
            out.write(f"  left out: {row['n']} {row['label']}")
        fmt = lambda v: "—" if v is None else f"{v:.3f}"  # noqa: E731
        note = (overall.get("uncertainty") or {}).get("note", "")
        gap = report["gap"]
        gap_info = gap.get("uncertainty") or {}
        # Intervals as the pages print them (core.uncertainty): the reason where there is none.
        mse_ci = interval_text(overall.get("mse_ci"), fmt, note=note) if "mse_ci" in overall else ""
        out.write(f"  MSE {fmt(overall['mse'])} {mse_ci}  MAE {fmt(overall['mae'])}  "
                  f"signed {fmt(overall['mean_signed_error'])}  FR_2 {fmt(overall['fr_2'])}")
        ratio_ci = interval_text(gap["mse_ratio_ci"], fmt, unbounded=gap_info.get("ratio_unbounded", False),
                                 note=gap_info.get("note", ""))
        out.write(f"  gap: MSE human/synthetic {fmt(gap['mse_ratio'])} {ratio_ci}, "
                  f"FR_2 human {fmt(gap['fr2_human'])} vs synthetic {fmt(gap['fr2_synthetic'])}")
        for group in ("source", "level", "exam", "question"):
            for entry in report[f"by_{group}"]:
                out.write(f"  {group:8} {entry['label'][:40]:40} n={entry['n']:<6} MSE {fmt(entry['mse'])}  "
                          f"FR_2 {fmt(entry['fr_2'])}")
        for row in report["sub_question_ledger"]:
            label = f"{row['question_label']} {row['sub_question']}"
            out.write(f"  sub-q    {label[:40]:40} n={row['n']:<6} MAE {fmt(row['mae'])}  FR_1 {fmt(row['fr_1'])}  "
                      f"signed {fmt(row['mean_signed_error'])}")
        sys.stdout.flush()
