"""The judge studies' part of the methods report, read by grading.report through its hook (named
as `report_section` on studies' AppConfig, as `export_section` is for the export; grading does not
import studies): each judge setting's probe rates (`judge_parts`, in that setting's entry of the
appendix), the style ablation, the OCR-vs-judge attribution and the error-geometry and
step-surprisal runs (`report_parts`, under `style_ablation`, `ocr_attribution` and `geometry`),
the runs a reader may choose instead of the newest (`CHOICES`), and the sections that print them
(`SECTIONS`). Every figure printed is a value of the appendix (grading.report.document).
"""
from __future__ import annotations

from django.utils.translation import gettext, gettext_lazy

from core import paired, uncertainty
from grading.labels import label
from grading.models import JudgeSetting
from grading.report.document import Section, Table, number, p_value, with_interval, with_interval_or_note

from . import probes as probe_names
from . import selectors, style
from .geometry.models import GeometryRun
from .models import ProbeItem, ProbeRun


def probe_rates_for(setting: JudgeSetting, seed: int = 0) -> dict:
    """The perturbation-probe study's rates of one setting version: {probe name: {"n", "detected",
    "rate", "ci": [lo, hi]}}, only the probes measured on at least one answer ({} when none ran)."""
    return {name: rates for name, rates in selectors.probe_rates(setting, seed=seed).items() if rates["n"]}


# --- the appendix ------------------------------------------------------------------------------

def judge_parts(setting: JudgeSetting, *, seed: int = 0) -> dict:
    """This study's figures in a judge setting's entry of the appendix: its probe rates."""
    return {"probes": probe_rates_for(setting, seed)}


def report_parts(judge_settings, *, setting=None, bootstrap: int, seed: int, choices: dict | None = None) -> dict:
    """The studies' keys of the appendix for the report's settings (`setting`: the one chosen, or
    None for all); `choices`: {name in CHOICES: the run chosen} (default: the newest of each)."""
    choices = choices or {}
    return {
        "geometry": geometry_figures(choices.get("geometry"), choices.get("surprisal")),
        "style_ablation": style_figures(judge_settings, setting, bootstrap=bootstrap, seed=seed),
        "ocr_attribution": attribution_figures(judge_settings),
    }


# The runs a reader may choose for the report (the page's query parameter; the command's
# --<name>-run option): the analysed error-geometry and step-surprisal runs.
CHOICES = {
    "geometry": {"label": gettext_lazy("Error-geometry run"),
                 "help": "The analysed error-geometry run to report (default: the newest)."},
    "surprisal": {"label": gettext_lazy("Step-surprisal run"),
                  "help": "The analysed step-surprisal run to report (default: the newest)."},
}


def choice_options(name: str) -> list[dict]:
    """The runs of choice `name` a reader may pick, newest first: {id, label} (one query)."""
    return [{"id": row["id"], "label": f"{gettext('run %(id)s') % {'id': row['id']}} · {row['model'] or row['backend']}"}
            for row in geometry_runs(name)]


def chosen(name: str, pk) -> GeometryRun | None:
    """The analysed run `pk` of choice `name`, or None (an unknown id, another kind, not analysed)."""
    return geometry_run(pk, name)


GEOMETRY_KEYS = ("n", "questions", "dispersion", "dispersion_ci", "total_variance", "total_variance_ci", "top10_share",
                 "top10_share_ci", "clusters", "noise_share", "silhouette")
SURPRISAL_KEYS = ("segments", "transitions", "ll_lower_bound", "top_k")


def geometry_runs(kind: str) -> list[dict]:
    """The analysed runs of a study kind ("geometry" or "surprisal"), newest first, for the
    report's run picker: {id, label, model, analysed} (one query; the results are not read)."""
    rows = (GeometryRun.objects.filter(kind=kind, analysis_state=GeometryRun.Analysis.DONE)
            .order_by("-analysed", "-id").values("id", "backend", "model", "analysed"))
    return [{"id": row["id"], "backend": row["backend"], "model": row["model"],
             "analysed": row["analysed"].isoformat() if row["analysed"] else None} for row in rows]


def geometry_run(pk, kind: str) -> GeometryRun | None:
    """The analysed run `pk` of this kind, or None (an unknown id, another kind, not analysed)."""
    if pk is None:
        return None
    return GeometryRun.objects.filter(pk=pk, kind=kind, analysis_state=GeometryRun.Analysis.DONE).first()


def _newest_run(kind):
    return (GeometryRun.objects.filter(kind=kind, analysis_state=GeometryRun.Analysis.DONE)
            .order_by("-analysed", "-id").first())


def geometry_figures(geometry_run: GeometryRun | None = None, surprisal_run: GeometryRun | None = None) -> dict:
    """The chosen (default: the newest) analysed error-geometry and step-surprisal runs, their
    headline figures only (no heatmaps or curves): {"geometry": {...} | None, "surprisal": {...} | None,
    "chosen": {kind: true when a run was chosen, false for the newest}}."""
    out = {"chosen": {"geometry": geometry_run is not None, "surprisal": surprisal_run is not None}}
    for kind, keys, run in (("geometry", GEOMETRY_KEYS, geometry_run), ("surprisal", SURPRISAL_KEYS, surprisal_run)):
        run = run or _newest_run(kind)
        results = run.results if run is not None else None
        if not results:
            out[kind] = None
            continue
        groups = {}
        for name, group in (results.get("groups") or {}).items():
            entry = {key: group.get(key) for key in keys}
            if kind == "geometry":
                entry["gmm_best_k"] = (group.get("gmm") or {}).get("best_k")
                entry["gmm_at_edge"] = bool((group.get("gmm") or {}).get("at_edge"))  # the largest k tried
            else:
                for measure in ("surprisal", "ll"):
                    entry[measure] = {k: (group.get(measure) or {}).get(k) for k in ("mean", "mean_ci", "median", "median_ci")}
            groups[name] = entry
        out[kind] = {
            "run": results.get("run", run.pk), "label": results.get("label"), "model": results.get("model"),
            "endpoint": (results.get("endpoint") or {}).get("base_url"), "selection": results.get("selection"),
            "seed": (results.get("params") or {}).get("seed"), "groups": groups,
            "human_vs_synthetic": _with_p_text(results.get("human_vs_synthetic")),
            "human_vs_probe_derived": _with_p_text(results.get("human_vs_probe_derived")),
        }
    return out


def _with_p_text(tests):
    """The permutation tests of a run, each with its p as printed (`p_text`: "< 0.0001" at the
    test's resolution, never "0.000"), so that the printed bound is a value of the appendix."""
    if not tests:
        return tests
    return {measure: {**test, "p_text": p_value(test.get("p"), test.get("resolution"))} if isinstance(test, dict) else test
            for measure, test in tests.items()}


STYLE_GROUPS = ("all", "human", "synthetic")
MAX_STYLE_RUNS = 6


def style_figures(judge_settings, setting=None, *, bootstrap: int, seed: int) -> dict:
    """The style ablation (studies/style.py): the newest style-ablation run of each
    setting of the report (of `setting` alone when one is chosen), at most MAX_STYLE_RUNS, with
    its before/after figures (style.ablation_report), and the rewrites' flag counts."""
    wanted = {c.pk for c in judge_settings} if setting is None else {setting.pk}
    runs = {}
    for pk, setting_id, names in ProbeRun.objects.order_by("-id").values_list("pk", "setting_id", "probes"):
        if style.PROBE in (names or []) and setting_id in wanted and setting_id not in runs:
            runs[setting_id] = pk
    chosen = ProbeRun.objects.select_related("setting").filter(pk__in=sorted(runs.values(), reverse=True)[:MAX_STYLE_RUNS])
    out = []
    for run in sorted(chosen, key=lambda r: -r.pk):
        report = style.ablation_report(run, n_resamples=bootstrap, seed=seed)
        second = report.get("with_flagged")
        out.append({"run": run.pk, "setting": str(run.setting), "status": run.status,
                    "n_rewrites_judged": report.get("n_rewrites_judged"), "n_items": report.get("n_items"),
                    "n_flagged_excluded": report.get("n_flagged_excluded"),
                    "include_flagged": bool(report.get("include_flagged")),
                    "n_flagged_judged": report.get("n_flagged_judged", 0),
                    "n_without_rewrite": report.get("n_without_rewrite"), "groups": _style_groups(report.get("groups")),
                    # the second, labelled analysis: flagged rewrites included (only when the run judged them)
                    "with_flagged": {"n_flagged": second["n_flagged"], "groups": _style_groups(second["groups"])}
                    if second else None})
    return {"difference": "after (rewrite) - before (original): negative = closer to gold after the rewrite",
            "resampling": paired.RESAMPLING, "runs": out,
            "rewrites": style.rewrite_counts() if out else None}


def _style_groups(groups) -> dict:
    """The report's part of style.ablation_report's groups: n, MAE, MSE and FR_2 before, after and
    the difference with its interval, and the permutation p."""
    out = {}
    for name in STYLE_GROUPS:
        block = (groups or {}).get(name)
        if block:
            out[name] = {"n": block["n"], "n_questions": block.get("n_questions"),
                         "measures": {m: block["measures"][m] for m in ("mae", "mse", "fr_2") if m in block["measures"]},
                         "permutation_p": (block.get("permutation") or {}).get("p_value"),
                         "permutation_p_text": uncertainty.format_p((block.get("permutation") or {}).get("p_value"),
                                                                    (block.get("permutation") or {}).get("resolution"))}
    return out


def attribution_figures(judge_settings, threshold: float = selectors.DEFAULT_THRESHOLD) -> dict:
    """OCR-vs-judge attribution (studies/selectors.attribution_tag) per setting of the
    report that judged raw OCR texts: scanned answers with a gold score judged on both texts (n,
    the latest judgement of each), and how many disagreements are tagged ocr, judge or both at
    the threshold (one query for every setting)."""
    latest = {}
    rows = (ProbeItem.objects.filter(run__setting__in=[c.pk for c in judge_settings], probe=probe_names.RAW_OCR,
                                     state=ProbeItem.State.OK, original_score__isnull=False,
                                     derived_score__isnull=False, derived__response__gold_score__isnull=False)
            .order_by("id").values_list("run__setting_id", "derived__response_id", "derived__response__gold_score",
                                        "original_score", "derived_score"))
    for setting_id, response_id, gold, verified, raw in rows:
        latest[(setting_id, response_id)] = (float(gold), verified, raw)
    per_setting = {}
    for (setting_id, _), (gold, verified, raw) in latest.items():
        counts = per_setting.setdefault(setting_id, {"n": 0, **{tag: 0 for tag in selectors.TAGS}})
        counts["n"] += 1
        tag = selectors.attribution_tag(abs(verified - gold), abs(raw - gold), threshold)
        if tag:
            counts[tag] += 1
    return {"threshold": threshold, "tags": list(selectors.TAGS),
            "settings": [{"setting": str(c), **per_setting[c.pk]} for c in judge_settings if c.pk in per_setting]}


# --- the sections --------------------------------------------------------------------------------

def probes_section(data) -> Section:
    rows = []
    for j in data["judges"]:
        for probe, figures in sorted((j.get("probes") or {}).items()):
            rows.append([f"{j['name']} v{j['version']}", label("probe", probe), number(figures.get("n")), number(figures.get("detected")),
                         with_interval_or_note(figures.get("rate"), figures.get("ci"), figures.get("ci_note"))])
    if not rows:
        return Section(gettext("Perturbation probes"), [gettext("No probes run.")])
    return Section(gettext("Perturbation probes"), [
        Table([gettext("Setting"), gettext("Probe"), "n", gettext("Detected"), gettext("Rate")], rows, gettext("Sensitivity probes: a fair judge lowers the score; invariance probes: it keeps it (intervals over "
                      "whole questions, Wilson at a rate of 0 or 1, none from fewer than 5 questions)."))
    ])


def style_section(data) -> Section:
    """The style ablation: each setting's newest run, before (original) and after (rewrite)."""
    s = data.get("style_ablation") or {}
    title = gettext("Style ablation")
    method = gettext("Answers are rewritten into a normalised textbook style keeping every step, error and omission; a "
                     "rewrite whose final answer changed or that dropped a line is flagged and left out. Each original "
                     "and its rewrite are judged by the same setting version, and the figures compare them on the same "
                     "answers: after (rewrite) minus before (original), below zero closer to gold after the rewrite, "
                     "with cluster-bootstrap intervals over questions and a permutation test.")
    if not s.get("runs"):
        return Section(title, [method, gettext("Style ablation: not run.")])

    def rows_of(run, groups):
        rows = []
        for name, g in groups.items():
            m = g["measures"]
            rows.append([run["setting"], number(run["run"]), gettext("all answers") if name == "all" else label("source", name),
                         number(g["n"]), number(m["mae"]["a"]), number(m["mae"]["b"]),
                         with_interval(m["mae"]["difference"], m["mae"]["ci"]),
                         with_interval(m["mse"]["difference"], m["mse"]["ci"]),
                         with_interval(m["fr_2"]["difference"], m["fr_2"]["ci"]),
                         g.get("permutation_p_text") or p_value(g["permutation_p"])])
        return rows

    header = [gettext("Setting"), gettext("Run"), gettext("Group"), "n", gettext("MAE before"), gettext("MAE after"),
              gettext("MAE after − before"), gettext("MSE after − before"), gettext("FR_2 after − before"),
              gettext("Permutation p")]
    counts, rows, second = [], [], []
    for run in s["runs"]:
        values = {"run": number(run["run"]), "setting": run["setting"], "judged": number(run["n_rewrites_judged"]),
                  "flagged": number(run["n_flagged_excluded"]), "missing": number(run["n_without_rewrite"]),
                  "flagged_judged": number(run.get("n_flagged_judged"))}
        counts.append(
            gettext("Run %(run)s (%(setting)s): %(judged)s rewrites judged, %(flagged_judged)s flagged ones judged apart "
                    "in a second analysis, %(missing)s answers without a rewrite.") % values if run.get("include_flagged")
            else gettext("Run %(run)s (%(setting)s): %(judged)s rewrites judged, %(flagged)s flagged and left out, "
                         "%(missing)s answers without a rewrite.") % values)
        rows += rows_of(run, run["groups"])
        if run.get("with_flagged"):
            second += rows_of(run, run["with_flagged"]["groups"])
    blocks = [method, " ".join(counts)]
    if rows:
        blocks.append(Table(header, rows, gettext("Rewrites not flagged")))
    if second:
        blocks.append(Table(header, second, gettext("Second analysis: flagged rewrites included")))
    return Section(title, blocks)


def attribution_section(data) -> Section:
    """OCR-vs-judge attribution: per setting, the disagreements on scanned answers by cause."""
    a = data.get("ocr_attribution") or {}
    title = gettext("OCR-vs-judge attribution")
    method = gettext("Scanned answers are judged twice by the same setting: on the verified transcript and on the raw OCR "
                     "text. A disagreement with the gold score of at least %(threshold)s points is tagged ocr (only the "
                     "raw text disagrees), judge (the verified text disagrees and the raw text is no worse) or both "
                     "(the raw text makes it worse by a point or more).") % {"threshold": number(a.get("threshold"))}
    if not a.get("settings"):
        return Section(title, [method, gettext("OCR attribution: not run.")])
    rows = [[row["setting"], number(row["n"]), number(row["ocr"]), number(row["judge"]), number(row["both"])]
            for row in a["settings"]]
    return Section(title, [method, Table([gettext("Setting"), gettext("Scanned answers judged"), label("attribution", "ocr"),
                                          label("attribution", "judge"), label("attribution", "both")],
                                         rows)])


def geometry_section(data) -> Section | None:
    """Error geometry and step surprisal (studies/geometry): the newest analysed run of each."""
    figures = data.get("geometry") or {}
    geometry, surprisal = figures.get("geometry"), figures.get("surprisal")
    chosen = figures.get("chosen") or {}
    blocks = [gettext("Error segments are the text of a sub-question where an answer lost points, grouped human and "
                      "synthetic. The error-geometry study embeds them and measures how spread out each group is; the "
                      "step-surprisal study measures how unexpected each step is after the previous ones under a "
                      "language model.")]
    if not geometry:
        blocks.append(gettext("Error geometry: not run (no analysed run)."))
    else:
        blocks.append(gettext("Error geometry: run %(run)s, chosen for this report.") % {"run": number(geometry["run"])}
                      if chosen.get("geometry") else
                      gettext("Error geometry: run %(run)s, the newest analysed run.") % {"run": number(geometry["run"])})
        source = geometry["label"] if not geometry["model"] else f"{geometry['model']} ({geometry['endpoint']})"
        rows = [[label("source", name), number(g["n"]), with_interval(g["dispersion"], g["dispersion_ci"]),
                 with_interval(g["total_variance"], g["total_variance_ci"]), with_interval(g["top10_share"], g["top10_share_ci"]),
                 number(g["clusters"]), number(g["noise_share"]), number(g["silhouette"]),
                 number(g["gmm_best_k"]) + (" " + gettext("(edge of the sweep)") if g.get("gmm_at_edge") else "")]
                for name, g in geometry["groups"].items()]
        blocks.append(gettext("Error segments embedded with %(source)s, run %(run)s, seed %(seed)s.")
                      % {"source": source, "run": geometry["run"], "seed": geometry["seed"]})
        blocks.append(Table([gettext("Group"), "n", gettext("Dispersion"), gettext("Total variance"),
                             gettext("Top-10 share"), gettext("Clusters"), gettext("Noise"), gettext("Silhouette"),
                             "GMM k"], rows, gettext("Dispersion: mean cosine distance to the 5 nearest neighbours; %(level)s%% intervals resample questions.")
                            % {"level": 95}))
        test = (geometry.get("human_vs_synthetic") or {}).get("dispersion")
        if test:
            blocks.append(gettext("Dispersion, human minus synthetic: %(difference)s (permutation test, p = %(p)s).")
                          % {"difference": number(test["difference"]), "p": p_value(test["p"], test.get("resolution"))})
        test = (geometry.get("human_vs_probe_derived") or {}).get("dispersion")
        if test:
            blocks.append(gettext("Dispersion, human minus probe-derived: %(difference)s (permutation test, p = %(p)s).")
                          % {"difference": number(test["difference"]), "p": p_value(test["p"], test.get("resolution"))})
    if not surprisal:
        blocks.append(gettext("Step surprisal: not run (no analysed run)."))
    else:
        blocks.append(gettext("Step surprisal: run %(run)s, chosen for this report.") % {"run": number(surprisal["run"])}
                      if chosen.get("surprisal") else
                      gettext("Step surprisal: run %(run)s, the newest analysed run.") % {"run": number(surprisal["run"])})
        rows = [[label("source", name), number(g["transitions"]), with_interval(g["surprisal"]["mean"], g["surprisal"]["mean_ci"]),
                 number(g["surprisal"]["median"]), with_interval(g["ll"]["mean"], g["ll"]["mean_ci"]),
                 number(g["ll"]["median"]), number(g["ll_lower_bound"])]
                for name, g in surprisal["groups"].items()]
        blocks.append(gettext("Step surprisal under %(model)s (%(endpoint)s), run %(run)s.")
                      % {"model": surprisal["model"], "endpoint": surprisal["endpoint"], "run": surprisal["run"]})
        blocks.append(Table([gettext("Group"), gettext("Transitions"), gettext("Surprisal (nats)"), gettext("Median"), "LL", gettext("Median"), gettext("LL lower bounds")], rows, gettext("LL: highest probability at the context's last position among the next step's tokens.")))
    return Section(gettext("Error geometry and step surprisal"), blocks)


SECTIONS = [probes_section, style_section, attribution_section, geometry_section]
