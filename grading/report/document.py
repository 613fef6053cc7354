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

from django.utils.translation import gettext, gettext_noop, pgettext

from core import uncertainty
from core.app_hooks import app_modules
from grading.labels import label
from grading.review.selectors import METHOD_TEXT
from grading.uncertainty_text import note_from_english

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


def with_interval_or_note(value, bounds, note="") -> str:
    """A figure with its interval, or with why there is none, in the reader's language (`note`: the
    English core.uncertainty note of the appendix): "0.700 (not estimable: 1 question)"."""
    if interval(bounds) == DASH and note:
        return gettext("%(figure)s (%(reason)s)") % {"figure": number(value), "reason": note_from_english(note)}
    return with_interval(value, bounds)


def p_value(value, resolution=None) -> str:
    """A p-value never printed as 0.000: "< 0.0001" at the test's resolution (core.uncertainty);
    the figures give it as text (`*_p_text`), so that the printed bound is a value of the appendix."""
    return DASH if value is None else uncertainty.format_p(value, resolution)


# --- sections --------------------------------------------------------------------------------

def methods_section(data) -> Section:
    d = data["dataset"]
    sources = {row["source"]: row["n"] for row in d["answers"]["by_source"]}
    judges = data["judges"]
    paragraph = " ".join([
        gettext("The dataset holds %(questions)s questions in %(exams)s exam(s) and %(answers)s answers "
                "(%(human)s human, %(synthetic)s synthetic).") % {
            "questions": number(d["questions"]), "exams": number(d["n_exams"]),
            "answers": number(d["answers"]["total"]), "human": number(sources.get("human", 0)),
            "synthetic": number(sources.get("synthetic", 0))},
        gettext("%(experts)s expert(s) submitted labels; %(imported)s answers carry an imported gold label, and an "
                "answer has %(mean)s submitted labels on average.") % {
            "experts": number(d["experts"]), "imported": number(d["labels"]["imported"]),
            "mean": number(d["labels"]["per_answer_mean"])},
        gettext("Expert agreement is measured on the totals of label pairs given to the same answer (an imported "
                "gold label counts as a rater): exact agreement, agreement within one point, mean absolute "
                "difference, Cohen's kappa with quadratic weights, Krippendorff's alpha and the intraclass "
                "correlation."),
        gettext("%(settings)s judge setting version(s) are compared with the gold score of each answer (imported, "
                "agreed or adjudicated): mean squared error (MSE), FR_d for d from %(low)s to %(high)s (the share "
                "of answers whose judge score differs from the gold score by at least d points), and Pearson and "
                "Spearman correlations.") % {
            "settings": number(data["n_settings"]), "low": number(data["fr_distances"][0]),
            "high": number(data["fr_distances"][-1])},
        gettext("A setting is identified by its model, temperature and prompt hash (sha256 of its system prompt "
                "and template as sent). Intervals are %(percent)s%% cluster-bootstrap intervals from "
                "%(resamples)s resamples of whole questions (of whole answers for agreement), seed %(seed)s; "
                "none is given from fewer than five clusters.") % {
            "percent": number(data["confidence_percent"]), "resamples": number(data["bootstrap_resamples"]),
            "seed": number(data["seed"])},
    ])
    if not judges:
        paragraph += " " + gettext("No judge setting has results yet.")
    return Section(gettext("Methods"), [paragraph])


def dataset_section(data) -> Section:
    d = data["dataset"]
    exams = Table([gettext("Exam"), gettext("Questions"), gettext("Human answers"), gettext("Synthetic answers")], [
        [row["name"], number(row["n_questions"]), number(row["n_human"]), number(row["n_synthetic"])]
        for row in d["exams"]
    ], gettext("Questions"))
    sources = Table([gettext("Source"), gettext("Answers")], [[label("source", row["source"]), number(row["n"])] for row in d["answers"]["by_source"]]
                    + [[gettext("total"), number(d["answers"]["total"])]], gettext("Answers by source"))
    people = Table([gettext("Experts"), gettext("Labels by experts"), gettext("Imported gold labels"), gettext("Labels per answer (mean)")], [[
        number(d["experts"]), number(d["labels"]["by_experts"]), number(d["labels"]["imported"]),
        number(d["labels"]["per_answer_mean"]),
    ]], gettext("Experts and labels"))
    per_answer = Table([gettext("Labels"), gettext("Answers")], [
        [number(row["labels"]), number(row["answers"])] for row in d["labels"]["per_answer"]
    ], gettext("Labels per answer"))
    return Section(gettext("Data"), [exams, sources, people, per_answer])


def agreement_section(data) -> Section:
    a = data["agreement"]
    rows = [
        [gettext("Exact agreement"), number(a["exact"]), interval(a.get("exact_ci"))],
        [gettext("Within one point"), number(a["within_one"]), interval(a.get("within_one_ci"))],
        [gettext("Mean absolute difference"), number(a["mad"]), interval(a.get("mad_ci"))],
        [gettext("Weighted kappa (mean of pairs)"), number(a["kappa"]), DASH],
        [gettext("Krippendorff's alpha (interval)"), number(a["alpha"]), DASH],
        [gettext("ICC (one-way, single rater)"), number(a["icc"]), DASH],
    ]
    note = gettext("Over %(answers)s answers with two labels or more (%(pairs)s label pairs). Kappa, alpha and the "
                   "ICC are given without intervals.") % {"answers": number(a["responses"]),
                                                          "pairs": number(a["label_pairs"])}
    return Section(gettext("Expert agreement"), [note, Table([gettext("Measure"), gettext("Value"), gettext("95% CI")], rows)])


def settings_section(data) -> Section:
    if not data["judges"]:
        return Section(gettext("Judge settings"), [gettext("No judge setting has results yet.")])
    rows = [[j["name"], number(j["version"]), label("kind", j["kind"]), j["model"] or DASH, number(j["temperature"]),
             j["prompt_hash_short"]] for j in data["judges"]]
    return Section(gettext("Judge settings"), [Table([gettext("Setting"), gettext("Version"), gettext("Kind"), gettext("Model"), gettext("Temperature"), gettext("Prompt hash")], rows, gettext("Prompt hash: the first characters of the sha256 in the appendix."))])


def metrics_section(data) -> Section | None:
    judges = [j for j in data["judges"] if j.get("overall") is not None]  # answer checks: their own section
    if not judges:
        return None
    overall, by_source = [], []
    for j in judges:
        o = j["overall"]
        overall.append([f"{j['name']} v{j['version']}", number(o["n"]), with_interval(o["mse"], o.get("mse_ci")),
                        with_interval(o["fr_1"], o.get("fr_1_ci")), with_interval(o["fr_2"], o.get("fr_2_ci")),
                        with_interval(o["pearson"], o.get("pearson_ci")), with_interval(o["spearman"], o.get("spearman_ci"))])
        for row in j["by_source"]:
            by_source.append([f"{j['name']} v{j['version']}", label("source", row["source"]), number(row["n"]),
                              with_interval(row["mse"], row.get("mse_ci")), with_interval(row["fr_2"], row.get("fr_2_ci"))])
    return Section(gettext("Judge versus gold"), [
        Table([gettext("Setting"), "n", "MSE", "FR_1", "FR_2", "Pearson", "Spearman"], overall, gettext("All answers, with %(level)s%% intervals") % {"level": 95}),
        Table([gettext("Setting"), gettext("Source"), "n", "MSE", "FR_2"], by_source, gettext("By source")),
    ])


def answer_check_section(data) -> Section | None:
    """Answer-checking settings (CAS and IneqMath final answer) scored against the gold answer."""
    checks = [j for j in data["judges"] if j.get("answer_check")]
    if not checks:
        return None
    rows = []
    for j in checks:
        a = j["answer_check"]
        name = f"{j['name']} v{j['version']}"
        rows.append([name, gettext("all answers"), number(a["n"]), number(a["correct"]), _accuracy(a),
                     number(a["n_undecided"]), number(a["n_without_gold_answer"])])
        rows += [[name, label("source", row["source"]), number(row["n"]), number(row["correct"]), _accuracy(row),
                  DASH, DASH] for row in a["by_source"]]
    return Section(gettext("Final answers against the gold answer"), [
        gettext("Settings that check the final answer (the CAS, and the IneqMath final-answer judge) are scored "
                "against the question's gold answer, not against gold points: accuracy is the share of answers whose "
                "final answer the setting found equal to the gold answer, over the answers whose question has a gold "
                "answer and that the setting decided. Answers to one question share its gold answer, so the "
                "%(level)s%% interval is a cluster bootstrap of whole questions (%(resamples)s resamples, seed "
                "%(seed)s), a Wilson interval at an accuracy of 0 or 1, and none from fewer than five questions. "
                "Undecided or failed checks and answers without a gold answer are counted apart.") % {
            "level": number(data["confidence_percent"]), "resamples": number(data["bootstrap_resamples"]),
            "seed": number(data["seed"])},
        Table([gettext("Setting"), gettext("Source"), "n", gettext("Correct"), gettext("Accuracy"),
               gettext("Undecided"), gettext("No gold answer")], rows),
    ])


def _accuracy(row) -> str:
    return with_interval_or_note(row["accuracy"], row["ci"], row.get("ci_note"))


def categories_section(data) -> Section:
    c = data["categories"]
    codes = [row["code"] for row in c["codes"]]
    if not c["total"]:
        return Section(gettext("Disagreement categories"), [gettext("No disagreement has been classified yet.")])
    rows = [[gettext("all judges"), *(number(n) for n in c["counts"]), number(c["total"])]]
    rows += [[row["judge"], *(number(n) for n in row["counts"]), number(row["total"])] for row in c["by_judge"]]
    legend = "; ".join(f"{row['code']}: {row['name']}" for row in c["codes"])
    return Section(gettext("Disagreement categories"), [legend, Table([gettext("Judge"), *codes, pgettext("number of cases", "Total")], rows)])


def strategies_section(data) -> Section | None:
    """Issue 27: each score judge's prompt strategy; for few-shot the rule, seed, examples and hold-out."""
    rows, examples = [], []
    for j in data["judges"]:
        few = j.get("few_shot")
        if j.get("strategy") in (None, "reason-then-score") and not few and not j.get("prompt_set"):
            continue
        holdout = number(few["n_holdout"]) if few else number(j["prompt_set_holdout"]) if "prompt_set_holdout" in j else DASH
        rows.append([f"{j['name']} v{j['version']}", strategy_name(j), number(j.get("strategy_version")),
                     j.get("prompt_set") or DASH, number(few["k"]) if few else DASH,
                     label("split", few["split_rule"] or DASH) if few else DASH, number(few["seed"]) if few else DASH, holdout])
        for question, ids in sorted(((few or {}).get("examples") or {}).items(), key=lambda kv: int(kv[0])):
            examples.append([f"{j['name']} v{j['version']}", question, ", ".join(number(i) for i in ids)])
    if not rows:
        return None
    blocks = [Table([gettext("Setting"), gettext("Strategy or prompt set"), gettext("Template version"), gettext("Prompt set"), "k", gettext("Split rule"), gettext("Seed"), gettext("Hold-out")],
                    rows, gettext("Few-shot examples are a hold-out: never judged by their setting, never counted. A "
                                  "replay setting sends the prompts of a prompt set (a variant file of the release, "
                                  "such as Verification-First) or each record's own prompt; its hold-outs are the "
                                  "prompt set's calibration answers."))]
    if examples:
        blocks.append(Table([gettext("Setting"), gettext("Question id"), gettext("Example answer ids")], examples, gettext("Few-shot examples")))
    return Section(gettext("Prompt strategies"), blocks)


def strategy_name(judge) -> str:
    """What a setting's prompts are: its strategy, or for a replay setting the prompt set it sends."""
    if judge.get("strategy") == "prompt-set":
        file = judge.get("prompt_set_file")
        return (gettext("prompt set %(name)s (%(file)s)") % {"name": judge.get("prompt_set"), "file": file} if file
                else gettext("prompt set %(name)s") % {"name": judge.get("prompt_set")})
    if judge.get("strategy") == "record-prompt":
        return gettext("each record's own prompt")
    return label("strategy", judge.get("strategy")) or DASH


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
                     with_interval(m["fr_2"]["difference"], m["fr_2"]["ci"]),
                     pair.get("permutation_p_text") or p_value(pair["permutation_p"]),
                     pair.get("sign_test_p_text") or p_value(pair["sign_test_p"])])
    blocks = [gettext("Each setting (B) is compared with the baseline %(baseline)s (A).") % {"baseline": c["baseline"]}] \
        if c.get("baseline") else []
    return Section(gettext("Settings compared, paired"), [
        *blocks,
        gettext("Differences are B − A on the answers both settings scored (an error measure below zero: B is "
                "closer to gold); intervals: %(resampling)s; counted: %(rule)s.") % {
            "resampling": METHOD_TEXT.get(c["resampling"], c["resampling"]), "rule": METHOD_TEXT.get(c["rule"], c["rule"])},
        Table(["A", "B", "n", gettext("Hold-outs excluded"), "MAE B − A", "MSE B − A", "FR_2 B − A",
               gettext("Permutation p"), gettext("Sign test p (assumes independent answers)")], rows),
    ])


ANCHORING_MEASURES = {  # translated where printed (the same texts as the agreement page's)
    "abs_diff": gettext_noop("mean |expert − judge|"), "signed_diff": gettext_noop("mean expert − judge"),
    "expert_mad": gettext_noop("mean |expert − expert|"), "expert_within_one": gettext_noop("expert pairs within one point"),
}


def anchoring_section(data) -> Section:
    """The anchoring experiment: per exam and (setting, seed), the shown and hidden halves."""
    a = data.get("anchoring") or {}
    title = gettext("Anchoring experiment")
    method = gettext("Experts label with the judge's pre-grade shown for a seeded half of the (answer, expert) "
                     "assignments and hidden for the other half. The halves are compared on how far the experts are "
                     "from the judge and from each other (pairs of labels of one answer within one half), with "
                     "bootstrap intervals and a permutation test of the difference shown − hidden.")
    if not a.get("experiments"):
        return Section(title, [method, gettext("Anchoring experiment: not run.")])
    blocks = [method]
    for experiment in a["experiments"]:
        shown, hidden = experiment["arms"]["shown"], experiment["arms"]["hidden"]
        blocks.append(gettext("Exam %(exam)s, setting %(setting)s, seed %(seed)s: %(shown)s labels shown, %(hidden)s "
                              "hidden.") % {"exam": experiment["exam"], "setting": experiment["setting"] or DASH,
                                            "seed": number(experiment["experiment_seed"]),
                                            "shown": number(shown["n_labels"]), "hidden": number(hidden["n_labels"])})
        rows = []
        for measure, title_text in ANCHORING_MEASURES.items():
            test = experiment["tests"][measure]
            rows.append([gettext(title_text), with_interval(shown[measure], shown[f"{measure}_ci"]),
                         with_interval(hidden[measure], hidden[f"{measure}_ci"]),
                         with_interval(test["difference"], test["difference_ci"]),
                         test.get("p_text") or p_value(test["p_value"])])
        blocks.append(Table([gettext("Measure"), gettext("Shown"), gettext("Hidden"), gettext("Shown − hidden"), "p"], rows))
    return Section(title, blocks)


def rubric_section(data) -> Section:
    """Rubric re-judging: per edited question and setting, the figures before and after the edit."""
    r = data.get("rubric_rejudge") or {}
    title = gettext("Rubric re-judging")
    method = gettext("When a question's rubric is edited, the settings that judged it against the older rubric judge it "
                     "again; MSE and FR_2 against the gold score are compared before (the older rubric's results) and "
                     "after (the current rubric's), on the answers each side holds.")
    if not r.get("rows"):
        return Section(title, [method, gettext("Rubric re-judging: not run.")])
    rows = []
    for row in r["rows"]:
        before, after = row["before"] or {}, row["after"] or {}
        rows.append([row["question"], number(row["rubric_version"]), row["setting"], number(before.get("n")),
                     number(before.get("mse")), number(before.get("fr_2")), number(after.get("n")),
                     number(after.get("mse")), number(after.get("fr_2")), number(row["not_rejudged"])])
    return Section(title, [method, Table([gettext("Question"), gettext("Rubric version"), gettext("Setting"),
                                          gettext("n before"), gettext("MSE before"), gettext("FR_2 before"),
                                          gettext("n after"), gettext("MSE after"), gettext("FR_2 after"),
                                          gettext("Not judged again")], rows)])


SECTIONS: list[Callable] = [
    methods_section, dataset_section, agreement_section, settings_section, metrics_section, answer_check_section,
    categories_section, strategies_section, comparison_section, anchoring_section, rubric_section,
]  # then the later apps' sections (app_report_modules): the studies', the Validity view's


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


def _document(sections, first_line, heading, table, paragraph) -> str:
    """The report as text: `first_line`, then each section's heading and its blocks (tables
    through `table`, which gives lines, paragraphs through `paragraph`), each followed by a blank line."""
    out = [first_line, ""]
    for section in sections:
        out += [heading(section.title), ""]
        for block in section.blocks:
            out += table(block) if isinstance(block, Table) else [paragraph(block)]
            out.append("")
    return "\n".join(out)


def _markdown_table(block) -> list[str]:
    out = [f"*{markdown_cell(block.caption)}*", ""] if block.caption else []
    out.append("| " + " | ".join(markdown_cell(h) for h in block.header) + " |")
    out.append("|" + "|".join("---" for _ in block.header) + "|")
    return out + ["| " + " | ".join(markdown_cell(c) for c in row) + " |" for row in block.rows]


def _latex_table(block) -> list[str]:
    out = ["\\begin{table}[h]\\centering\\small"]
    if block.caption:
        out.append(f"\\textit{{{latex_escape(block.caption)}}}\\par\\smallskip")
    out.append("\\begin{tabular}{l" + "r" * (len(block.header) - 1) + "}")
    out.append("\\hline")
    out.append(" & ".join(latex_escape(h) for h in block.header) + " \\\\")
    out.append("\\hline")
    out += [" & ".join(latex_escape(c) for c in row) + " \\\\" for row in block.rows]
    return out + ["\\hline", "\\end{tabular}", "\\end{table}"]


def _markdown(sections) -> str:
    return _document(sections, "# " + gettext("Methods report"), lambda title: f"## {title}", _markdown_table,
                     lambda text: text)


def _latex(sections) -> str:
    first = "% " + gettext("Methods report (RealMath Workbench). A fragment: \\input{} it into a document.")
    return _document(sections, first, lambda title: f"\\section*{{{latex_escape(title)}}}", _latex_table, latex_escape)


def app_report_modules():
    """Later apps' parts of the report: an app names a module as `report_section` on its AppConfig
    (as `export_section` does for the export), so grading imports no later app. The module gives
    its part of the appendix as `report_figures(judge_settings, *, seed)` under its `APPENDIX_KEY` (the
    Validity view), or as `report_parts(judge_settings, *, setting, bootstrap, seed, choices)`, several
    keys, and `judge_parts(setting, *, seed)`, keys of each setting's entry (the studies; with
    `CHOICES`, the runs a reader may choose: grading.report.selectors.report_choices); and its
    sections as `SECTIONS` (a list) or `section(data)`, printed after grading's, in the order of
    INSTALLED_APPS."""
    return app_modules("report_section")


def build_sections(data: dict, sections: list[Callable] | None = None) -> list[Section]:
    """The report's sections (paragraphs and tables of printed figures) from the appendix `data`."""
    if sections is None:
        sections = SECTIONS + [section for module in app_report_modules()
                               for section in getattr(module, "SECTIONS", None) or [module.section]]
    return [s for s in (section(data) for section in sections) if s is not None]


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
        return f"{text}\n## {gettext('Appendix (JSON)')}\n\n```json\n{appendix_json(data)}\n```\n"
    # In JSON every backslash is doubled, so "\end{verbatim}" cannot occur inside it.
    return f"{text}\n\\section*{{{latex_escape(gettext('Appendix (JSON)'))}}}\n\\begin{{verbatim}}\n{appendix_json(data)}\n\\end{{verbatim}}\n"
