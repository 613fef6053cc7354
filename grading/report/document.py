"""The methods report as text (Markdown or LaTeX), built from the JSON appendix alone.

A report is a list of *section functions*: each takes the appendix (grading.report.selectors.
report_data) and returns a Section (a title and blocks: paragraphs and tables) or None to leave
itself out. `build(data, fmt, sections)` renders them. Invariants:

- every figure printed is a value of the appendix, formatted by `number` (integers as they are,
  other numbers with three decimals), so a reader finds each one there (tests check it);
- text from the data (exam, setting and model names) is escaped for the format: LaTeX special
  characters (\\ & % $ # _ { } ~ ^ < > |) become commands, Markdown table cells lose their pipes
  and line breaks. The LaTeX output is a fragment (sections and tabulars, no preamble) to paste
  into a paper.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

from django.utils.translation import gettext

FORMATS = ("markdown", "latex")
DASH = "—"


@dataclass
class Table:
    header: list
    rows: list
    caption: str = ""


@dataclass
class Section:
    title: str
    blocks: list = field(default_factory=list)  # str (a paragraph) or Table


# --- numbers ---------------------------------------------------------------------------------

def number(value) -> str:
    """How a figure is printed: integers as they are, other numbers with three decimals, None as a dash."""
    if value is None:
        return DASH
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    return f"{float(value):.3f}"


def interval(bounds) -> str:
    if not bounds or bounds[0] is None or bounds[1] is None:
        return DASH
    return f"[{number(bounds[0])}, {number(bounds[1])}]"


def with_interval(value, bounds) -> str:
    text = number(value)
    return text if interval(bounds) == DASH else f"{text} {interval(bounds)}"


# --- sections --------------------------------------------------------------------------------

def methods_section(data) -> Section:
    d = data["dataset"]
    sources = {row["source"]: row["n"] for row in d["answers"]["by_source"]}
    judges = data["judges"]
    paragraph = (
        f"The dataset holds {number(d['questions'])} questions in {number(d['n_exams'])} exam(s) and "
        f"{number(d['answers']['total'])} answers ({number(sources.get('human', 0))} human, "
        f"{number(sources.get('synthetic', 0))} synthetic). {number(d['experts'])} expert(s) submitted labels; "
        f"{number(d['labels']['imported'])} answers carry an imported gold label, and an answer has "
        f"{number(d['labels']['per_answer_mean'])} submitted labels on average. "
        f"Expert agreement is measured on the totals of label pairs given to the same answer (an imported gold "
        f"label counts as a rater): exact agreement, agreement within one point, mean absolute difference, "
        f"Cohen's kappa with quadratic weights, Krippendorff's alpha and the intraclass correlation. "
        f"{number(data['n_settings'])} judge setting version(s) are compared with the gold score of each answer "
        f"(imported, agreed or adjudicated): mean squared error (MSE), FR_d for d from "
        f"{number(data['fr_distances'][0])} to {number(data['fr_distances'][-1])} (the share of answers whose judge "
        f"score differs from the gold score by at least d points), and Pearson and Spearman correlations. "
        f"A setting is identified by its model, temperature and prompt hash (sha256 of its system prompt and "
        f"template as sent). Intervals are {number(data['confidence_percent'])}% percentile bootstrap intervals "
        f"from {number(data['bootstrap_resamples'])} resamples of answers (label pairs for agreement), seed "
        f"{number(data['seed'])}."
    )
    if not judges:
        paragraph += " No judge setting has results yet."
    return Section("Methods", [paragraph])


def dataset_section(data) -> Section:
    d = data["dataset"]
    exams = Table(["Exam", "Questions", "Human answers", "Synthetic answers"], [
        [row["name"], number(row["n_questions"]), number(row["n_human"]), number(row["n_synthetic"])]
        for row in d["exams"]
    ], "Questions")
    sources = Table(["Source", "Answers"], [[row["source"], number(row["n"])] for row in d["answers"]["by_source"]]
                    + [["total", number(d["answers"]["total"])]], "Answers by source")
    people = Table(["Experts", "Labels by experts", "Imported gold labels", "Labels per answer (mean)"], [[
        number(d["experts"]), number(d["labels"]["by_experts"]), number(d["labels"]["imported"]),
        number(d["labels"]["per_answer_mean"]),
    ]], "Experts and labels")
    per_answer = Table(["Labels", "Answers"], [
        [number(row["labels"]), number(row["answers"])] for row in d["labels"]["per_answer"]
    ], "Labels per answer")
    return Section("Data", [exams, sources, people, per_answer])


def agreement_section(data) -> Section:
    a = data["agreement"]
    rows = [
        ["Exact agreement", number(a["exact"]), interval(a.get("exact_ci"))],
        ["Within one point", number(a["within_one"]), interval(a.get("within_one_ci"))],
        ["Mean absolute difference", number(a["mad"]), interval(a.get("mad_ci"))],
        ["Weighted kappa (mean of pairs)", number(a["kappa"]), DASH],
        ["Krippendorff's alpha (interval)", number(a["alpha"]), DASH],
        ["ICC (one-way, single rater)", number(a["icc"]), DASH],
    ]
    note = (f"Over {number(a['responses'])} answers with two labels or more ({number(a['label_pairs'])} label "
            f"pairs). Kappa, alpha and the ICC are given without intervals.")
    return Section("Expert agreement", [note, Table(["Measure", "Value", "95% CI"], rows)])


def settings_section(data) -> Section:
    if not data["judges"]:
        return Section("Judge settings", ["No judge setting has results yet."])
    rows = [[j["name"], number(j["version"]), j["kind"], j["model"] or DASH, number(j["temperature"]),
             j["prompt_hash_short"]] for j in data["judges"]]
    return Section("Judge settings", [Table(["Setting", "Version", "Kind", "Model", "Temperature", "Prompt hash"], rows,
                                            "Prompt hash: the first characters of the sha256 in the appendix.")])


def metrics_section(data) -> Section | None:
    if not data["judges"]:
        return None
    overall, by_source = [], []
    for j in data["judges"]:
        o = j["overall"]
        overall.append([f"{j['name']} v{j['version']}", number(o["n"]), with_interval(o["mse"], o.get("mse_ci")),
                        with_interval(o["fr_1"], o.get("fr_1_ci")), with_interval(o["fr_2"], o.get("fr_2_ci")),
                        with_interval(o["pearson"], o.get("pearson_ci")), with_interval(o["spearman"], o.get("spearman_ci"))])
        for row in j["by_source"]:
            by_source.append([f"{j['name']} v{j['version']}", row["source"], number(row["n"]),
                              with_interval(row["mse"], row.get("mse_ci")), with_interval(row["fr_2"], row.get("fr_2_ci"))])
    return Section("Judge versus gold", [
        Table(["Setting", "n", "MSE", "FR_1", "FR_2", "Pearson", "Spearman"], overall, "All answers, with 95% intervals"),
        Table(["Setting", "Source", "n", "MSE", "FR_2"], by_source, "By source"),
    ])


def categories_section(data) -> Section:
    c = data["categories"]
    codes = [row["code"] for row in c["codes"]]
    if not c["total"]:
        return Section("Disagreement categories", ["No disagreement has been classified yet."])
    rows = [["all judges", *(number(n) for n in c["counts"]), number(c["total"])]]
    rows += [[row["judge"], *(number(n) for n in row["counts"]), number(row["total"])] for row in c["by_judge"]]
    legend = "; ".join(f"{row['code']}: {row['name']}" for row in c["codes"])
    return Section("Disagreement categories", [legend, Table(["Judge", *codes, "Total"], rows)])


def probes_section(data) -> Section:
    rows = []
    for j in data["judges"]:
        for probe, figures in sorted((j.get("probes") or {}).items()):
            rows.append([f"{j['name']} v{j['version']}", probe, number(figures.get("n")), number(figures.get("detected")),
                         with_interval(figures.get("rate"), figures.get("ci"))])
    if not rows:
        return Section("Perturbation probes", ["No probes run."])
    return Section("Perturbation probes", [
        Table(["Setting", "Probe", "n", "Detected", "Rate"], rows,
              "Sensitivity probes: a fair judge lowers the score; invariance probes: it keeps it (Wilson intervals).")
    ])


def strategies_section(data) -> Section | None:
    """Issue 27: each score judge's prompt strategy; for few-shot the rule, seed, examples and hold-out."""
    rows, examples = [], []
    for j in data["judges"]:
        few = j.get("few_shot")
        if j.get("strategy") in (None, "reason-then-score") and not few and not j.get("prompt_set"):
            continue
        rows.append([f"{j['name']} v{j['version']}", j.get("strategy") or DASH, number(j.get("strategy_version")),
                     j.get("prompt_set") or DASH, number(few["k"]) if few else DASH,
                     (few["split_rule"] or DASH) if few else DASH, number(few["seed"]) if few else DASH,
                     number(few["n_holdout"]) if few else DASH])
        for question, ids in sorted(((few or {}).get("examples") or {}).items(), key=lambda kv: int(kv[0])):
            examples.append([f"{j['name']} v{j['version']}", question, ", ".join(number(i) for i in ids)])
    if not rows:
        return None
    blocks = [Table(["Setting", "Strategy", "Template version", "Prompt set", "k", "Split rule", "Seed", "Hold-out"],
                    rows, "Few-shot examples are a hold-out: never judged by their setting, never counted.")]
    if examples:
        blocks.append(Table(["Setting", "Question id", "Example answer ids"], examples, "Few-shot examples"))
    return Section("Prompt strategies", blocks)


def comparison_section(data) -> Section | None:
    """Issue 27: paired differences B - A between the score judges, hold-outs excluded."""
    c = data.get("comparison") or {}
    if not c.get("pairs"):
        return None
    rows = []
    for pair in c["pairs"]:
        m = pair["measures"]
        rows.append([pair["a"], pair["b"], number(pair["n_common"]), number(pair["n_holdout_excluded"]),
                     with_interval(m["mae"]["difference"], m["mae"]["ci"]), with_interval(m["mse"]["difference"], m["mse"]["ci"]),
                     with_interval(m["fr_2"]["difference"], m["fr_2"]["ci"]), number(pair["sign_test_p"]),
                     number(pair["permutation_p"])])
    return Section("Settings compared, paired", [
        f"Differences are B − A on the answers both settings scored (an error measure below zero: B is closer to "
        f"gold); intervals: {c['resampling']}; counted: {c['rule']}.",
        Table(["A", "B", "n", "Hold-outs excluded", "MAE B − A", "MSE B − A", "FR_2 B − A", "Sign test p",
               "Permutation p"], rows),
    ])


def geometry_section(data) -> Section | None:
    """Error geometry and step surprisal (grading/studies/geometry): the newest analysed run of each."""
    figures = data.get("geometry") or {}
    geometry, surprisal = figures.get("geometry"), figures.get("surprisal")
    if not geometry and not surprisal:
        return None
    blocks = []
    if geometry:
        source = geometry["label"] if not geometry["model"] else f"{geometry['model']} ({geometry['endpoint']})"
        rows = [[name, number(g["n"]), with_interval(g["dispersion"], g["dispersion_ci"]),
                 with_interval(g["total_variance"], g["total_variance_ci"]), with_interval(g["top10_share"], g["top10_share_ci"]),
                 number(g["clusters"]), number(g["noise_share"]), number(g["silhouette"]), number(g["gmm_best_k"])]
                for name, g in geometry["groups"].items()]
        blocks.append(f"Error segments embedded with {source}, run {geometry['run']}, seed {geometry['seed']}.")
        blocks.append(Table(["Group", "n", "Dispersion", "Total variance", "Top-10 share", "Clusters", "Noise",
                             "Silhouette", "GMM k"], rows,
                            "Dispersion: mean cosine distance to the 5 nearest neighbours; 95% intervals resample questions."))
        test = (geometry.get("human_vs_synthetic") or {}).get("dispersion")
        if test:
            blocks.append(f"Dispersion, human minus synthetic: {number(test['difference'])} "
                          f"(permutation test, p = {number(test['p'])}).")
    if surprisal:
        rows = [[name, number(g["transitions"]), with_interval(g["surprisal"]["mean"], g["surprisal"]["mean_ci"]),
                 number(g["surprisal"]["median"]), with_interval(g["ll"]["mean"], g["ll"]["mean_ci"]),
                 number(g["ll"]["median"]), number(g["ll_lower_bound"])]
                for name, g in surprisal["groups"].items()]
        blocks.append(f"Step surprisal under {surprisal['model']} ({surprisal['endpoint']}), run {surprisal['run']}.")
        blocks.append(Table(["Group", "Transitions", "Surprisal (nats)", "Median", "LL", "Median", "LL lower bounds"], rows,
                            "LL: highest probability at the context's last position among the next step's tokens."))
    return Section("Error geometry and step surprisal", blocks)


SECTIONS: list[Callable] = [
    methods_section, dataset_section, agreement_section, settings_section, metrics_section, categories_section,
    probes_section, strategies_section, comparison_section, geometry_section,
]


# --- rendering -------------------------------------------------------------------------------

_LATEX = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
    "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"\textless{}", ">": r"\textgreater{}",
    "|": r"\textbar{}",
}


def latex_escape(text) -> str:
    return "".join(_LATEX.get(ch, ch) for ch in str(text))


def markdown_cell(text) -> str:
    return " ".join(str(text).replace("\\", "\\\\").replace("|", "\\|").split())


def _markdown(sections) -> str:
    out = ["# Methods report", ""]
    for section in sections:
        out += [f"## {section.title}", ""]
        for block in section.blocks:
            if isinstance(block, Table):
                if block.caption:
                    out += [f"*{markdown_cell(block.caption)}*", ""]
                out.append("| " + " | ".join(markdown_cell(h) for h in block.header) + " |")
                out.append("|" + "|".join("---" for _ in block.header) + "|")
                out += ["| " + " | ".join(markdown_cell(c) for c in row) + " |" for row in block.rows]
            else:
                out.append(block)
            out.append("")
    return "\n".join(out)


def _latex(sections) -> str:
    out = ["% Methods report (RealMath Workbench). A fragment: \\input{} it into a document.", ""]
    for section in sections:
        out += [f"\\section*{{{latex_escape(section.title)}}}", ""]
        for block in section.blocks:
            if isinstance(block, Table):
                out.append("\\begin{table}[h]\\centering\\small")
                if block.caption:
                    out.append(f"\\textit{{{latex_escape(block.caption)}}}\\par\\smallskip")
                out.append("\\begin{tabular}{l" + "r" * (len(block.header) - 1) + "}")
                out.append("\\hline")
                out.append(" & ".join(latex_escape(h) for h in block.header) + " \\\\")
                out.append("\\hline")
                out += [" & ".join(latex_escape(c) for c in row) + " \\\\" for row in block.rows]
                out += ["\\hline", "\\end{tabular}", "\\end{table}"]
            else:
                out.append(latex_escape(block))
            out.append("")
    return "\n".join(out)


def build_sections(data: dict, sections: list[Callable] | None = None) -> list[Section]:
    """The report's sections (paragraphs and tables of printed figures) from the appendix `data`."""
    return [s for s in (section(data) for section in (SECTIONS if sections is None else sections)) if s is not None]


def build(data: dict, fmt: str = "markdown", sections: list[Callable] | None = None) -> str:
    """The report text in `fmt` (markdown or latex) from the appendix `data`."""
    if fmt not in FORMATS:
        raise ValueError(gettext("Unknown format %(fmt)s; choose one of %(join)s.") % {"fmt": repr(fmt), "join": ', '.join(FORMATS)})
    built = build_sections(data, sections)
    return _markdown(built) if fmt == "markdown" else _latex(built)


def appendix_json(data: dict) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True)


def embedded(text: str, data: dict, fmt: str) -> str:
    """The report with its appendix appended (for stdout, where no file sits beside it)."""
    if fmt == "markdown":
        return f"{text}\n## Appendix (JSON)\n\n```json\n{appendix_json(data)}\n```\n"
    # In JSON every backslash is doubled, so "\end{verbatim}" cannot occur inside it.
    return f"{text}\n\\section*{{Appendix (JSON)}}\n\\begin{{verbatim}}\n{appendix_json(data)}\n\\end{{verbatim}}\n"
