"""Import speed: our RealMath-Eval importer vs a bare json.load + bulk insert.

Generates a release-format file of N responses (default 10,000) over 14 problems, imports it
with `import_realmath` (validation, rubric parsing, idempotency checks, history rows, imported
gold annotations, import report), then times the baseline: json.load and one bulk insert of
the same responses with no checks, no history and no annotations, into a fresh exam.

    .venv/bin/python bench/import_bench.py [--n 10000]
"""
import argparse
import json
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import print_table, setup_django, timed  # noqa: E402

SAMPLE = Path(__file__).resolve().parent.parent / "fixtures" / "demo" / "realmath_eval.json"


def generate(n, path, seed=7):
    template = json.loads(SAMPLE.read_text())
    rng = random.Random(seed)
    records = []
    for i in range(n):
        base = dict(template[i % len(template)])
        problem = i % 14
        base["problem_statement"] = f"[Problem {problem}] " + base["problem_statement"]
        base["student_response"] = base["student_response"] + f"\n(answer sheet {i})"
        base["student_id"] = f"{rng.getrandbits(128):032x}"
        records.append(base)
    path.write_text(json.dumps(records, ensure_ascii=False))
    return records


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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    args = parser.parse_args()
    setup_django()
    from django.db import connection

    from annotation.importers import import_realmath
    from annotation.models import Response

    path = Path(tempfile.mkdtemp()) / "release.json"
    generate(args.n, path)
    raw = path.read_bytes()
    times = {}
    with timed(times, "ours"):
        result = import_realmath(raw, path.name)
    with timed(times, "reimport"):
        again = import_realmath(raw, path.name)
    with timed(times, "baseline"):
        baseline(path)
    assert result.counts["responses_created"] == args.n and again.counts["responses_created"] == 0
    assert Response.objects.count() == 2 * args.n
    rows = [
        ["import_realmath (ours)", f"{times['ours']:.2f}", f"{args.n / times['ours']:,.0f}"],
        ["re-import, all skipped (ours)", f"{times['reimport']:.2f}", f"{args.n / times['reimport']:,.0f}"],
        ["json.load + bulk insert (baseline)", f"{times['baseline']:.2f}", f"{args.n / times['baseline']:,.0f}"],
    ]
    print_table(
        f"Import of {args.n:,} release-format responses on {connection.vendor} "
        f"({len(raw) / 1e6:.1f} MB); ours / baseline = {times['ours'] / times['baseline']:.2f}x",
        ["path", "seconds", "rows/s"],
        rows,
    )


if __name__ == "__main__":
    main()
