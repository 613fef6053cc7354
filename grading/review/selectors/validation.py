"""Step-judge validation (IneqMath): the judges chosen, the cases, confusion figures, accuracy by model."""
from collections import defaultdict

from django.db.models import Count, Exists, OuterRef
from django.utils.translation import gettext_lazy

from annotation.models import Response
from core.ids import id_param

from ...models import JudgeResult, JudgeSetting

# --- step-judge validation (IneqMath) ------------------------------------------------------

FINAL_ANSWER_KINDS = (JudgeSetting.Kind.INEQ_FINAL_ANSWER, JudgeSetting.Kind.CAS_FINAL_ANSWER)
JUDGE_SLOTS = (
    ("final_answer", gettext_lazy("Final answer"), FINAL_ANSWER_KINDS),
    ("toy_case", gettext_lazy("Toy case"), (JudgeSetting.Kind.INEQ_TOY_CASE,)),
    ("logical_gap", gettext_lazy("Logical gap"), (JudgeSetting.Kind.INEQ_LOGICAL_GAP,)),
    ("numerical_approximation", gettext_lazy("Numerical approximation"), (JudgeSetting.Kind.INEQ_NUMERICAL_APPROXIMATION,)),
    ("numerical_computation", gettext_lazy("Numerical computation"), (JudgeSetting.Kind.INEQ_NUMERICAL_COMPUTATION,)),
    ("holistic", gettext_lazy("Holistic baseline"), (JudgeSetting.Kind.INEQ_HOLISTIC,)),
)
STEP_SLOTS = ("toy_case", "logical_gap", "numerical_approximation", "numerical_computation")
OVERALL_SLOTS = ("final_answer", *STEP_SLOTS)
SLOT_LABELS = {slot: label for slot, label, _ in JUDGE_SLOTS}
POSITIVE_CLASSES = {"flaw": gettext_lazy("the judge fails the solution (finds a flaw)"), "pass": gettext_lazy("the judge passes the solution")}


def validation_judges(params=None):
    """Per judge slot (final answer, the four step judges, holistic): the setting versions that
    have results, and the one chosen (`judge_<slot>` in params, else the newest). One query."""
    params = params or {}
    kinds = {kind: slot for slot, _, slot_kinds in JUDGE_SLOTS for kind in slot_kinds}
    judge_settings = (
        JudgeSetting.objects.filter(kind__in=list(kinds))
        .annotate(n_results=Count("results"))
        .filter(n_results__gt=0)
        .only("id", "name", "version", "kind", "model")
        .order_by("-created", "-id")
    )
    available = {slot: [] for slot, _, _ in JUDGE_SLOTS}
    for setting in judge_settings:
        available[kinds[setting.kind]].append(setting)
    chosen = {}
    for slot, options in available.items():
        wanted = str(params.get(f"judge_{slot}", "")).strip()
        if wanted == "none":
            chosen[slot] = None
            continue
        picked = next((c for c in options if str(c.pk) == wanted), None)
        chosen[slot] = picked or (options[0] if options else None)
    return {"available": available, "chosen": chosen}


def _current_of_settings(setting_ids):
    newer = JudgeResult.objects.filter(setting=OuterRef("setting"), response=OuterRef("response"), pk__gt=OuterRef("pk"))
    return JudgeResult.objects.filter(setting__in=setting_ids).exclude(Exists(newer))


def _chosen_ids(chosen):
    return {setting.pk: slot for slot, setting in chosen.items() if setting is not None}


def validation_response_ids(chosen, params=None):
    """Ids of the responses judged by any chosen setting, in order (a queryset, for paging)."""
    params = params or {}
    results = _current_of_settings(list(_chosen_ids(chosen)))
    if params.get("state") == "open":
        results = results.filter(status=JudgeResult.Status.OK, validation__isnull=True)
    elif params.get("state") == "done":
        results = results.filter(validation__isnull=False)
    if id_param(params.get("question")) is not None:
        results = results.filter(response__question_id=id_param(params["question"]))
    return results.order_by("response_id").values_list("response_id", flat=True).distinct()


def validation_rows(chosen, response_ids):
    """For some responses: each chosen judge's verdict and the expert's mark (three queries)."""
    slots = _chosen_ids(chosen)
    results = _current_of_settings(list(slots)).filter(response_id__in=response_ids).values_list(
        "pk", "setting_id", "response_id", "status", "score", "validation__verdict_right"
    )
    cells = defaultdict(dict)
    for pk, setting_id, response_id, status, score, right in results:
        cells[response_id][slots[setting_id]] = {
            "result": pk, "status": status, "passes": None if score is None else score >= 0.5, "right": right,
        }
    responses = Response.objects.filter(pk__in=response_ids).select_related("question").only(
        "id", "student_id", "source", "generator_model", "question__id", "question__location", "question__external_id"
    )
    order = {pk: i for i, pk in enumerate(response_ids)}
    return [
        {"response": r, "cells": [cells[r.pk].get(slot) for slot, _, _ in JUDGE_SLOTS if chosen.get(slot)]}
        for r in sorted(responses, key=lambda r: order[r.pk])
    ]


def validation_case(response_pk, chosen):
    """One response with the chosen judges' results and their validations."""
    response = Response.objects.select_related("question__exam").get(pk=response_pk)
    slots = _chosen_ids(chosen)
    results = {
        slots[r.setting_id]: r
        for r in _current_of_settings(list(slots)).filter(response=response).select_related("setting", "validation__validated_by")
    }
    judges = [
        {"slot": slot, "label": label, "config": chosen[slot], "result": results.get(slot),
         "validation": getattr(results.get(slot), "validation", None) if results.get(slot) else None}
        for slot, label, _ in JUDGE_SLOTS if chosen.get(slot)
    ]
    return {"response": response, "question": response.question, "judges": judges}


def _model_of(generator_model, student_id, source):
    if generator_model:
        return generator_model
    if source == Response.Source.SYNTHETIC and "_t_" in (student_id or ""):
        return student_id.split("_t_")[0]
    return "human answers" if source == Response.Source.HUMAN else (source or "—")


def confusion_figures(pairs, positive="flaw"):
    """Confusion matrix and accuracy/precision/recall/F1 of judge verdicts against the experts'.

    `pairs` are (judge passes, expert says it passes). The positive class is a failed check
    (`positive="flaw"`, the judge's job is to catch flaws) or a passed one (`"pass"`)."""
    flip = positive == "flaw"
    tp = fp = fn = tn = 0
    for judge_pass, expert_pass in pairs:
        judge_pos, expert_pos = (not judge_pass, not expert_pass) if flip else (judge_pass, expert_pass)
        if judge_pos and expert_pos:
            tp += 1
        elif judge_pos:
            fp += 1
        elif expert_pos:
            fn += 1
        else:
            tn += 1
    n = tp + fp + fn + tn
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    # F1 = 2TP / (2TP + FP + FN): the harmonic mean of precision and recall where both exist, and 0
    # (not undefined) when the judge flags nothing the experts flagged: TP 0, FP 0, FN 3 is F1 0, as
    # scikit-learn's f1_score; undefined only with no positive at all on either side.
    f1 = 2 * tp / (2 * tp + fp + fn) if 2 * tp + fp + fn else None
    return {
        "n": n, "tp": tp, "fp": fp, "fn": fn, "tn": tn,
        "accuracy": (tp + tn) / n if n else None, "precision": precision, "recall": recall, "f1": f1,
    }


def validation_report(chosen, positive="flaw"):
    """Per judge: agreement with the experts; per model: Answer Acc, Step Acc per judge, Overall Acc.

    Accuracies are the share of a model's responses the judge passes; Overall Acc counts a
    response only when every one of the five judges (final answer and four step judges) has a
    verdict, and it is correct when all five pass. One query."""
    slots = _chosen_ids(chosen)
    rows = _current_of_settings(list(slots)).filter(status=JudgeResult.Status.OK, score__isnull=False).values_list(
        "setting_id", "response_id", "score", "validation__verdict_right", "validation__judge_says_pass",
        "response__generator_model", "response__student_id", "response__source",
    )
    pairs, verdicts, models = defaultdict(list), defaultdict(dict), {}
    for setting_id, response_id, score, right, judged_pass, generator, student, source in rows:
        slot, passes = slots[setting_id], score >= 0.5
        verdicts[response_id][slot] = passes
        models[response_id] = _model_of(generator, student, source)
        if right is not None and judged_pass == passes:  # a mark on an older verdict no longer applies
            pairs[slot].append((passes, passes if right else not passes))
    judges = [
        {"slot": slot, "label": label, "config": chosen[slot], **confusion_figures(pairs[slot], positive)}
        for slot, label, _ in JUDGE_SLOTS if chosen.get(slot)
    ]
    return {"judges": judges, "models": _accuracy_by_model(verdicts, models, chosen), "positive": positive,
            "positive_label": POSITIVE_CLASSES.get(positive, "")}


def _share(values):
    return (sum(values) / len(values), len(values)) if values else (None, 0)


def _accuracy_by_model(verdicts, models, chosen):
    step_slots = [s for s in STEP_SLOTS if chosen.get(s)]
    complete = all(chosen.get(s) for s in OVERALL_SLOTS)
    grouped = defaultdict(list)
    for response_id, by_slot in verdicts.items():
        grouped[models[response_id]].append(by_slot)
    table = []
    for model in sorted(grouped):
        entries = grouped[model]
        answer, n_answer = _share([e["final_answer"] for e in entries if "final_answer" in e])
        steps = {slot: _share([e[slot] for e in entries if slot in e]) for slot in step_slots}
        full = [all(e[s] for s in OVERALL_SLOTS) for e in entries if all(s in e for s in OVERALL_SLOTS)] if complete else []
        overall, n_overall = _share(full)
        table.append({
            "model": model, "n": len(entries), "answer_acc": answer, "n_answer": n_answer,
            "step_acc": [{"slot": s, "label": SLOT_LABELS[s], "acc": steps[s][0], "n": steps[s][1]} for s in step_slots],
            "overall_acc": overall, "n_overall": n_overall,
        })
    return table
