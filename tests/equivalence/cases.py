"""The labelled case set (tests/equivalence/cases.jsonl) and its scoring, shared by tests and bench."""
import json
from collections import Counter, defaultdict
from pathlib import Path

CASES_PATH = Path(__file__).with_name("cases.jsonl")


def load_cases(path=CASES_PATH):
    """List of dicts: category, pred, gold, label (bool), mode (lines starting with # are comments)."""
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip() and not line.startswith("#")]


def score(cases, predictions):
    """Accuracy, false positives/negatives and undecided counts, overall and per category.

    ``predictions`` holds True/False/None per case. Undecided counts as not correct, but it is
    neither a false positive nor a false negative.
    """
    per_category = defaultdict(Counter)
    for case, predicted in zip(cases, predictions):
        bucket = per_category[case["category"]]
        bucket["n"] += 1
        if predicted is None:
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
