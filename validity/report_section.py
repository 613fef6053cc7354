"""The Validity view's part of the methods report (grading.report.document.app_report_modules): per
judge setting, the Alternative Annotator Test, the prediction-powered mean, the deferral and the
chance-corrected agreement, with the method paragraph and its citations."""
from django.utils.translation import gettext

from grading.report.document import Section, Table, number

from .report import Parameters, for_selection
from .selectors import Selection

APPENDIX_KEY = "validity"


def _step_report_figures(sr):
    """A rubric judge's step report against the experts, in short: first wrong step, κ per checkpoint."""
    if not sr:
        return None
    fw = sr["first_wrong_step"] or {}
    return {"answers": sr["answers"], "unreadable": sr["unreadable"],
            **{k: fw.get(k) for k in ("erroneous", "correct", "accuracy_erroneous", "within_one", "accuracy_correct", "f1")},
            "checkpoints_with_kappa": sr["checkpoints"]["with_kappa"], "median_kappa": sr["checkpoints"]["median_kappa"]}


def report_figures(judge_settings, *, seed=0):
    """Each setting's validity figures over all its scored answers (the view's defaults, `seed`)."""
    rows = []
    for setting in judge_settings:
        report, answers = for_selection(Selection(setting), Parameters(seed=seed))
        if not answers:
            continue
        mean = report["estimates"]["figures"].get("mean_share", {}).get("ppi")
        rows.append({
            "setting": str(setting), "setting_id": setting.pk, "answers": report["answers"],
            "alt_test": {k: report["alt_test"][k] for k in ("runnable", "needs", "items", "epsilon", "winning_rate",
                                                             "advantage_probability", "passes")},
            "ppi_mean": mean, "estimates_reason": report["estimates"].get("reason"),
            "deferral": {k: report["deferral"].get(k) for k in ("signal", "threshold", "alpha", "delta", "d",
                                                                 "held_out_error_share", "reason")},
            "agreement": report["agreement"]["all"],
            "step_report": _step_report_figures(report.get("step_report")),
        })
    params = Parameters(seed=seed)
    return {
        "seed": seed, "settings": rows,
        # the method paragraph's citations and parameters, as printed (the report's text holds no figure
        # that is not a value of the appendix)
        "citations": {"alt_test": "Calderon, Reichart & Dror, 2025", "ppi": "Angelopoulos et al., 2023",
                      "ppi_plus_plus": "Angelopoulos, Duchi & Zrnic, 2023"},
        "parameters": {"epsilon": f"ε = {params.epsilon:g}", "pass": "ω ≥ 0.5",
                       "deferral": f"1 − δ = {1 - params.delta:g}, α = {params.alpha:g}, d = {params.d:g}"},
    }


def section(data):
    v = data.get(APPENDIX_KEY) or {}
    title = gettext("Validity")
    c, p = v.get("citations") or {}, v.get("parameters") or {}
    method = gettext(
        "May the judge replace an expert: the Alternative Annotator Test (%(aat)s) on answers labelled by three or more "
        "experts, each left out in turn, one-sided paired t-tests at %(epsilon)s corrected with Benjamini-Yekutieli; the "
        "judge passes at %(pass)s. The true mean score with the judge's help: prediction-powered inference with PPI++ "
        "power tuning (%(ppi)s; %(ppipp)s), its variance clustered by question. Deferral: the largest set of answers the "
        "judge may grade alone with a Learn-then-Test guarantee (Clopper-Pearson bounds, calibrated on half the students; "
        "%(deferral)s: with confidence 1 − δ, at most α of them are off by d points or more). Agreement with the gold: "
        "quadratic-weighted κ and Krippendorff's α beside raw exact agreement."
    ) % {"aat": c.get("alt_test", ""), "epsilon": p.get("epsilon", ""), "pass": p.get("pass", ""),
         "ppi": c.get("ppi", ""), "ppipp": c.get("ppi_plus_plus", ""), "deferral": p.get("deferral", "")}
    if not v.get("settings"):
        return Section(title, [method, gettext("Validity: no setting with results.")])
    rows = []
    for row in v["settings"]:
        aat, ppi, dfr, agr = row["alt_test"], row["ppi_mean"], row["deferral"], row["agreement"]
        verdict = (gettext("passes") if aat["passes"] else gettext("fails")) if aat["runnable"] else gettext("cannot run")
        rows.append([row["setting"], number(row["answers"]), verdict, number(aat["winning_rate"]),
                     number(aat["advantage_probability"]), number(ppi["value"]) if ppi else "—",
                     number(dfr["threshold"]), number(agr["exact"]), number(agr["qwk"]), number(agr["alpha"])])
    blocks = [method, Table([gettext("Setting"), gettext("Answers"), gettext("Alternative Annotator Test"),
                             "ω", "ρ", gettext("PPI mean (share)"), gettext("Deferral threshold"),
                             gettext("Exact"), "κ (quadratic)", "α"], rows)]
    steps = [row for row in v["settings"] if row.get("step_report")]
    if steps:
        blocks.append(gettext(
            "Rubric judges asked for their step report: the first wrong step they name against the experts' step labels "
            "(ProcessBench's accuracy on wrong and on right answers, F1), and per rubric checkpoint Cohen's κ between the "
            "judge's reached / not reached and the experts' checkpoint marks (partly reached counts as not reached); "
            "unreadable reports are left out, never guessed."))
        blocks.append(Table(
            [gettext("Setting"), gettext("Answers"), gettext("Unreadable"), gettext("Wrong step: exact"),
             gettext("Within one step"), gettext("None on right answers"), "F1", gettext("Checkpoints with κ"),
             gettext("Median κ")],
            [[row["setting"], number(s["answers"]), number(s["unreadable"]), number(s["accuracy_erroneous"]),
              number(s["within_one"]), number(s["accuracy_correct"]), number(s["f1"]),
              number(s["checkpoints_with_kappa"]), number(s["median_kappa"])]
             for row in steps for s in [row["step_report"]]]))
    return Section(title, blocks)
