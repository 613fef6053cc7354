"""Error geometry with the lexical baseline over a release-format import: how long the study takes.

Issue 23 asks for the study over all 224 human and 224 synthetic answers of a release-format
import, timed on an idle machine (docs/studies.md, "Time"). This script:

1. builds the two release files: ``--human FILE --synthetic FILE`` when the full release is at
   hand, else the demo's 32 + 32 records (fixtures/demo) copied ``--copies`` times (default 7:
   224 + 224), each copy with a new student id and a first line "Copy i." (the copies' texts are
   alike, so the figures mean nothing: the time is what is measured);
2. imports both with ``import_realmath`` into a scratch database (timed apart);
3. runs ``error_geometry --lexical --inline --format json`` with the defaults (clusters, 1,000
   bootstrap resamples, 1,000 permutations) in this process, and prints the wall clock, the CPU
   time, the peak memory, the analysis's own ``elapsed_seconds``, the counts and the load
   average before and after (a load above the core count means the figure is not an idle one).

    .venv/bin/python bench/geometry_bench.py [--copies 7] [--human F --synthetic F] [--bootstrap 1000]
        [--permutations 1000] [--no-clusters] [--json]

Run it on an idle machine; it takes a minute or two there (see docs/studies.md for the last figure).
"""
import argparse
import hashlib
import json
import os
import re
import resource
import sys
import tempfile
from io import StringIO
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import ROOT, print_table, setup_django, smoke_argument, timed  # noqa: E402

DEMO = ROOT / "fixtures" / "demo"


def copy_id(student_id: str, i: int) -> str:
    """A new id of the same kind: a human id is a hex hash, a synthetic one <model>_t_<t>_<n>
    (annotation/importers/realmath.py tells them apart by that)."""
    if re.fullmatch(r"[0-9a-f]{16,64}", student_id):
        return hashlib.sha256(f"{student_id}:{i}".encode()).hexdigest()[:32]
    return f"{student_id}_{i}"


def copies(source: Path, target: Path, n: int) -> int:
    records = json.loads(source.read_text(encoding="utf-8"))
    out = []
    for i in range(n):
        for record in records:
            copy = dict(record)
            copy["student_id"] = copy_id(record["student_id"], i)
            copy["student_response"] = f"Copy {i}.\n{record['student_response']}"
            out.append(copy)
    target.write_text(json.dumps(out, ensure_ascii=False), encoding="utf-8")
    return len(out)


def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime, usage.ru_stime


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--copies", type=int, default=7)
    parser.add_argument("--human", type=Path, help="A release file of human answers (instead of the demo's copies).")
    parser.add_argument("--synthetic", type=Path, help="A release file of synthetic answers.")
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--permutations", type=int, default=1000)
    parser.add_argument("--no-clusters", action="store_true")
    parser.add_argument("--json", action="store_true", help="Print the figures as JSON too.")
    smoke_argument(parser)
    args = parser.parse_args()
    if args.smoke:
        args.copies, args.bootstrap, args.permutations, args.no_clusters = 1, 20, 20, True

    load_before = os.getloadavg()
    setup_django()
    from django.core.management import call_command

    folder = Path(tempfile.mkdtemp(prefix="realmath-geometry-bench-"))
    files = {}
    for group, given, demo in (("human", args.human, "realmath_eval.json"),
                               ("synthetic", args.synthetic, "realmath_eval_llm_answer.json")):
        if given:
            files[group] = (given, len(json.loads(given.read_text(encoding="utf-8"))))
        else:
            path = folder / demo
            files[group] = (path, copies(DEMO / demo, path, args.copies))
    times = {}
    with timed(times, "import"):
        for path, _ in files.values():
            call_command("import_realmath", str(path), verbosity=0)
    command = ["error_geometry", "--lexical", "--inline", "--format", "json", "--bootstrap", str(args.bootstrap),
               "--permutations", str(args.permutations)]
    if args.no_clusters:
        command.append("--no-clusters")
    out = StringIO()
    user0, sys0 = cpu()
    with timed(times, "command"):
        call_command(*command, stdout=out, stderr=StringIO())
    user1, sys1 = cpu()
    results = json.loads(out.getvalue())
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    load_after = os.getloadavg()
    counts = results["counts"]
    rows = [
        ["answers", f"{files['human'][1]} human + {files['synthetic'][1]} synthetic"],
        ["segments", f"{counts['segments']} ({counts['human']} human, {counts['synthetic']} synthetic)"],
        ["import (both files)", f"{times['import']:.1f} s"],
        ["error_geometry --lexical --inline, wall clock", f"{times['command']:.1f} s"],
        ["  of which the analysis (elapsed_seconds)", f"{results['elapsed_seconds']:.1f} s"],
        ["  CPU user / system", f"{user1 - user0:.1f} s / {sys1 - sys0:.1f} s"],
        ["peak memory (this process)", f"{peak_mb:.0f} MB"],
        ["load average before / after (1 min)", f"{load_before[0]:.1f} / {load_after[0]:.1f} on {os.cpu_count()} cores"],
        ["settings", f"bootstrap {args.bootstrap}, permutations {args.permutations}, "
                     f"clusters {'off' if args.no_clusters else 'on'}"],
    ]
    print_table("Error geometry, lexical baseline, over a release-format import", ["what", "figure"], rows)
    if load_before[0] > (os.cpu_count() or 1):
        print("\nThe machine was loaded when the run started: this is not an idle machine's figure.")
    if args.json:
        print(json.dumps({"times": times, "analysis_seconds": results["elapsed_seconds"], "counts": counts,
                          "cpu_user": user1 - user0, "cpu_system": sys1 - sys0, "peak_mb": peak_mb,
                          "load_before": load_before, "load_after": load_after}, indent=1))


if __name__ == "__main__":
    main()
