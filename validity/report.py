"""The Validity view's figures for one selection: the four questions answered from the rows of
`selectors.answer_rows`, as one JSON-ready dict that holds its selection, parameters and seeds, so
every figure can be computed again from it (docs/validity.md)."""
import hashlib
import math
import random
from dataclasses import asdict, dataclass

import numpy as np

from annotation.steps import split_steps
from core.uncertainty import wilson

from . import selectors, stats

SIGNALS = ("spread", "boundary", "second")


@dataclass
class Parameters:
    epsilon: float = stats.AAT_EPSILON  # the Alternative Annotator Test's cost-benefit margin
    q: float = stats.AAT_Q
    alpha: float = 0.1  # deferral: the share of auto-accepted answers allowed to be off by >= d points
    delta: float = 0.1  # ... with confidence 1 - delta
    d: float = 2.0  # points: the tool's disagreement threshold
    pass_mark: float = 0.6  # share of the full score that passes
    width: float = 0.05  # the planner's target interval width, as a share of the full score
    seed: int = 0
    budget: int | None = None  # simulate: only this many golds, drawn at random with `seed`
    signal: str = ""  # deferral signal; "" picks the first available of SIGNALS


BANDS = ((0.0, 0.6), (0.6, 0.75), (0.75, 0.9), (0.9, 1.0001))


def _share(points, full):
    return points / full if full else 0.0


def _split(rows, params):
    """(labelled, unlabelled, truth): the answers with a gold and the others; with a budget, a random
    `budget` of the gold answers (seeded) and the rest treated as unlabelled (their gold is the truth)."""
    gold = [r for r in rows if r.gold is not None]
    others = [r for r in rows if r.gold is None]
    if params.budget is None or params.budget >= len(gold):
        return gold, others, None
    rng = random.Random(params.seed)
    picked = set(rng.sample([r.response_id for r in gold], params.budget))
    labelled = [r for r in gold if r.response_id in picked]
    truth = {"mean_share": float(np.mean([_share(r.gold, r.full_score) for r in gold])), "golds": len(gold)}
    return labelled, [r for r in gold if r.response_id not in picked] + others, truth


def _estimates(labelled, unlabelled, value):
    y = [value(r.gold, r.full_score) for r in labelled]
    f_lab = [value(r.judge, r.full_score) for r in labelled]
    f_unlab = [value(r.judge, r.full_score) for r in unlabelled]
    clusters_lab = [r.question_id for r in labelled]
    clusters_unlab = [r.question_id for r in unlabelled]
    ppi = stats.ppi_mean(y, f_lab, f_unlab, clusters_lab=clusters_lab, clusters_unlab=clusters_unlab)
    classical = stats.classical_mean(y, clusters=clusters_lab)
    everyone = f_lab + f_unlab
    judge_only = stats.classical_mean(everyone, clusters=clusters_lab + clusters_unlab)
    return {"ppi": ppi.as_dict(), "experts_only": classical.as_dict(), "judge_only": judge_only.as_dict(),
            "effective_golds": stats.effective_golds(ppi, classical)}


def estimates(rows, params):
    labelled, unlabelled, truth = _split(rows, params)
    out = {"golds": len(labelled), "without_gold": len(unlabelled), "truth": truth, "figures": {}}
    if len(labelled) < 2 or not unlabelled:
        out["reason"] = "no_unlabelled" if not unlabelled else "few_golds"
        return out
    figures = out["figures"]
    figures["mean_share"] = _estimates(labelled, unlabelled, _share)
    figures["pass_rate"] = _estimates(labelled, unlabelled, lambda p, full: float(_share(p, full) >= params.pass_mark))
    for low, high in BANDS:
        key = f"band_{round(low * 100)}_{min(100, round(high * 100))}"
        figures[key] = _estimates(labelled, unlabelled, lambda p, full, lo=low, hi=high: float(lo <= _share(p, full) < hi))
        figures[key]["band"] = [low, min(1.0, high)]
    y = [_share(r.gold, r.full_score) for r in labelled]
    needed = stats.golds_for_width(
        params.width, y, [_share(r.judge, r.full_score) for r in labelled],
        [_share(r.judge, r.full_score) for r in unlabelled],
        clusters_lab=[r.question_id for r in labelled], clusters_unlab=[r.question_id for r in unlabelled])
    out["planner"] = {"width": params.width, "golds_needed": needed,
                      "more_golds": None if needed is None else max(0, needed - len(labelled)),
                      "available": sum(1 for r in unlabelled if r.gold is None)}
    return out


def _signal(rows, params):
    name = params.signal
    if not name:
        if any(r.spread is not None for r in rows):
            name = "spread"
        elif any(r.second is not None for r in rows):
            name = "second"
        else:
            name = "boundary"
    if name == "spread":
        values = [r.spread if r.spread is not None else float("inf") for r in rows]
    elif name == "second":
        values = [abs(r.judge - r.second) if r.second is not None else float("inf") for r in rows]
    else:  # closeness to the pass mark: the closer, the riskier
        values = [-abs(_share(r.judge, r.full_score) - params.pass_mark) for r in rows]
    return name, values


def _student_half(student_id, seed):
    return int(hashlib.sha256(f"{seed}:{student_id}".encode()).hexdigest(), 16) % 2


def deferral(rows, params):
    name, values = _signal(rows, params)
    # An answer without the signal (no spread, no second score) is never graded by the judge alone.
    gold = [(r, v) for r, v in zip(rows, values) if r.gold is not None and np.isfinite(v)]
    cal = [(r, v) for r, v in gold if _student_half(r.student_id, params.seed) == 0]
    held = [(r, v) for r, v in gold if _student_half(r.student_id, params.seed) == 1]
    out = {"signal": name, "calibration": len(cal), "held_out": len(held), "alpha": params.alpha,
           "delta": params.delta, "d": params.d}
    if len(cal) < 10:
        out["reason"] = "few_golds"
        return out

    def wrong(r):
        return abs(r.judge - r.gold) >= params.d - 1e-9

    result = stats.calibrate_deferral([v for _, v in cal], [wrong(r) for r, _ in cal], alpha=params.alpha,
                                      delta=params.delta)
    out["threshold"] = result.threshold
    out["calibration_accepted"] = result.accepted
    out["calibration_upper_bound"] = result.upper_bound
    out["crc_threshold"] = stats.crc_threshold([v for _, v in cal], [wrong(r) for r, _ in cal], alpha=params.alpha)
    if result.threshold is None:
        out["accepted_held_out"] = 0
        out["human_answers"] = [r.response_id for r in rows if r.gold is None]
        out["judge_alone"] = 0
        return out
    accepted = [(r, v) for r, v in held if v <= result.threshold]
    errors = sum(1 for r, _ in accepted if wrong(r))
    out["accepted_held_out"] = len(accepted)
    out["held_out_errors"] = errors
    out["held_out_error_share"] = errors / len(accepted) if accepted else None
    out["held_out_wilson"] = list(_wilson(errors, len(accepted)))
    out["human_answers"] = [r.response_id for r, v in zip(rows, values) if r.gold is None and v > result.threshold]
    out["judge_alone"] = sum(1 for r, v in zip(rows, values) if r.gold is None and v <= result.threshold)
    return out


def _wilson(k, n):
    return wilson(k, n) if n else (None, None)


def agreement(rows):
    paired = [r for r in rows if r.gold is not None]
    out = {"all": stats.agreement([r.judge for r in paired], [r.gold for r in paired])}
    groups = {"experts_agree": [], "experts_split": [], "one_expert": []}
    for r in paired:
        values = list(r.experts.values())
        if len(values) < 2:
            groups["one_expert"].append(r)
        elif max(values) - min(values) <= 1 + 1e-9:
            groups["experts_agree"].append(r)
        else:
            groups["experts_split"].append(r)
    for key, members in groups.items():
        out[key] = stats.agreement([r.judge for r in members], [r.gold for r in members])
    return out


def alt_test(rows, params):
    items = [{"judge": r.judge, "experts": r.experts, "response_id": r.response_id} for r in rows]
    result = stats.alt_test(items, epsilon=params.epsilon, q=params.q)
    out = asdict(result)
    out["short"] = [r.response_id for r in rows if 0 < len(r.experts) < stats.AAT_MIN_EXPERTS]
    out["labelled_by_three"] = sum(1 for r in rows if len(r.experts) >= stats.AAT_MIN_EXPERTS)
    out["experts_seen"] = len({name for r in rows for name in r.experts})
    return out


def calibration(rows):
    with_samples = [r for r in rows if r.gold is not None and len(r.samples) >= 2]
    return stats.calibration([r.samples for r in with_samples], [r.gold for r in with_samples])


def _step_index(steps, position):
    for index, step in enumerate(steps):
        if position < step.end:
            return index
    return len(steps) - 1 if steps else None


def _flagged_position(transcript, flagged):
    flagged = (flagged or "").strip()
    if not flagged:
        return None
    for probe in (flagged, flagged[:40], flagged[:15]):
        position = transcript.find(probe) if len(probe) >= 4 else -1
        if position >= 0:
            return position
    return None


def _first_wrong_step_figures(cases):
    """ProcessBench's figures on [(judge index, expert index, row)], over all answers, per source and per
    question (keys are the question ids as text, as in the JSON)."""
    out = stats.first_wrong_step([(j, e) for j, e, _ in cases])
    out["by_source"] = {source: stats.first_wrong_step([(j, e) for j, e, r in cases if r.source == source])
                        for source in sorted({r.source for _, _, r in cases})}
    out["by_question"] = {str(q): stats.first_wrong_step([(j, e) for j, e, r in cases if r.question_id == q])
                          for q in sorted({r.question_id for _, _, r in cases})}
    return out


def step_agreement(rows, references):
    """First-wrong-step agreement of a step judge (its verdict and the step it flags) with the experts'
    step labels (`references`: selectors.step_references), on the rule-based step split."""
    judged = [r for r in rows if "flagged_step" in r.step_verdicts and r.response_id in references]
    if not judged:
        return None
    cases, not_located = [], 0
    for row in judged:
        transcript, expert_start = references[row.response_id]
        steps = split_steps(transcript)
        expert = None if expert_start is None else _step_index(steps, expert_start)
        passes = next((v for k, v in row.step_verdicts.items() if isinstance(v, bool)), None)
        if passes is None or passes:
            judge = None
        else:
            position = _flagged_position(transcript, row.step_verdicts.get("flagged_step"))
            if position is None:
                not_located += 1
                continue
            judge = _step_index(steps, position)
        cases.append((judge, expert, row))
    return {**_first_wrong_step_figures(cases), "not_located": not_located}


def _experts_reached(marks):
    """The experts' mark on one checkpoint as reached (True) or not (False): "reached" is reached,
    "partly" and "not_reached" are not; several experts: the majority, None on a tie."""
    yes = sum(1 for mark in marks if mark == "reached")
    no = sum(1 for mark in marks if mark in ("partly", "not_reached"))
    return None if yes == no else yes > no


def _rubric_first_wrong_step(judged, references, split_steps):
    cases, left_out = [], {"unreadable": 0, "steps_changed": 0}
    for row in judged:
        report = row.step_verdicts["step_report"]
        if row.response_id not in references:
            continue
        if not report.get("first_wrong_step_read"):
            left_out["unreadable"] += 1  # never guessed: the judge's step is unknown
            continue
        transcript, expert_start = references[row.response_id]
        steps = split_steps(transcript)
        if len(steps) != report.get("steps"):  # the transcript changed since the judge numbered its steps
            left_out["steps_changed"] += 1
            continue
        expert = None if expert_start is None else _step_index(steps, expert_start)
        first = report.get("first_wrong_step")
        cases.append((None if first is None else int(first) - 1, expert, row))
    if not cases and not any(left_out.values()):
        return None
    return {**_first_wrong_step_figures(cases), "left_out": left_out}


def _checkpoint_kappas(judged, marks, checkpoints):
    pairs, ties, changed = {}, 0, 0
    for row in judged:
        report, given = row.step_verdicts["step_report"], marks.get(row.response_id)
        if not given:
            continue
        if report.get("checkpoint_count") != len(checkpoints.get(row.question_id, ())):
            changed += 1  # the rubric changed since the judge numbered its checkpoints
            continue
        for number, reached in (report.get("checkpoints") or {}).items():
            expert_marks = given.get(int(number))
            if not expert_marks:
                continue
            expert = _experts_reached(expert_marks)
            if expert is None:
                ties += 1
                continue
            pairs.setdefault((row.question_id, int(number)), []).append((bool(reached), expert, row.source))
    table = []
    for (question_id, number), items in sorted(pairs.items()):
        label, points = checkpoints[question_id][number - 1]
        for source in ("all", *sorted({item[2] for item in items})):
            chosen = items if source == "all" else [item for item in items if item[2] == source]
            judge, expert = [item[0] for item in chosen], [item[1] for item in chosen]
            table.append({"question_id": question_id, "checkpoint": number, "sub_question": label, "points": points,
                          "source": source, "n": len(chosen),
                          "agreement": sum(1 for j, e in zip(judge, expert) if j == e) / len(chosen),
                          "kappa": stats.cohen_kappa(judge, expert), "judge_reached": sum(judge),
                          "experts_reached": sum(expert)})
    kappas = [row["kappa"] for row in table if row["source"] == "all" and row["kappa"] is not None]
    return {"table": table, "ties": ties, "rubric_changed": changed, "with_kappa": len(kappas),
            "median_kappa": float(np.median(kappas)) if kappas else None}


def rubric_step_agreement(rows, references, marks, checkpoints):
    """For a rubric judge asked for its step report: first-wrong-step agreement with the experts' step
    labels (as for step judges: their first wrong step on the rule-based split; the judge numbered
    the same split) and, per checkpoint (per question and source), Cohen's κ between the judge's
    reached / not reached and the experts' checkpoint marks (`selectors.checkpoint_marks`)."""
    judged = [r for r in rows if isinstance(r.step_verdicts.get("step_report"), dict)]
    if not judged:
        return None
    unreadable = sum(1 for r in judged if r.step_verdicts["step_report"].get("status") == "unparseable")
    return {"answers": len(judged), "unreadable": unreadable,
            "first_wrong_step": _rubric_first_wrong_step(judged, references, split_steps),
            "checkpoints": _checkpoint_kappas(judged, marks, checkpoints)}


def validity_report(selection, rows, params: Parameters, *, drawn_ids=frozenset(), step_references=None,
                    checkpoint_marks=None):
    gold_ids = {r.response_id for r in rows if r.gold is not None}
    return {
        "selection": selection.as_dict(),
        "parameters": asdict(params),
        "answers": len(rows),
        "questions": len({r.question_id for r in rows}),
        "golds_from_random_draws": len(gold_ids & set(drawn_ids)),
        "alt_test": alt_test(rows, params),
        "estimates": estimates(rows, params),
        "deferral": deferral(rows, params),
        "agreement": agreement(rows),
        "calibration": calibration(rows),
        "steps": step_agreement(rows, step_references or {}),
        "step_report": rubric_step_agreement(rows, step_references or {}, *(checkpoint_marks or ({}, {}))),
    }


def finite(value):
    """The report with every non-finite float as None (JSON has no NaN or Infinity)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def for_selection(selection, params: Parameters):
    """(report, rows) of a selection: what the page, the command and the methods report show."""
    rows = selectors.answer_rows(selection)
    stepped = [r.response_id for r in rows if "flagged_step" in r.step_verdicts or "step_report" in r.step_verdicts]
    references = selectors.step_references(stepped)
    reported = [r.response_id for r in rows if "step_report" in r.step_verdicts]
    report = validity_report(selection, rows, params, drawn_ids=selectors.drawn_response_ids(selection.setting),
                             step_references=references,
                             checkpoint_marks=selectors.checkpoint_marks(reported) if reported else ({}, {}))
    # the random draws behind the golds: which answers, with which seed (a draw can be made again)
    report["draws"] = [{"purpose": d.purpose, "seed": d.seed, "response_ids": d.response_ids,
                        "labels_per_answer": d.labels_per_answer, "created": d.created.isoformat(),
                        "selection": d.selection} for d in selectors.draws(selection.setting, limit=None)]
    return finite(report), rows
