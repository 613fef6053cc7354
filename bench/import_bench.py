"""Import speed and memory: our RealMath-Eval importer vs a bare json.load + bulk insert.

Generates a release-format file of N responses (default 10,000) over 14 problems, then, each in
a fresh child process (so that peak memory is its own) on a fresh scratch database:

  ours      import_realmath: validation, rubric parsing, idempotency checks, history rows,
            imported gold labels, import report; then the same file again (all skipped)
  baseline  json.load and one bulk insert of the same responses with no checks, no history
            and no labels

With DATABASE_URL set (PostgreSQL), both children use that database: point it at an empty
scratch database.

    .venv/bin/python bench/import_bench.py [--n 10000] [--ours-only]
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _procs  # noqa: E402
from _setup import generate_release, print_table, setup_django, smoke_argument, timed  # noqa: E402


def baseline(path):
    from annotation.models import Exam, Question, Response, content_hash

    records = json.loads(path.read_text())
    exam = Exam.objects.create(name="baseline")
    questions = {}
    rows = []
    for record in records:
        statement = "baseline " + record["problem_statement"]
        question = questions.get(statement)
        if question is None:
            question = questions[statement] = Question.objects.create(
                exam=exam, statement=statement, statement_hash=content_hash(statement), full_score=record["full_score"]
            )
        rows.append(
            Response(
                question=question,
                student_id=record["student_id"],
                transcript=record["student_response"],
                transcript_hash=content_hash(record["student_response"]),
                gold_score=record["gt"],
            )
        )
    Response.objects.bulk_create(rows, batch_size=1000)


def child(kind, path):
    import resource

    setup_django()
    from django.db import connection

    from annotation.importers import import_realmath
    from annotation.models import Response

    times = {}
    cpu = time.process_time()
    if kind == "ours":  # as import_realmath the command does: the open file, read in blocks
        with timed(times, "seconds"), path.open("rb") as stream:
            result = import_realmath(stream, path.name)
        times["cpu"] = time.process_time() - cpu
        with timed(times, "reimport"), path.open("rb") as stream:
            again = import_realmath(stream, path.name)
        assert result.counts["responses_created"] == result.counts["records"] and again.counts["responses_created"] == 0
    else:
        before = Response.objects.count()
        with timed(times, "seconds"):
            baseline(path)
        times["cpu"] = time.process_time() - cpu
        assert Response.objects.count() > before
    times["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    times["vendor"] = connection.vendor
    print(json.dumps(times))


def run_child(kind, path):
    env = {**os.environ, "REALMATH_IMPORT_MAX_BYTES": str(path.stat().st_size + 1)}
    result = _procs.run([sys.executable, __file__, "--child", kind, "--file", str(path)], check=True,
                        capture_output=True, text=True, env=env)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--child", choices=["ours", "baseline"])
    parser.add_argument("--file")
    parser.add_argument("--ours-only", action="store_true",
                        help="skip the baseline (json.load holds the whole file: ~25 GB at 1M records)")
    smoke_argument(parser)
    args = parser.parse_args()
    if args.smoke:
        args.n = 200
    if args.child:
        child(args.child, Path(args.file))
        return
    folder = Path(tempfile.mkdtemp())
    path = folder / "release.json"
    generate_release(args.n, path)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    ours = run_child("ours", path)
    theirs = None if args.ours_only else run_child("baseline", path)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    size_mb = path.stat().st_size / 1e6
    shutil.rmtree(folder, ignore_errors=True)
    if theirs is None:
        print_table(
            f"Import of {args.n:,} release-format responses on {ours['vendor']} ({size_mb:.1f} MB); baseline skipped",
            ["path", "seconds", "CPU s", "rows/s", "peak RSS MB"],
            [["import_realmath (ours)", f"{ours['seconds']:.2f}", f"{ours['cpu']:.2f}",
              f"{args.n / ours['seconds']:,.0f}", f"{ours['peak_mb']:.0f}"],
             ["re-import, all skipped (ours)", f"{ours['reimport']:.2f}", "", f"{args.n / ours['reimport']:,.0f}", ""]],
        )
        return
    ratio = ours["seconds"] / theirs["seconds"]
    cpu_ratio = ours["cpu"] / theirs["cpu"]
    rows = [
        ["import_realmath (ours)", f"{ours['seconds']:.2f}", f"{ours['cpu']:.2f}", f"{args.n / ours['seconds']:,.0f}",
         f"{ours['peak_mb']:.0f}"],
        ["re-import, all skipped (ours)", f"{ours['reimport']:.2f}", "", f"{args.n / ours['reimport']:,.0f}", ""],
        ["json.load + bulk insert (baseline)", f"{theirs['seconds']:.2f}", f"{theirs['cpu']:.2f}",
         f"{args.n / theirs['seconds']:,.0f}", f"{theirs['peak_mb']:.0f}"],
    ]
    print_table(
        f"Import of {args.n:,} release-format responses on {ours['vendor']} "
        f"({size_mb:.1f} MB); ours / baseline = {ratio:.2f}x in time, {cpu_ratio:.2f}x in CPU time",
        ["path", "seconds", "CPU s", "rows/s", "peak RSS MB"],
        rows,
    )


if __name__ == "__main__":
    main()
