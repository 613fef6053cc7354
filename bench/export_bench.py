"""Export speed and memory: our export vs a user's own pandas script, on the same database.

Builds a scratch database with N responses (default 100,000), 3 expert labels and 4
judge results each, then runs, each in a fresh child process so that peak memory (max RSS)
is its own, for each format:

  ours     export_dataset --format parquet|csv|jsonl (streamed, bounded memory; all tables)
  pandas   read_sql over the responses (with question location), the labels (with annotator)
           and the judge results (with setting and model), each written with to_parquet,
           to_csv or to_json(lines=True): what a research group writes when the tool is slow

With DATABASE_URL set (PostgreSQL), that database is used: point it at a scratch database;
--reuse skips building the data when it already holds N responses.

    .venv/bin/python bench/export_bench.py [--n 100000] [--formats parquet,csv,jsonl] [--reuse] [--smoke]
"""
import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _procs  # noqa: E402
from _setup import print_table, setup_django, smoke_argument  # noqa: E402

HERE = Path(__file__).resolve()


def populate(n):
    from decimal import Decimal

    from django.contrib.auth.models import User

    from annotation.importers.bulk import Inserter
    from annotation.models import Exam, Label, Question, Response, content_hash
    from grading.models import JudgeResult, JudgeSetting

    exam = Exam.objects.create(name="bench")
    questions = [
        Question.objects.create(exam=exam, statement=f"Problem {i}", statement_hash=content_hash(f"Problem {i}"),
                                reference_solution="(1) ... ------5 points\n(2) ... ------10 points",
                                full_score=10, location=f"B-{i:02d}", level="low" if i % 2 else "high")
        for i in range(14)
    ]
    users = [User.objects.create(username=f"expert{i}") for i in range(3)]
    judge_settings = [JudgeSetting.objects.create(name=f"judge{i}", model=f"model-{i}") for i in range(4)]
    # Rows go in through the importers' multi-row INSERTs: building model instances took most of the time.
    responses, labels, results = Inserter(Response), Inserter(Label), Inserter(JudgeResult)
    batch = 5000
    for start in range(0, n, batch):
        rows = [
            {"question_id": questions[i % 14].pk, "source": "human" if i % 2 else "synthetic", "student_id": f"s{i:07d}",
             "transcript": f"Student answer {i}: since $f'(x) > 0$ the function increases, so $x = {i % 7}$.",
             "transcript_hash": content_hash(str(i)), "gold_score": Decimal(i % 11), "gold_status": "agreed"}
            for i in range(start, min(n, start + batch))
        ]
        ids = responses.insert(rows)
        labels.insert([
            {"response_id": pk, "annotator_id": u.pk, "sub_scores": {"(1)": 3, "(2)": int(r["gold_score"]) - 3},
             "total": r["gold_score"], "submitted": True}
            for pk, r in zip(ids, rows) for u in users
        ])
        results.insert([
            {"setting_id": s.pk, "response_id": pk, "cache_key": f"{s.pk}-{pk}", "status": "ok",
             "score": float(r["gold_score"]) + 1, "rationale": "Overall Score: 5\nThe student ...",
             "raw_output": "Overall Score: 5\nThe student ...", "prompt_tokens": 900, "completion_tokens": 300}
            for pk, r in zip(ids, rows) for s in judge_settings
        ])


def child_ours(out, fmt):
    from django.core.management import call_command

    start = time.perf_counter()
    call_command("export_dataset", "--format", fmt, "--out", out, verbosity=0, stdout=open(os.devnull, "w"))
    return time.perf_counter() - start


PEER_QUERIES = {
    "responses": "SELECT r.*, q.location AS question_location FROM annotation_response r "
                 "JOIN annotation_question q ON q.id = r.question_id",
    "labels": "SELECT a.*, u.username AS annotator FROM annotation_label a "
              "LEFT JOIN auth_user u ON u.id = a.annotator_id",
    "judge_results": "SELECT j.*, c.name AS setting, c.model AS model FROM grading_judgeresult j "
                     "JOIN grading_judgesetting c ON c.id = j.config_id",
}


def _peer_connection():
    """A plain DB-API connection, as a user's script opens it."""
    from django.conf import settings

    db = settings.DATABASES["default"]
    if db["ENGINE"].endswith("sqlite3"):
        import sqlite3

        return sqlite3.connect(db["NAME"])
    import psycopg
    from psycopg.types.string import TextLoader

    connection = psycopg.connect(host=db["HOST"], port=db["PORT"] or 5432, user=db["USER"], password=db["PASSWORD"],
                                 dbname=db["NAME"])
    # JSON columns as text, as SQLite gives them: Parquet cannot hold the empty dicts psycopg makes of them.
    connection.adapters.register_loader("jsonb", TextLoader)
    return connection


def child_pandas(out, fmt):
    import warnings

    start = time.perf_counter()  # the import of pandas counts, as ours counts that of pyarrow
    import pandas as pd

    connection = _peer_connection()
    with warnings.catch_warnings():  # pandas prefers SQLAlchemy but reads any DB-API connection
        warnings.simplefilter("ignore", UserWarning)
        for name, sql in PEER_QUERIES.items():
            frame = pd.read_sql(sql, connection)
            if fmt == "parquet":
                frame.to_parquet(Path(out) / f"{name}.parquet")
            elif fmt == "csv":
                frame.to_csv(Path(out) / f"{name}.csv", index=False)
            else:
                frame.to_json(Path(out) / f"{name}.jsonl", orient="records", lines=True, force_ascii=False)
            del frame
    connection.close()
    return time.perf_counter() - start


def run_child(kind, fmt, env):
    out = tempfile.mkdtemp(prefix=f"export-{kind}-")
    try:
        result = _procs.run([sys.executable, str(HERE), "--child", kind, "--format", fmt, "--out", out],
                            env=env, check=True, capture_output=True, text=True)
        data = json.loads(result.stdout.strip().splitlines()[-1])
        data["mb_written"] = sum(p.stat().st_size for p in Path(out).iterdir()) / 1e6
        return data
    finally:
        shutil.rmtree(out, ignore_errors=True)


PEER_LABELS = {"parquet": "pandas read_sql + to_parquet", "csv": "pandas read_sql + to_csv",
               "jsonl": "pandas read_sql + to_json(lines)"}
OURS_WRITES = {"parquet": "5 typed tables + manifest", "csv": "5 typed tables + manifest",
               "jsonl": "full nested JSONL (everything, re-importable) + manifest"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--formats", default="parquet,csv,jsonl")
    parser.add_argument("--format", help=argparse.SUPPRESS)
    parser.add_argument("--reuse", action="store_true", help="keep the data already in DATABASE_URL when it has N responses")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each side, alternating; the best is shown")
    parser.add_argument("--ours-only", action="store_true", help="skip the pandas peer (it needs ~9 GB at 1M responses)")
    parser.add_argument("--child", choices=["ours", "pandas"])
    parser.add_argument("--out")
    smoke_argument(parser)
    args = parser.parse_args()
    if args.smoke:
        args.n, args.repeat = 300, 1
    if args.child:
        sys.path.insert(0, str(HERE.parent.parent))
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
        import django

        django.setup()
        cpu = time.process_time()
        seconds = (child_ours if args.child == "ours" else child_pandas)(args.out, args.format)
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps({"seconds": seconds, "cpu": time.process_time() - cpu, "peak_mb": peak_mb}))
        return
    setup_django()
    from django.db import connection

    from annotation.models import Response

    if not (args.reuse and Response.objects.count() == args.n):
        start = time.perf_counter()
        populate(args.n)
        print(f"populated {args.n:,} responses, {3 * args.n:,} labels, {4 * args.n:,} judge results "
              f"in {time.perf_counter() - start:.0f} s")
    connection.close()
    env = dict(os.environ)
    rows = []
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for fmt in args.formats.split(","):
        runs = {"ours": []} if args.ours_only else {"ours": [], "pandas": []}
        for _ in range(args.repeat):
            for kind in runs:
                runs[kind].append(run_child(kind, fmt, env))
        ours = min(runs["ours"], key=lambda run: run["seconds"])
        if args.ours_only:
            rows.append([f"export_dataset --format {fmt} (ours)", f"{ours['seconds']:.1f}", f"{ours['cpu']:.1f}",
                         f"{ours['peak_mb']:.0f}", "", "", "", f"{ours['mb_written']:.0f}", OURS_WRITES[fmt]])
            continue
        theirs = min(runs["pandas"], key=lambda run: run["seconds"])
        rows.append([f"export_dataset --format {fmt} (ours)", f"{ours['seconds']:.1f}", f"{ours['cpu']:.1f}",
                     f"{ours['peak_mb']:.0f}", f"{ours['seconds'] / theirs['seconds']:.2f}x",
                     f"{ours['cpu'] / theirs['cpu']:.2f}x", f"{ours['peak_mb'] / theirs['peak_mb']:.2f}x",
                     f"{ours['mb_written']:.0f}", OURS_WRITES[fmt]])
        rows.append([PEER_LABELS[fmt], f"{theirs['seconds']:.1f}", f"{theirs['cpu']:.1f}", f"{theirs['peak_mb']:.0f}",
                     "", "", "",
                     f"{theirs['mb_written']:.0f}", "responses, labels, judge results: every column"])
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print_table(
        f"Export of {args.n:,} responses on {connection.vendor} (best of {args.repeat})",
        ["path", "seconds", "CPU s", "peak RSS MB", "time ours/peer", "CPU ours/peer", "memory ours/peer",
         "MB written", "what it writes"],
        rows,
    )


if __name__ == "__main__":
    main()
