"""Export speed and memory: our streaming export vs pandas writing the same prepared frame.

Builds a scratch database with N responses (default 100,000), 3 expert annotations and 4
judge results each, then runs, each in a fresh child process so that peak memory (max RSS)
is its own:

  ours     export_dataset --format parquet|csv|jsonl (streams in chunks, bounded memory)
  pandas   the same response rows already prepared in a DataFrame, written by pandas

    .venv/bin/python bench/export_bench.py [--n 100000] [--format parquet]
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import print_table, setup_django  # noqa: E402

HERE = Path(__file__).resolve()


def populate(n):
    from decimal import Decimal

    from django.contrib.auth.models import User

    from annotation.models import Annotation, Exam, Question, Response, content_hash
    from grading.models import JudgeResult, JudgeSetting

    exam = Exam.objects.create(name="bench")
    questions = [
        Question.objects.create(exam=exam, statement=f"Problem {i}", statement_hash=content_hash(f"Problem {i}"),
                                reference_solution="(1) ... ------5 points\n(2) ... ------10 points",
                                full_score=10, location=f"B-{i:02d}", level="low" if i % 2 else "high")
        for i in range(14)
    ]
    users = [User.objects.create(username=f"expert{i}") for i in range(3)]
    configs = [JudgeSetting.objects.create(name=f"judge{i}", model=f"model-{i}") for i in range(4)]
    batch = 5000
    for start in range(0, n, batch):
        rows = [
            Response(question=questions[i % 14], source="human" if i % 2 else "synthetic", student_id=f"s{i:07d}",
                     transcript=f"Student answer {i}: since $f'(x) > 0$ the function increases, so $x = {i % 7}$.",
                     transcript_hash=content_hash(str(i)), gold_score=Decimal(i % 11), gold_status="agreed")
            for i in range(start, min(n, start + batch))
        ]
        created = Response.objects.bulk_create(rows)
        if created[0].pk is None:
            created = list(Response.objects.filter(student_id__in=[r.student_id for r in rows]).order_by("id"))
        Annotation.objects.bulk_create(
            Annotation(response=r, annotator=u, sub_scores={"(1)": 3, "(2)": int(r.gold_score) - 3},
                       total=r.gold_score, submitted=True)
            for r in created for u in users
        )
        JudgeResult.objects.bulk_create(
            JudgeResult(config=c, response=r, cache_key=f"{c.pk}-{r.pk}", status="ok", score=float(r.gold_score) + 1,
                        rationale="Overall Score: 5\nThe student ...", raw_output="Overall Score: 5\nThe student ...",
                        prompt_tokens=900, completion_tokens=300)
            for r in created for c in configs
        )


def child_ours(out, fmt):
    from django.core.management import call_command

    start = time.perf_counter()
    call_command("export_dataset", "--format", fmt, "--out", out, verbosity=0, stdout=open(os.devnull, "w"))
    return time.perf_counter() - start


def child_pandas(out, fmt):
    import pandas as pd

    from annotation.models import Response

    rows = list(Response.objects.values("id", "question__location", "source", "student_id", "gold_score",
                                        "gold_status", "transcript"))
    frame = pd.DataFrame(rows)
    start = time.perf_counter()
    if fmt == "csv":
        frame.to_csv(Path(out) / "responses.csv", index=False)
    else:
        frame.to_parquet(Path(out) / "responses.parquet", compression="zstd")
    return time.perf_counter() - start


def run_child(kind, fmt, env):
    out = tempfile.mkdtemp(prefix=f"export-{kind}-")
    result = subprocess.run([sys.executable, str(HERE), "--child", kind, "--format", fmt, "--out", out],
                            env=env, check=True, capture_output=True, text=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--format", default="parquet", choices=["parquet", "csv", "jsonl"])
    parser.add_argument("--child", choices=["ours", "pandas"])
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.child:
        sys.path.insert(0, str(HERE.parent.parent))
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
        import django

        django.setup()
        seconds = (child_ours if args.child == "ours" else child_pandas)(args.out, args.format)
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps({"seconds": seconds, "peak_mb": peak_mb}))
        return
    setup_django()
    start = time.perf_counter()
    populate(args.n)
    print(f"populated {args.n:,} responses, {3 * args.n:,} annotations, {4 * args.n:,} judge results "
          f"in {time.perf_counter() - start:.0f} s")
    env = dict(os.environ)
    ours = run_child("ours", args.format, env)
    pandas_fmt = "csv" if args.format == "csv" else "parquet"
    theirs = run_child("pandas", pandas_fmt, env)
    print_table(
        f"Export of {args.n:,} responses ({args.format})",
        ["path", "seconds", "peak RSS MB", "what it writes"],
        [
            ["export_dataset (ours, streamed)", f"{ours['seconds']:.1f}", f"{ours['peak_mb']:.0f}",
             "all tables: responses, annotations, judge results, ... + manifest"],
            [f"pandas to_{pandas_fmt} (prepared frame)", f"{theirs['seconds']:.1f}", f"{theirs['peak_mb']:.0f}",
             "one responses table from a frame already in memory"],
        ],
    )


if __name__ == "__main__":
    main()
