"""
The style ablation (issue 27): does a judge score the same reasoning differently once it is written
in a normalised textbook style?

1. **Rewrites.** Each answer is rewritten into textbook style keeping every step, error and
   omission: by an LLM (`rewrite_answers`, our default prompt `REWRITE_TEMPLATE`, any endpoint and
   model) or from a file of rewrites linked to their originals (`import_rewrites`). A rewrite is a
   `DerivedAnswer` (probe ``style-rewrite``) like a probe's output: never an `annotation.Response`,
   so never in metrics, the disagreement queue or exports.
2. **Checks** (`check_rewrite`, no LLM): a rewrite whose final answer differs from the original's
   (the equivalence engine's `extract_answer`, then `check_equivalence`; a final answer lost counts
   as changed) or that has fewer non-empty lines than the original (a dropped line) is **flagged**
   and excluded from the study; the page and the report say how many, for which reason, and per
   case why (`flag_details`: the final answer before and after, the lines of the original whose
   content is not found in the rewrite). A run may judge the flagged rewrites too: they are then
   reported in a second analysis, apart (`include_flagged`).
3. **Judging.** A probe run of probe ``style-rewrite`` judges the original and the rewrite with the
   same setting version (studies/services.py; the original reuses the setting's existing
   result when there is one).
4. **Report** (`ablation_report`): per group (human, synthetic) and overall, MSE, FR_2 and mean
   |judge - gold| before (original) and after (rewrite), paired on the same answers, with
   cluster-bootstrap intervals over whole questions (core.paired); the
   difference is after - before.
"""
from __future__ import annotations

import json
import re
from collections import Counter

import numpy as np
from django.db import transaction
from django.utils.translation import gettext, gettext_lazy

import equivalence
import llm
from annotation.models import Response, content_hash
from core import paired, uncertainty
from core.numbers import json_int
from egress import purposes
from grading.judges import services as judge_services
from grading.judges.kinds import JudgeSpec
from grading.runs.engine import call_each

from .models import DerivedAnswer, ProbeItem, ProbeRun

PROBE = "style-rewrite"
SEED = 0

REWRITE_SYSTEM = "You copy-edit mathematics answers into a clean textbook style without changing their content."

REWRITE_TEMPLATE = """Rewrite the student's answer below in a normalised textbook style: complete sentences, standard notation, consistent LaTeX, one step per line.

Keep the content exactly as it is:
- keep every step, in the same order, and keep each step on its own line;
- keep every error exactly as written: a wrong computation stays wrong, a wrong claim stays claimed;
- keep every omission: do not add a step, a justification, a case or a conclusion the student did not write;
- keep the final answer exactly as the student gave it, even if it is wrong;
- do not comment on, correct or grade the answer.

Problem (for context only):
{{ problem }}

Student answer:
{{ response }}

Reply with the rewritten answer only."""


# --- checks --------------------------------------------------------------------------------

def _final(text):
    try:
        found = equivalence.extract_answer(text or "")
    except Exception:  # best effort, as in the judges
        return None
    return (found if isinstance(found, str) else str(found)).strip() if found else None


def line_count(text) -> int:
    return sum(1 for line in (text or "").splitlines() if line.strip())


_SPACING = re.compile(r"\\(?:left|right|Big|big|Bigg|bigg)(?![a-zA-Z])|\\[,;:! ]|\$|\s+")
_ONE_BRACED = re.compile(r"\{(\\?[A-Za-z0-9]+|.)\}")


def _notation(text: str) -> str:
    """A final answer with spacing, math delimiters and brace-only differences removed (S_{i} = S_i, \\dfrac = \\frac)."""
    out = re.sub(r"\\[dt]frac", r"\\frac", text or "")
    out = _SPACING.sub("", out)
    previous = None
    while previous != out:
        previous, out = out, _ONE_BRACED.sub(r"\1", out)
    return out


_GREEK = {"alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "theta": "θ", "lambda": "λ", "mu": "μ",
          "pi": "π", "sigma": "σ", "phi": "φ", "omega": "ω", "varphi": "φ", "le": "≤", "leq": "≤", "ge": "≥",
          "geq": "≥", "neq": "≠", "ne": "≠", "infty": "∞", "in": "∈", "cdot": "·", "times": "×"}
_TOKEN = re.compile(r"\\([A-Za-z]+)|(\d+(?:\.\d+)?)|([A-Za-z]+)|([^\sA-Za-z0-9\\{}()\[\]$,.;:!?'\"`_^&])")
_LAYOUT = {"frac", "dfrac", "tfrac", "sqrt", "left", "right", "text", "mathrm", "quad", "qquad", "begin", "end",
           "cases", "displaystyle", "mathbf", "boldsymbol", "big", "Big", "bigg", "Bigg", "hspace", "textbf",
           "textit", "operatorname", "overline", "underline", "step"}


def _tokens(line: str) -> list[str]:
    """A line's content in order: numbers, words and letters, symbols; LaTeX layout commands dropped, Greek
    letters and relations written as commands read as their symbols (\\alpha = α, \\le = ≤)."""
    out = []
    for command, number, word, symbol in _TOKEN.findall(line or ""):
        if command:
            if command.lower() in _LAYOUT:
                continue
            out.append(_GREEK.get(command, command.lower()))
        elif number:
            out.append(number)
        elif word:
            if word.lower() in _LAYOUT:
                continue
            out.append(word.lower())
        else:
            out.append(symbol)
    return out


def lines_not_found(original: str, rewritten: str, *, threshold: float = 0.5) -> list[str]:
    """The lines of `original` whose content is not found in `rewritten`: fewer than `threshold` of the
    line's consecutive token pairs (numbers, words, symbols in order, notation read alike) occur anywhere in
    the rewrite. Lines of fewer than three tokens (a label "17.", "(2)") are not judged. Evidence for a
    person to read, not a verdict: a rewrite that merges two lines keeps their content and lists none."""
    found = _tokens(rewritten)
    pairs = Counter(zip(found, found[1:]))
    missing = []
    for line in (original or "").splitlines():
        tokens = _tokens(line)
        if len(tokens) < 3:
            continue
        own = list(zip(tokens, tokens[1:]))
        if sum(1 for pair in own if pair in pairs) < threshold * len(own):
            missing.append(line.strip()[:300])
    return missing


def check_rewrite(original: str, rewritten: str) -> dict:
    """Flags of a rewrite: ``final_answer_changed`` (CAS on the final answers), ``lines_dropped``
    (fewer non-empty lines), ``empty``; ``excluded`` if any; the evidence kept beside them."""
    before, after = _final(original), _final(rewritten)
    changed, how = False, "no final answer in the original"
    if before is not None:
        if after is None:
            changed, how = True, "the rewrite states no final answer"
        elif "".join(before.split()) == "".join(after.split()):
            how = "same text"
        elif _notation(before) == _notation(after):
            how = "same text up to notation"
        elif len(_notation(before)) >= 6 and _notation(before) in _notation(after):
            how = "the original's final answer is in the rewrite's"
        else:
            try:
                verdict = equivalence.check_equivalence(before, after, mode="default", timeout=2.0)
                same = getattr(verdict, "equivalent", None)
            except Exception:  # an engine crash is an undecided check: flagged, to be safe
                same = None
            changed = same is not True
            how = {True: "equivalent (CAS)", False: "different (CAS)", None: "undecided (CAS): flagged"}[same]
    lines_before, lines_after = line_count(original), line_count(rewritten)
    flags = {
        "final_answer_changed": changed, "lines_dropped": lines_after < lines_before,
        "empty": not (rewritten or "").strip(),
        "final_before": before, "final_after": after, "final_check": how,
        "lines_before": lines_before, "lines_after": lines_after,
        "lines_not_found": lines_not_found(original, rewritten)[:20],
    }
    flags["excluded"] = flags["final_answer_changed"] or flags["lines_dropped"] or flags["empty"]
    return flags


# --- rewrites ------------------------------------------------------------------------------

def _store(response, text, source):
    """The rewrite of `response`'s current text (kept if one exists for that text)."""
    key = content_hash(response.transcript)
    existing = DerivedAnswer.objects.filter(response=response, probe=PROBE, seed=SEED, source_hash=key).first()
    if existing is not None:
        return existing, False
    flags = check_rewrite(response.transcript, text)
    made = DerivedAnswer.objects.create(
        response=response, probe=PROBE, seed=SEED, source_hash=key, original_text=response.transcript,
        text=text or "", change={**source, "flags": flags, "excluded": flags["excluded"]},
    )
    return made, True


def selected_answers(*, exam=None, question=None, limit=None):
    from annotation.selectors import filter_responses  # noqa: PLC0415

    params = {k: str(v) for k, v in {"exam": exam, "question": question}.items() if v not in (None, "")}
    queryset = filter_responses(Response.objects.all(), params).exclude(transcript="").order_by("question_id", "id")
    return list(queryset[: int(limit)] if limit else queryset)


def rewrite_answers(endpoint, model, responses, *, system=REWRITE_SYSTEM, template=REWRITE_TEMPLATE,
                    temperature=0.0, max_tokens=4096, complete=None) -> dict:
    """Rewrite `responses` with an LLM (the endpoint's limits apply); answers that already have a
    rewrite of their current text are kept. Returns counts."""
    from grading.judges import prompts  # noqa: PLC0415

    judge_services.check_endpoint_usable(endpoint)
    spec = JudgeSpec(kind="rubric", model=model, temperature=temperature, max_tokens=max_tokens)
    call = judge_services.make_caller(endpoint, spec, complete)
    have = set(DerivedAnswer.objects.filter(response__in=responses, probe=PROBE, seed=SEED)
               .values_list("response_id", "source_hash"))
    todo = [r for r in responses if (r.pk, content_hash(r.transcript)) not in have]

    def messages_of(response):  # built here: the threads never touch the database
        messages = [{"role": "system", "content": system}] if system else []
        messages.append({"role": "user", "content": prompts.render(
            template, {"problem": response.question.statement, "response": response.transcript})})
        return response, messages

    counts = {"asked": len(todo), "kept": len(responses) - len(todo), "made": 0, "failed": 0, "flagged": 0}

    def record(job, value):  # in this thread: the database is touched here only
        if isinstance(value, Exception):  # a failed call leaves that answer without a rewrite
            counts["failed"] += 1
            return
        made, _ = _store(job[0], (value or "").strip(), {"source": "llm", "model": model, "endpoint": endpoint.name})
        counts["made"] += 1
        counts["flagged"] += int(made.change.get("excluded", False))

    def rewrite(job):
        with llm.labelled(purposes.STYLE_REWRITE, answer_ids=[job[0].pk]):
            return call(job[1]).text

    call_each([messages_of(r) for r in todo], rewrite, record,
              width=max(1, min(endpoint.max_concurrency, 16)), is_live=lambda: True)
    return counts


def _release_record(row) -> bool:
    """A record in the release's shape (the paper's ``..._style_transferred_72.json``): the rewrite is its
    ``student_response``, the answer named by its problem statement and student id."""
    return isinstance(row, dict) and "rewritten" not in row and "student_response" in row and "problem_statement" in row


def import_rewrites(raw: bytes, file_name: str) -> dict:
    """Rewrites from a JSON list: the paper's style-transferred file as released (records in the release's
    shape: the rewrite in ``student_response``, the answer matched by problem statement and student id,
    as the release's (student id, question location) repeats across problems), or ``{"response_id": N,
    "rewritten": text}`` (or ``student_id`` and ``question_location`` instead of the id). Unknown answers
    are reported; all or nothing."""
    try:
        rows = json.loads(raw.decode("utf-8-sig"), parse_int=json_int)
    except (ValueError, RecursionError) as exc:  # also an integer literal too long to read, or nesting too deep
        raise ValueError(gettext("%(file)s: not JSON (%(error)s).") % {"file": file_name, "error": exc}) from None
    if not isinstance(rows, list):
        raise ValueError(gettext("%(file)s: expected a JSON list of {response_id, rewritten}.") % {"file": file_name})
    release = bool(rows) and _release_record(rows[0])
    counts = {"records": len(rows), "made": 0, "kept": 0, "flagged": 0, "unmatched": [], "same_as_original": [],
              "format": "release" if release else "rewritten"}
    with transaction.atomic():
        for index, row in enumerate(rows):
            answers = Response.objects.select_related("question")
            if release:
                if not (_release_record(row) and isinstance(row["student_response"], str)
                        and isinstance(row["problem_statement"], str) and isinstance(row.get("student_id"), str)):
                    raise ValueError(gettext(
                        "%(file)s: record %(index)s needs the release's text fields student_response, "
                        "problem_statement and student_id.") % {"file": file_name, "index": index})
                text = row["student_response"]
                answer = answers.filter(question__statement_hash=content_hash(row["problem_statement"]),
                                        student_id=row["student_id"]).order_by("-pk").first()
            else:
                if not isinstance(row, dict) or not isinstance(row.get("rewritten"), str):
                    raise ValueError(gettext("%(file)s: record %(index)s needs a text field 'rewritten'.")
                                     % {"file": file_name, "index": index})
                text = row["rewritten"]
                if row.get("response_id") is not None:
                    answer = answers.filter(pk=row["response_id"]).first()
                else:
                    answer = answers.filter(student_id=str(row.get("student_id", "")),
                                            question__location=str(row.get("question_location", ""))).order_by("-pk").first()
            if answer is None:
                counts["unmatched"].append(index)
                continue
            if content_hash(text) == answer.transcript_hash:  # the input file, not the rewrites
                counts["same_as_original"].append(index)
                continue
            made, fresh = _store(answer, text, {"source": "file", "file": file_name, "record": index})
            counts["made" if fresh else "kept"] += 1
            counts["flagged"] += int(fresh and made.change.get("excluded", False))
    return counts


def rewrites_for(response_ids) -> dict[int, DerivedAnswer]:
    """The rewrite of each answer's current text (flagged ones included: the caller decides)."""
    found = {}
    rows = DerivedAnswer.objects.filter(response_id__in=list(response_ids), probe=PROBE, seed=SEED).select_related("response")
    for row in rows:
        if row.source_hash == content_hash(row.response.transcript):
            found[row.response_id] = row
    return found


# --- report --------------------------------------------------------------------------------

def _block(before, after, gold, clusters, n_resamples, seed):
    result = paired.paired_comparison(before, after, gold, clusters, n_resamples=n_resamples, seed=seed)
    keep = {k: result["measures"][k] for k in ("mse", "fr_2", "mae")}
    return {"n": int(len(gold)), "n_questions": result["n_questions"], "measures": keep,
            "interval_note": result["interval_note"],
            "sign_test": result["sign_test"], "permutation": result["permutation"]}


def _groups(judged, n_resamples, seed) -> dict:
    if not judged:
        return {}
    before = np.array([i.original_score for i in judged], dtype=float)
    after = np.array([i.derived_score for i in judged], dtype=float)
    gold = np.array([float(i.derived.response.gold_score) for i in judged], dtype=float)
    clusters = np.array([i.derived.response.question_id for i in judged])
    sources = np.array([i.derived.response.source for i in judged], dtype=object)
    groups = {"all": _block(before, after, gold, clusters, n_resamples, seed)}
    for source in sorted(set(sources.tolist())):
        mask = sources == source
        groups[source] = _block(before[mask], after[mask], gold[mask], clusters[mask], n_resamples, seed)
    return groups


def _is_flagged(item) -> bool:
    return bool((item.derived.change or {}).get("excluded"))


def ablation_report(run: ProbeRun, *, n_resamples=1000, seed=0) -> dict:
    """Before/after figures of a style-ablation run (a probe run of probe ``style-rewrite``).

    The counts add up to the run page's header: ``n_judged`` (its "Judged": items whose original and
    rewrite both got a score) = ``n_rewrites_judged`` (the table: unflagged, with a gold score) +
    ``n_flagged_judged`` (flagged rewrites judged because the run included them: the second analysis)
    + ``n_judged_without_gold`` (no gold score to compare with) + ``n_judged_without_score`` (a judgement
    without a score on either side; none in practice)."""
    items = list(ProbeItem.objects.filter(run=run, probe=PROBE).select_related("derived__response"))
    flagged = (run.selection or {}).get("style_flagged", {})
    judged_ok = [i for i in items if i.state == ProbeItem.State.OK]  # the run page's "Judged"
    scored = [i for i in judged_ok if i.original_score is not None and i.derived_score is not None]
    with_gold = [i for i in scored if i.derived.response.gold_score is not None]
    judged = [i for i in with_gold if not _is_flagged(i)]
    flagged_judged = [i for i in with_gold if _is_flagged(i)]
    report = {
        "run": run.pk, "setting": str(run.setting), "probe": PROBE,
        "n_judged": len(judged_ok), "n_rewrites_judged": len(judged), "n_flagged_judged": len(flagged_judged),
        "n_judged_without_gold": len(scored) - len(with_gold), "n_judged_without_score": len(judged_ok) - len(scored),
        "n_items": len(items), "n_not_judged": len(items) - len(judged_ok),
        "n_without_gold_or_judgement": len(items) - len(judged) - len(flagged_judged),
        "n_without_rewrite": run.skipped.get(PROBE, 0),
        "include_flagged": bool((run.selection or {}).get("style_include_flagged")),
        "flagged": flagged, "n_flagged_excluded": run.skipped.get(f"{PROBE} (flagged)", 0),
        "difference": "after (rewrite) - before (original): negative = closer to gold after the rewrite",
        "resampling": paired.RESAMPLING, "n_resamples": n_resamples, "seed": seed, "groups": {},
        "min_questions": uncertainty.MIN_CLUSTERS, "with_flagged": None,
    }
    report["groups"] = _groups(judged, n_resamples, seed)
    if report["include_flagged"]:
        # The second analysis: every judged rewrite, flagged ones included (labelled as such everywhere).
        report["with_flagged"] = {"n_flagged": len(flagged_judged),
                                  "groups": _groups(judged + flagged_judged, n_resamples, seed)}
    return report


def flagged_counts(rewrites) -> dict:
    """Why rewrites were excluded: final answer changed only, line dropped only, both, empty."""
    counts = {"final_answer_changed_only": 0, "lines_dropped_only": 0, "both": 0, "empty": 0}
    for row in rewrites:
        flags = (row.change or {}).get("flags", {})
        if not (row.change or {}).get("excluded"):
            continue
        if flags.get("empty"):
            counts["empty"] += 1
        elif flags.get("final_answer_changed") and flags.get("lines_dropped"):
            counts["both"] += 1
        elif flags.get("final_answer_changed"):
            counts["final_answer_changed_only"] += 1
        else:
            counts["lines_dropped_only"] += 1
    return counts


FINAL_CHECKS = {  # how check_rewrite compared the final answers (stored in English, shown translated)
    "same text": gettext_lazy("same text"),
    "same text up to notation": gettext_lazy("same text up to notation"),
    "the original's final answer is in the rewrite's": gettext_lazy("the original's final answer is in the rewrite's"),
    "equivalent (CAS)": gettext_lazy("equivalent (CAS)"),
    "different (CAS)": gettext_lazy("different (CAS)"),
    "undecided (CAS): flagged": gettext_lazy("undecided (CAS): flagged"),
    "the rewrite states no final answer": gettext_lazy("the rewrite states no final answer"),
    "no final answer in the original": gettext_lazy("no final answer in the original"),
}


def flag_reasons(flags: dict) -> list[str]:
    """The reason codes of a rewrite's flags, in the order the page lists them."""
    return [code for code in ("empty", "final_answer_changed", "lines_dropped") if flags.get(code)]


def flag_details(rows) -> list[dict]:
    """Per flagged rewrite, why (the style page, ``style_ablation flagged``): the final answer before and
    after and how they were compared, the line counts, and the lines of the original whose content is not
    found in the rewrite (computed again from the stored texts, so older rewrites show them too)."""
    out = []
    for row in rows:
        change = row.change or {}
        if not change.get("excluded"):
            continue
        flags = change.get("flags", {})
        response = row.response
        out.append({
            "rewrite": row.pk, "response": response.pk, "question": response.question_id,
            "question_label": response.question.location or response.question.external_id or str(response.question_id),
            "student": response.student_id, "source": response.source, "origin": change.get("source", ""),
            "record": change.get("record"), "reasons": flag_reasons(flags),
            "final_before": flags.get("final_before"), "final_after": flags.get("final_after"),
            "final_check": flags.get("final_check", ""),
            "final_check_label": str(FINAL_CHECKS.get(flags.get("final_check", ""), flags.get("final_check", ""))),
            "lines_before": flags.get("lines_before"), "lines_after": flags.get("lines_after"),
            "lines_not_found": lines_not_found(row.original_text, row.text)[:20],
        })
    return out


def current_rewrites():
    """Rewrites of the answers' current texts, with their answer and question."""
    rows = DerivedAnswer.objects.filter(probe=PROBE, seed=SEED).select_related("response__question").order_by(
        "response__question_id", "response_id")
    return [row for row in rows if row.source_hash == row.response.transcript_hash]


def rewrite_counts() -> dict:
    """Rewrites of current texts: total, flagged (by reason), usable (the style page)."""
    rows = [row for row in DerivedAnswer.objects.filter(probe=PROBE, seed=SEED).select_related("response")
            if row.source_hash == content_hash(row.response.transcript)]
    flagged = flagged_counts(rows)
    n_flagged = sum(flagged.values())
    return {"total": len(rows), "flagged": n_flagged, "usable": len(rows) - n_flagged, "by_reason": flagged,
            "from_llm": sum(1 for r in rows if (r.change or {}).get("source") == "llm"),
            "from_file": sum(1 for r in rows if (r.change or {}).get("source") == "file")}
