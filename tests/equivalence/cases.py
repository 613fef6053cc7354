"""The labelled case set (tests/equivalence/cases.jsonl) and its scoring, shared by tests and bench."""
import json
from collections import Counter, defaultdict
from pathlib import Path

CASES_PATH = Path(__file__).with_name("cases.jsonl")


UNDECIDED = "undecided"


def load_cases(path=CASES_PATH):
    """List of dicts: category, pred, gold, label, mode, optional domain (lines starting with # are comments).

    ``label`` is True (equivalent), False (not equivalent) or ``"undecided"``: the right verdict is
    undecided (a one-sided claim the engine cannot compare, issue 41). For such a pair "equivalent"
    is a false positive, "not equivalent" a false negative (a decision the engine cannot back).
    """
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip() and not line.startswith("#")]


def score(cases, predictions):
    """Accuracy, false positives/negatives and undecided counts, overall and per category.

    ``predictions`` holds True/False/None per case. Undecided counts as not correct, but it is
    neither a false positive nor a false negative, except for a pair labelled ``"undecided"``,
    where it is the correct verdict (and "equivalent" a false positive, "not equivalent" a false
    negative).
    """
    per_category = defaultdict(Counter)
    for case, predicted in zip(cases, predictions):
        bucket = per_category[case["category"]]
        bucket["n"] += 1
        if case["label"] == UNDECIDED:
            bucket["correct" if predicted is None else "fp" if predicted else "fn"] += 1
            if predicted is None:
                bucket["undecided"] += 1
        elif predicted is None:
            bucket["undecided"] += 1
        elif predicted == case["label"]:
            bucket["correct"] += 1
        elif predicted:
            bucket["fp"] += 1
        else:
            bucket["fn"] += 1
    total = Counter()
    for bucket in per_category.values():
        total.update(bucket)
    return total, dict(per_category)


def accuracy(bucket):
    return bucket["correct"] / bucket["n"] if bucket["n"] else 0.0


def is_equivalent_label(label):
    """True only for pairs labelled equivalent (an "undecided" label is not)."""
    return label is True
