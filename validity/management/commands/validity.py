"""`manage.py validity SETTING [--exam E] [--question Q] [--source S] [--format json|table] ...`: the
Validity view's figures for a judge setting (a name or an id), as JSON or a short table."""
import json

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext

from annotation.management.exams import add_exam_argument, exam_option
from validity import selectors
from validity.report import SIGNALS, Parameters, for_selection


class Command(BaseCommand):
    help = "The Validity view's figures for a judge setting (name or id): JSON or a table."

    def add_arguments(self, parser):
        parser.add_argument("setting", help="judge setting name (its newest version) or version id")
        add_exam_argument(parser)
        parser.add_argument("--question", help="question id")
        parser.add_argument("--source", choices=["all", "human", "synthetic"], default="all")
        parser.add_argument("--second", help="a second setting whose disagreement is a deferral signal")
        parser.add_argument("--format", choices=["json", "table"], default="table")
        defaults = Parameters()
        parser.add_argument("--epsilon", type=float, default=defaults.epsilon)
        parser.add_argument("--alpha", type=float, default=defaults.alpha)
        parser.add_argument("--delta", type=float, default=defaults.delta)
        parser.add_argument("--d", type=float, default=defaults.d)
        parser.add_argument("--pass-mark", type=float, default=defaults.pass_mark)
        parser.add_argument("--width", type=float, default=defaults.width)
        parser.add_argument("--budget", type=int)
        parser.add_argument("--signal", choices=list(SIGNALS))
        parser.add_argument("--seed", type=int, default=0)

    def handle(self, *args, **options):
        exam = exam_option(options.get("exam"))  # --exam NAME_OR_ID, the one parser of every command
        options["exam"] = exam.name if exam is not None else None
        try:
            selection = selectors.selection_from(options)
        except selectors.SelectionError as exc:
            raise CommandError(gettext("No such %(what)s: %(value)s") % {
                "what": str(exc), "value": options.get(str(exc))}) from exc
        for name, low, high in (("epsilon", 0, 1), ("alpha", 0.001, 0.5), ("delta", 0.001, 0.5), ("pass_mark", 0.01, 1),
                                ("width", 0.001, 1)):
            if not low <= options[name] <= high:
                raise CommandError(gettext("--%(name)s must be from %(low)s to %(high)s.") % {
                    "name": name.replace("_", "-"), "low": low, "high": high})
        if options["budget"] is not None and options["budget"] < 2:
            raise CommandError(gettext("--budget must be at least 2."))
        params = Parameters(epsilon=options["epsilon"], alpha=options["alpha"], delta=options["delta"], d=options["d"],
                            pass_mark=options["pass_mark"], width=options["width"], seed=options["seed"],
                            budget=options["budget"], signal=options["signal"] or "")
        report, _ = for_selection(selection, params)
        if options["format"] == "json":
            self.stdout.write(json.dumps(report, ensure_ascii=False, indent=1))
            return
        self._table(report)

    def _table(self, report):
        aat, est, dfr, agr = report["alt_test"], report["estimates"], report["deferral"], report["agreement"]["all"]
        write = self.stdout.write
        write(gettext("%(answers)s answers, %(questions)s questions") % report)
        if aat["runnable"]:
            write(gettext("Alternative Annotator Test: omega %(omega).2f, rho %(rho).2f, %(verdict)s") % {
                "omega": aat["winning_rate"], "rho": aat["advantage_probability"],
                "verdict": gettext("passes") if aat["passes"] else gettext("fails")})
        else:
            needs = {"experts": gettext("three experts on the same answers"),
                     "items": gettext("more answers labelled by three experts")}
            write(gettext("Alternative Annotator Test: cannot run (needs: %(needs)s)") % {
                "needs": ", ".join(needs[n] for n in aat["needs"])})
        mean = est["figures"].get("mean_share")
        if mean:
            ppi = mean["ppi"]
            write(gettext("Mean score with the judge (PPI++): %(value).3f [%(low)s, %(high)s]") % {
                "value": ppi["value"], "low": _f(ppi["low"]), "high": _f(ppi["high"])})
        else:
            reasons = {"no_unlabelled": gettext("every answer has a gold; try --budget N"),
                       "few_golds": gettext("fewer than two answers have a gold")}
            write(gettext("Prediction-powered estimate: not computed (%(reason)s)") % {
                "reason": reasons.get(est.get("reason"), est.get("reason"))})
        write(gettext("Deferral: threshold %(threshold)s, %(humans)s answers for humans") % {
            "threshold": _f(dfr.get("threshold")), "humans": len(dfr.get("human_answers") or [])})
        write(gettext("Agreement with the gold: exact %(exact)s, within 1 %(within)s, QWK %(qwk)s, alpha %(alpha)s") % {
            "exact": _f(agr["exact"]), "within": _f(agr["within_1"]), "qwk": _f(agr["qwk"]), "alpha": _f(agr["alpha"])})
        self._step_report(report.get("step_report"))

    def _step_report(self, sr):
        """The rubric judge's step report against the experts: first wrong step, κ per checkpoint."""
        if not sr:
            return
        write = self.stdout.write
        fw = sr["first_wrong_step"]
        if fw:
            write(gettext("Rubric judge, first wrong step: exact %(exact)s, within one step %(within)s, none on right "
                          "answers %(ok)s, F1 %(f1)s (%(wrong)s wrong, %(right)s right answers)") % {
                "exact": _f(fw["accuracy_erroneous"]), "within": _f(fw["within_one"]), "ok": _f(fw["accuracy_correct"]),
                "f1": _f(fw["f1"]), "wrong": fw["erroneous"], "right": fw["correct"]})
        for row in sr["checkpoints"]["table"]:
            write(gettext("Question %(question)s checkpoint C%(number)s (%(source)s): n %(n)s, agreement %(agreement)s, "
                          "kappa %(kappa)s") % {
                "question": row["question_id"], "number": row["checkpoint"], "source": row["source"], "n": row["n"],
                "agreement": _f(row["agreement"]), "kappa": _f(row["kappa"])})


def _f(value):
    return "—" if value is None else f"{value:.3f}"
