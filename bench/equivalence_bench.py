"""Final-answer equivalence: our engine vs Math-Verify vs plain string matching.

Runs the labelled case set (tests/equivalence/cases.jsonl, or --cases FILE) through three
checkers and prints, per category and overall: accuracy, false positives (called equivalent
but not), false negatives (called different but equivalent), undecided, and the median and
99th-percentile time per check.

- ours: ``equivalence.check_many`` (worker process, hard 2 s limit per check).
  ``--workers 1`` (default) keeps it on one core like the others; the time per check is the
  round trip to the worker, the pool start-up is reported separately.
- Math-Verify: ``math_verify.parse`` on both answers (wrapped in ``$...$`` when they have no
  math delimiters, as its documentation shows), then ``math_verify.verify(gold, pred)``. Its
  own SIGALRM timeouts apply (this script runs in the main thread). An exception counts as
  undecided.
- string: equal after removing ``$`` and whitespace.

Undecided counts against accuracy but is neither a false positive nor a false negative, except
for a pair labelled ``"undecided"`` (a one-sided claim: undecided is the right verdict), where it
is correct, "equivalent" a false positive and "not equivalent" a false negative.
A case may state a ``domain`` (issue 41): ours is told it, Math-Verify has no such input.
Whole solutions (up to 20,000 characters) are passed as they are to both: ours extracts the
final answer itself (the time per check includes the extraction), Math-Verify's ``parse`` does
its own extraction.

    .venv/bin/python bench/equivalence_bench.py [--cases FILE[,FILE...]] [--issue41] [--workers 1] [--timeout 2]
                                                [--categories a,b] [--smoke]

``--issue41`` runs the forms of issue 41: the held-out sets tests/equivalence/heldout_solutions.jsonl
and heldout_domains.jsonl (each written before tuning) and the issue-41 categories of the case set,
each reported separately.
"""
import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _setup import print_table, smoke_argument  # noqa: E402

from tests.equivalence.cases import CASES_PATH, UNDECIDED, accuracy, load_cases, score  # noqa: E402

HELDOUT_41 = CASES_PATH.with_name("heldout_solutions.jsonl")
HELDOUT_41_DOMAINS = CASES_PATH.with_name("heldout_domains.jsonl")  # the audit of issue 41
ISSUE_41 = {"solutions", "notations", "zh-conclusions", "meaning-guard", "domains"}


def run_ours(cases, workers, timeout):
    from equivalence import check_many, configure
    from equivalence.worker import pool

    configure(workers=max(workers, 1))  # the library reads no environment: --workers sets the pool
    started = time.perf_counter()
    check_many([("1", "1")] * max(workers, 1), workers=workers)  # start (and warm) the workers
    startup = time.perf_counter() - started
    predictions, times = [None] * len(cases), [0.0] * len(cases)
    wall = time.perf_counter()
    for mode, domain in sorted({(case["mode"], case.get("domain", "")) for case in cases}):
        indexes = [i for i, case in enumerate(cases) if case["mode"] == mode and case.get("domain", "") == domain]
        verdicts = check_many([(cases[i]["pred"], cases[i]["gold"]) for i in indexes], mode=mode,
                              timeout=timeout, workers=workers, domain=domain)
        for i, verdict in zip(indexes, verdicts):
            predictions[i] = verdict.equivalent
            times[i] = verdict.elapsed_ms / 1000
    wall = time.perf_counter() - wall
    pool().shutdown()
    return predictions, times, {"startup_s": startup, "wall_s": wall}


def run_math_verify(cases):
    from math_verify import parse, verify

    def parsed(text):
        wrapped = text if "$" in text or "\\boxed" in text else f"${text}$"
        result = parse(wrapped)
        return result if result else parse(text)

    predictions, times = [], []
    wall = time.perf_counter()
    for case in cases:
        started = time.perf_counter()
        try:
            gold = parsed(case["gold"])
            pred = parsed(case["pred"])
            predictions.append(bool(verify(gold, pred)))
        except Exception:  # noqa: BLE001 - any failure of the peer is its "undecided"
            predictions.append(None)
        times.append(time.perf_counter() - started)
    return predictions, times, {"wall_s": time.perf_counter() - wall}


def run_strings(cases):
    def canonical(text):
        return "".join(text.replace("$", "").split())

    predictions, times = [], []
    for case in cases:
        started = time.perf_counter()
        predictions.append(canonical(case["pred"]) == canonical(case["gold"]))
        times.append(time.perf_counter() - started)
    return predictions, times, {}


def percentile(values, fraction):
    ordered = sorted(values)
    if not ordered:
        return 0.0
    index = min(int(round(fraction * (len(ordered) - 1))), len(ordered) - 1)
    return ordered[index]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=str(CASES_PATH), help="one file or several, comma-separated")
    parser.add_argument("--issue41", action="store_true",
                        help="the held-out set of issue 41 and the issue-41 categories of the case set")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=2.0)
    parser.add_argument("--categories", default="",
                        help="comma-separated categories to run (default: all), e.g. the issue-26 forms: "
                             "piecewise,labelled,prose,tails,typed,set-conditions,units-words,approximation")
    smoke_argument(parser)
    args = parser.parse_args()
    load_at_start = _load()
    if args.issue41:
        cases = [dict(case, category="heldout-" + case["category"]) for case in load_cases(HELDOUT_41)]
        cases += [dict(case, category="heldout-audit-" + case["category"]) for case in load_cases(HELDOUT_41_DOMAINS)]
        cases += [case for case in load_cases(CASES_PATH) if case["category"] in ISSUE_41]
        args.cases = f"{HELDOUT_41.name} + {HELDOUT_41_DOMAINS.name} + the issue-41 categories of {CASES_PATH.name}"
    else:
        cases = [case for path in args.cases.split(",") for case in load_cases(path)]
    if args.smoke:  # a spread of the cases, every category's first ones
        cases = cases[:: max(1, len(cases) // 40)]
    if args.categories:
        wanted = {name.strip() for name in args.categories.split(",") if name.strip()}
        cases = [case for case in cases if case["category"] in wanted]
    print(f"{len(cases)} labelled pairs from {args.cases} "
          f"({sum(c['label'] is True for c in cases)} equivalent, {sum(c['label'] is False for c in cases)} not, "
          f"{sum(c['label'] == UNDECIDED for c in cases)} undecided by design)")

    systems = {
        "ours": run_ours(cases, args.workers, args.timeout),
        "math-verify": run_math_verify(cases),
        "string": run_strings(cases),
    }
    scored = {name: score(cases, result[0]) for name, result in systems.items()}

    categories = sorted({case["category"] for case in cases})
    header = ["category", "n"] + [f"{name} {column}" for name in systems for column in ("acc", "FP", "FN", "und")]
    rows = []
    for category in categories:
        row = [category, scored["ours"][1][category]["n"]]
        for name in systems:
            bucket = scored[name][1][category]
            row += [f"{accuracy(bucket):.2f}", bucket["fp"], bucket["fn"], bucket["undecided"]]
        rows.append(row)
    total_row = ["ALL", len(cases)]
    for name in systems:
        bucket = scored[name][0]
        total_row += [f"{accuracy(bucket):.3f}", bucket["fp"], bucket["fn"], bucket["undecided"]]
    rows.append(total_row)
    print_table("Accuracy, false positives, false negatives and undecided per category", header, rows)

    timing_rows = []
    for name, (_, times, extra) in systems.items():
        timing_rows.append([
            name, f"{statistics.median(times) * 1000:.2f}", f"{percentile(times, 0.99) * 1000:.1f}",
            f"{max(times) * 1000:.1f}", f"{extra.get('wall_s', sum(times)):.2f}",
            f"{extra['startup_s']:.2f}" if "startup_s" in extra else "-",
        ])
    print_table("Time per check", ["checker", "median ms", "p99 ms", "max ms", "total s", "start-up s"], timing_rows)
    long_ones = [i for i, case in enumerate(cases) if max(len(case["pred"]), len(case["gold"])) > 1000]
    if long_ones:
        rows = []
        for name, (_, times, _) in systems.items():
            chosen = [times[i] for i in long_ones]
            rows.append([name, len(chosen), f"{statistics.median(chosen) * 1000:.2f}", f"{percentile(chosen, 0.99) * 1000:.1f}",
                         f"{max(chosen) * 1000:.1f}"])
        longest = max(max(len(cases[i]["pred"]), len(cases[i]["gold"])) for i in long_ones)
        print_table(f"Time per check on whole solutions (over 1,000 characters, up to {longest:,})",
                    ["checker", "n", "median ms", "p99 ms", "max ms"], rows)

    ours, peer = scored["ours"][0], scored["math-verify"][0]
    print(f"\nours: accuracy {accuracy(ours):.3f} with {ours['fp']} false positives; "
          f"Math-Verify: {accuracy(peer):.3f} with {peer['fp']} false positives; "
          f"string matching: {accuracy(scored['string'][0]):.3f}.")
    print_disagreements(cases, systems["ours"][0], systems["math-verify"][0])
    print(f"\nload average (1, 5, 15 min) at the start: {load_at_start}; at the end: {_load()}")


def print_disagreements(cases, ours, peer):
    """Where the two checkers both decide and differ, and which one the label agrees with."""
    rows = {}
    for case, a, b in zip(cases, ours, peer):
        if a is None or b is None or a == b or case["label"] == UNDECIDED:
            continue
        bucket = rows.setdefault(case["category"], [0, 0])
        bucket[0 if a == case["label"] else 1] += 1
    table = [[category, right + wrong, right, wrong] for category, (right, wrong) in sorted(rows.items())]
    table.append(["ALL", sum(r[1] for r in table), sum(r[2] for r in table), sum(r[3] for r in table)])
    print_table("Both decided, different verdicts (ours vs Math-Verify)", ["category", "n", "ours right", "Math-Verify right"], table)


def _load():
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())


if __name__ == "__main__":
    main()
