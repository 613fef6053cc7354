"""Compare judge settings on the same answers:
`manage.py compare_settings A B [C ...] [--exam E] [--format json|table] [--bootstrap N] [--seed S]`.

A setting is named as `NAME` (its newest version), `NAME@VERSION` or `#ID` (a setting version id)."""
import json

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext

from annotation.management.exams import add_exam_argument, exam_option
from core import uncertainty
from grading.models import JudgeSetting
from grading.review import selectors

ROWS = (("MSE", "mse"), ("MAE", "mae"), ("|bias|", "abs_bias"), ("bias (signed; direction only)", "bias"),
        ("FR_1", "fr_1"), ("FR_2", "fr_2"),
        ("FR_3", "fr_3"), ("FR_4", "fr_4"), ("FR_5", "fr_5"), ("Pearson r", "pearson"))


def _number(value):
    return "—" if value is None else f"{value:.3f}"


class Command(BaseCommand):
    help = (
        "Judge setting versions compared pairwise on the answers both scored: the difference B - A in MSE, MAE, "
        "|bias|, signed bias, FR_1..FR_5 and Pearson r with cluster-bootstrap intervals (whole questions; none "
        "from fewer than 5), a question-level sign-flip permutation test and an exact sign test (which assumes "
        "independent answers) on the absolute errors, per source and "
        "per question, and the answers where one setting is within 1 of gold and the other off by 2 or more."
    )

    def add_arguments(self, parser):
        parser.add_argument("setting_names", metavar="SETTING", nargs="+",
                            help="Two or more settings: NAME, NAME@VERSION or #ID.")
        add_exam_argument(parser, help="Only answers of this exam (its name or id).")
        parser.add_argument("--format", choices=["json", "table"], default="table")
        parser.add_argument("--bootstrap", type=int, default=selectors.BOOTSTRAP_RESAMPLES,
                            help="Cluster-bootstrap resamples for the intervals (0: none).")
        parser.add_argument("--seed", type=int, default=0, help="Seed of the resamples and random sign patterns.")

    def handle(self, *args, **options):
        if options["bootstrap"] < 0:
            raise CommandError(gettext("--bootstrap must be 0 or more."))
        settings = [self._setting(name) for name in options["setting_names"]]
        exam = exam_option(options["exam"])
        try:
            data = selectors.compare_settings(settings, exam=exam, n_resamples=options["bootstrap"], seed=options["seed"])
        except selectors.CompareError as exc:
            raise CommandError(str(exc)) from exc
        if options["format"] == "json":
            self.stdout.write(json.dumps(data, indent=2, ensure_ascii=False))
        else:
            for pair in data["pairs"]:
                self._table(pair)

    def _setting(self, text):
        name, _, version = text.partition("@")
        number = text[1:] if text.startswith("#") else version
        if number and not (number.isascii() and number.isdigit() and len(number) < 12):
            raise CommandError(gettext("%(text)s is not a setting: give NAME, NAME@VERSION or #ID.") % {"text": repr(text)})
        if text.startswith("#"):
            setting = JudgeSetting.objects.filter(pk=int(number)).first()
            if setting is None:
                raise CommandError(gettext("No judge setting version with id %(number)s.") % {"number": number})
            return setting
        try:
            return selectors.find_setting(name, int(version) if version else None)
        except selectors.ScopeError as exc:
            raise CommandError(str(exc)) from exc

    def _table(self, pair):
        out = self.stdout
        overall = pair["overall"]
        out.write(f"A = {pair['a_label']}   B = {pair['b_label']}")
        out.write(f"  {pair['n_common']} answers of {overall['n_questions']} questions scored by both "
                  f"(only A: {pair['only_a']}, only B: {pair['only_b']}; hold-outs excluded: "
                  f"{pair['n_holdout_excluded']}); intervals: {overall['resampling']}")
        out.write(f"  {'measure':<26}{'A':>9}{'B':>9}{'B - A':>9}   95% interval")
        for title, key in ROWS:
            m = overall["measures"][key]
            low, high = m["ci"]
            interval = (f"[{_number(low)}, {_number(high)}]" if low is not None
                        else m.get("ci_note") or overall.get("interval_note") or "—")
            out.write(f"  {title:<26}{_number(m['a']):>9}{_number(m['b']):>9}{_number(m['difference']):>9}   "
                      f"{interval}")
        permutation = overall["permutation"]
        out.write(f"  permutation test, whole questions ({permutation['method']}): "
                  f"p = {uncertainty.format_p(permutation['p_value'], permutation.get('resolution'))}")
        sign = overall["sign_test"]
        out.write(f"  sign test on |error| (assumes independent answers): B closer on {sign['b_better']}, "
                  f"A closer on {sign['a_better']}, ties {sign['ties']}; p = {uncertainty.format_p(sign['p_value'])}")
        cases = pair["cases"]
        out.write(f"  A within 1 of gold, B off by >= 2: {cases['n_a_close_b_off']};"
                  f" B within 1, A off by >= 2: {cases['n_b_close_a_off']}")
        out.write("")
