"""The anchoring experiment: does showing experts the judge's pre-grade move their own score?

An exam with `anchoring` on shows the newest score of one judge setting (`anchoring_setting`) to
a seeded random half of its assignments. The unit is the assignment, (response, annotator):
`anchor_shown(seed, response_id, annotator_id)` is a fixed function of the three (a bit of their
sha256), so the half never changes when assignments are added or pages reloaded, and about half
of any set of assignments is shown (each one independently, probability 1/2). What was shown,
or would have been, is recorded on the label when it is submitted (`Label.anchoring`).

`anchoring_figures` compares the two arms, over submitted labels with a recorded judge score:

- mean |expert - judge| and mean signed difference (expert - judge), one value per label;
- expert-expert agreement: over pairs of labels of the same response whose two labels are both
  in the arm (pairs across arms are counted, not used), mean |expert - expert| and the share of
  pairs within one point.

Each with a seeded 95% interval from a cluster bootstrap of whole answers (core.uncertainty: the
labels and pairs of one answer are not independent; none from fewer than 5 answers), and the
difference shown - hidden with its interval (each arm's answers resampled apart) and a two-sided
permutation test (arm labels shuffled among the labels or pairs, which the randomisation of each
assignment justifies; p = (1 + #{|perm| >= |observed|}) / (1 + permutations), never 0). Pure
functions, no Django.
"""
from __future__ import annotations

import hashlib
from collections import defaultdict
from itertools import combinations

import numpy as np

from core import uncertainty

RESAMPLES = 1000
PERMUTATIONS = 2000
CONFIDENCE = 0.95
ARMS = ("shown", "hidden")
MEASURES = {
    "abs_diff": "mean |expert − judge|",
    "signed_diff": "mean expert − judge",
    "expert_mad": "mean |expert − expert|",
    "expert_within_one": "expert pairs within one point",
}


def anchor_shown(seed: int, response_id: int, annotator_id: int) -> bool:
    """Whether the assignment (response, annotator) is in the shown half for this seed."""
    digest = hashlib.sha256(f"anchoring:{seed}:{response_id}:{annotator_id}".encode()).digest()
    return bool(digest[0] & 1)


def _means(values, answers, rng, n_resamples):
    """(resampled means, number of answers): whole answers drawn with replacement; None when
    fewer than core.uncertainty.MIN_CLUSTERS answers or no resamples."""
    codes, k = uncertainty.cluster_codes(answers)
    if k < uncertainty.MIN_CLUSTERS or not n_resamples:
        return None, k
    table = np.column_stack([np.ones(len(values)), np.asarray(values, dtype=float)])
    totals = uncertainty.resampled_totals(table, codes, k, rng, n_resamples)
    return totals[:, 1] / totals[:, 0], k


def _interval(values, answers, rng, n_resamples):
    draws, k = _means(values, answers, rng, n_resamples)
    if draws is None:
        return [None, None]
    return uncertainty.percentile(draws, confidence=CONFIDENCE, unit="answer", clusters=k).bounds()


def _difference(shown, hidden, rng, n_resamples, n_permutations):
    (shown, shown_answers), (hidden, hidden_answers) = shown, hidden
    shown, hidden = np.asarray(shown, dtype=float), np.asarray(hidden, dtype=float)
    if not shown.size or not hidden.size:
        return {"difference": None, "difference_ci": [None, None], "p_value": None}
    observed = float(shown.mean() - hidden.mean())
    ci = [None, None]
    a, _ = _means(shown, shown_answers, rng, n_resamples)
    b, _ = _means(hidden, hidden_answers, rng, n_resamples)
    if a is not None and b is not None:
        ci = uncertainty.percentile(a - b, confidence=CONFIDENCE, unit="answer").bounds()
    p_value = None
    if n_permutations:
        pooled = np.concatenate([shown, hidden])
        extreme = 0
        for _ in range(n_permutations):
            order = rng.permutation(pooled.size)
            diff = pooled[order[: shown.size]].mean() - pooled[order[shown.size:]].mean()
            extreme += abs(diff) >= abs(observed) - 1e-12
        p_value = uncertainty.monte_carlo_p(extreme, n_permutations)
    return {"difference": observed, "difference_ci": ci, "p_value": p_value}


def _expert_pairs(labels):
    """{arm: [(|a - b|, response) of each pair of labels of one response, both in the arm]}, and
    the number of pairs whose labels are in different arms."""
    by_response = defaultdict(list)
    for label in labels:
        by_response[label["response"]].append(label)
    pairs, mixed = {arm: [] for arm in ARMS}, 0
    for group in by_response.values():
        for a, b in combinations(group, 2):
            if a["shown"] != b["shown"]:
                mixed += 1
                continue
            pairs["shown" if a["shown"] else "hidden"].append((abs(float(a["expert"]) - float(b["expert"])),
                                                               a["response"]))
    return pairs, mixed


def anchoring_figures(labels, *, n_resamples=RESAMPLES, n_permutations=PERMUTATIONS, seed=0) -> dict:
    """Shown vs hidden figures of the anchoring experiment.

    `labels`: dicts {response, rater, expert, judge, shown} (one per submitted label; `judge` None
    when no judge score was recorded). Seeded: the same labels and seed give the same figures."""
    rng = np.random.default_rng(seed)
    labels = [label for label in labels if label.get("expert") is not None]
    per_arm = {arm: [label for label in labels if bool(label["shown"]) == (arm == "shown")] for arm in ARMS}
    samples = {}
    for arm, rows in per_arm.items():
        judged = [row for row in rows if row.get("judge") is not None]
        answers = [r["response"] for r in judged]
        samples[arm] = {  # (values, the answer of each): intervals resample whole answers
            "abs_diff": ([abs(float(r["expert"]) - float(r["judge"])) for r in judged], answers),
            "signed_diff": ([float(r["expert"]) - float(r["judge"]) for r in judged], answers),
        }
    pairs, mixed = _expert_pairs(labels)
    for arm in ARMS:
        pair_answers = [response for _, response in pairs[arm]]
        samples[arm]["expert_mad"] = ([d for d, _ in pairs[arm]], pair_answers)
        samples[arm]["expert_within_one"] = ([float(d <= 1 + 1e-9) for d, _ in pairs[arm]], pair_answers)
    arms = {}
    for arm in ARMS:
        arms[arm] = {
            "n_labels": len(per_arm[arm]),
            "n_judged": len(samples[arm]["abs_diff"][0]),
            "n_pairs": len(pairs[arm]),
        }
        for measure in MEASURES:
            values, answers = samples[arm][measure]
            arms[arm][measure] = float(np.mean(values)) if values else None
            arms[arm][f"{measure}_ci"] = _interval(values, answers, rng, n_resamples)
    tests = {
        measure: _difference(samples["shown"][measure], samples["hidden"][measure], rng, n_resamples, n_permutations)
        for measure in MEASURES
    }
    return {
        "n_labels": len(labels),
        "mixed_pairs": mixed,
        "arms": arms,
        "tests": tests,
        "measures": MEASURES,
        "resamples": n_resamples,
        "permutations": n_permutations,
        "seed": seed,
        "test": "two-sided permutation test of the difference of means (shown − hidden), arm labels shuffled; "
                "intervals from a bootstrap of whole answers, each arm apart (none from fewer than 5 answers)",
    }
