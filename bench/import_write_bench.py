"""Label saves while a large import runs in a Celery worker (issue 29, item 8; issue 40, item 14).

Builds a scratch SQLite database (a file in a temporary folder; or, with DATABASE_URL, that
PostgreSQL database: point it at a fresh one made with createdb), an annotator with assigned
responses, and a release-format file of N answers (`--n`, default 50,000; the generator of
bench/import_bench.py), or a full JSONL export of N answers with `--format dataset`. It then
starts a real Celery worker (file-system broker), queues the import as the Import page does
(`create_import_job`), and meanwhile saves labels and drafts through the API as the annotator
(Django's test client in this process: routing, middleware, views, SQL), one starting every
`--every` seconds from a pool of threads whether or not the earlier ones are done (as several
people labelling would), until the job ends. Each save's latency and outcome is recorded.

Modes, side by side (`--modes`):
  none     the same saves with no import running (the baseline)
  single   the import in one transaction without pauses, as before (IMPORT_BATCH_SECONDS set to
           1e9 in the worker)
  batches  the import as configured: on SQLite short transactions with pauses between them, on
           PostgreSQL one transaction paced the same way (annotation/importers/write_windows.py)

    .venv/bin/python bench/import_write_bench.py [--n 50000] [--format realmath] [--modes none,single,batches] [--smoke]

Prints, per mode and per kind of save (label save, draft save): the import's wall time, saves
made, errors (non-2xx or an exception, such as "database is locked"), the median, p95 and
maximum latency, and the p95 as a multiple of the same kind's with no import (the goal: at most
2x). `--smoke` is a size that runs in about a minute (2,000 answers).
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _procs  # noqa: E402
from _setup import ROOT, generate_release, print_table, setup_django, smoke_argument  # noqa: E402


def generate_dataset(n, path, scratch):
    """A full JSONL export of n answers: imported into a second scratch database, exported."""
    release = scratch / "for-dataset.json"
    generate_release(n, release)
    env = {**os.environ, "REALMATH_VAR_DIR": str(scratch / "source"), "REALMATH_IMPORT_MAX_BYTES": str(1 << 34)}
    (scratch / "source").mkdir()
    code = (
        "import sys; sys.path.insert(0, 'bench'); from _setup import setup_django; setup_django();"
        "from annotation.importers import import_realmath; from annotation.models import Response;"
        "from annotation.export.writers import write_export;"
        f"import_realmath(open({str(release)!r}, 'rb'), 'r.json');"
        f"write_export(Response.objects.all(), 'jsonl', __import__('pathlib').Path({str(scratch / 'export')!r}))"
    )
    _procs.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True)
    shutil.move(scratch / "export" / "dataset.jsonl", path)
    release.unlink()


def start_worker(scratch, batch_seconds, pause_seconds):
    """A Celery worker on the scratch folder's own file-system broker (nobody else's queue)."""
    code = (
        "import os, django; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'config.settings'); django.setup();"
        "from django.conf import settings;"
        + (f"settings.IMPORT_BATCH_SECONDS = {batch_seconds};" if batch_seconds is not None else "")
        + (f"settings.IMPORT_BATCH_PAUSE_SECONDS = {pause_seconds};" if pause_seconds is not None else "")
        + "from config.celery import app;"
        "app.worker_main(['worker', '--pool', 'solo', '--without-gossip', '--without-mingle',"
        " '--without-heartbeat', '--loglevel', 'WARNING', '-n', 'importbench@%h'])"
    )
    log = open(scratch / "worker.log", "a")
    # Its own process group, stopped with the bench however it ends (bench/_procs.py).
    return _procs.spawn([sys.executable, "-c", code], cwd=ROOT, env=dict(os.environ), stdout=log,
                        stderr=subprocess.STDOUT)


def prepare(n_assigned=200):
    from decimal import Decimal

    from accounts.services import create_user_with_role
    from annotation.models import Assignment, Exam, Question, Response, content_hash

    annotator = create_user_with_role("bench-annotator", "pw-bench-annotator", "annotator")
    admin = create_user_with_role("bench-admin", "pw-bench-admin", "admin")
    exam = Exam.objects.create(name="labelled while importing", blind=True)
    statement = "Show that the sum of two even numbers is even."
    question = Question.objects.create(exam=exam, statement=statement, statement_hash=content_hash(statement),
                                       full_score=Decimal(10))
    responses = []
    for i in range(n_assigned):
        text = f"answer {i}"
        response = Response.objects.create(question=question, student_id=f"s{i:04d}", transcript=text,
                                           transcript_hash=content_hash(text))
        Assignment.objects.create(response=response, annotator=annotator)
        responses.append(response.pk)
    return annotator, admin, responses


VERSIONS = {}  # response id -> the annotator's label version, across modes
LOCAL = threading.local()


def _save(annotator, response_id, i):
    """One label save (even i) or draft save (odd i) through the API; (seconds, ok, what, i)."""
    from django.db import connection
    from django.test import Client

    t0 = time.perf_counter()
    try:
        if not hasattr(LOCAL, "client"):  # a thread's first save logs in (a session row) first
            client = Client()
            client.force_login(annotator)
            LOCAL.client = client
        client = LOCAL.client
        if i % 2 == 0:
            answer = client.put(f"/api/labels/{response_id}/",
                                {"base_version": VERSIONS.get(response_id, 0), "total": "5", "comment": f"save {i}"},
                                content_type="application/json")
            if answer.status_code in (200, 201):
                VERSIONS[response_id] = answer.json()["version"]
        else:
            answer = client.put(f"/api/labels/{response_id}/draft/",
                                {"base_version": VERSIONS.get(response_id, 0), "payload": {"comment": f"draft {i}"}},
                                content_type="application/json")
        ok, what = 200 <= answer.status_code < 300, str(answer.status_code)
    except Exception as exc:  # "database is locked" and the like
        ok, what = False, f"{type(exc).__name__}: {str(exc)[:60]}"
    finally:
        connection.close()
    return time.perf_counter() - t0, ok, what, i


def saves_until(done, annotator, responses, every, limit_seconds):
    """Open loop, as many people labelling would: a save starts every `every` seconds whether or
    not the earlier ones are done (in a pool of threads), until done() or the time limit.
    Each response is saved by one thread at a time (its turn comes every len(responses) saves)."""
    futures, i = [], 0
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=64) as pool:
        while not done() and time.monotonic() - start < limit_seconds:
            futures.append(pool.submit(_save, annotator, responses[i % len(responses)], i))
            i += 1
            time.sleep(every)
    return [f.result() for f in futures]


def run_mode(mode, args, scratch, data_path, annotator, admin, responses):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.db import close_old_connections

    from annotation.importers.services import create_import_job
    from annotation.models import ImportJob

    saves_until(lambda: False, annotator, responses, 0.05, 2)  # warm up (not counted)
    load = os.getloadavg()[0]  # the machine's load average as the mode starts (others share it)
    if mode == "none":
        t0 = time.monotonic()
        results = saves_until(lambda: False, annotator, responses, args.every, args.baseline_seconds)
        return {"import_s": None, "results": results, "wall": time.monotonic() - t0, "load": load}
    worker = start_worker(scratch, 1e9 if mode == "single" else args.batch_seconds, args.pause_seconds)
    try:
        time.sleep(args.worker_start)
        upload = SimpleUploadedFile(f"bench-{mode}.{'jsonl' if args.format == 'dataset' else 'json'}",
                                    data_path.read_bytes())
        job = create_import_job(admin, args.format, upload, f"bench {mode}")
        t0 = time.monotonic()

        def finished():
            close_old_connections()
            return ImportJob.objects.filter(pk=job.pk, status__in=["done", "failed"]).exists()

        results = saves_until(finished, annotator, responses, args.every, args.limit)
        wall = time.monotonic() - t0
        job.refresh_from_db()
        return {"import_s": wall, "results": results, "status": job.status, "error": job.error[:200], "wall": wall,
                "load": load}
    finally:
        _procs.stop(worker, grace=30)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=50_000)
    parser.add_argument("--format", choices=["realmath", "dataset"], default="realmath")
    parser.add_argument("--modes", default="none,single,batches")
    parser.add_argument("--every", type=float, default=0.5, help="seconds between saves")
    parser.add_argument("--baseline-seconds", type=float, default=30)
    parser.add_argument("--limit", type=float, default=3600, help="give up after this many seconds")
    parser.add_argument("--worker-start", type=float, default=8)
    parser.add_argument("--batch-seconds", type=float, help="IMPORT_BATCH_SECONDS in the worker (default: the setting)")
    parser.add_argument("--pause-seconds", type=float, help="IMPORT_BATCH_PAUSE_SECONDS (default: the setting)")
    smoke_argument(parser)
    args = parser.parse_args()
    if args.smoke:
        args.n, args.baseline_seconds, args.worker_start, args.limit, args.every = 2000, 12, 6, 180, 0.25
        if args.modes == "none,single,batches":
            args.modes = "none,batches"

    scratch = Path(tempfile.mkdtemp(prefix="realmath-importbench-"))
    os.environ["REALMATH_VAR_DIR"] = str(scratch / "var")
    os.environ["REALMATH_IMPORT_MAX_BYTES"] = str(1 << 34)
    setup_django()  # DATABASE_URL, when set, is used as it is (a fresh database: createdb)
    from django.conf import settings

    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]  # the test client's host
    import logging

    logging.getLogger("django.request").setLevel(logging.ERROR)  # 409s are counted, not printed
    data_path = scratch / ("dataset.jsonl" if args.format == "dataset" else "release.json")
    t0 = time.monotonic()
    if args.format == "dataset":
        generate_dataset(args.n, data_path, scratch)
    else:
        generate_release(args.n, data_path)
    print(f"{args.format} file of {args.n:,} answers: {data_path.stat().st_size / 1e6:.0f} MB "
          f"({time.monotonic() - t0:.0f} s to make)", flush=True)
    annotator, admin, responses = prepare()
    from django.db import connection

    rows, idle_p95, failed = [], {}, []
    for mode in args.modes.split(","):
        outcome = run_mode(mode, args, scratch, data_path, annotator, admin, responses)
        if outcome.get("status", "done") != "done":
            failed.append(f"{mode}: the import ended {outcome.get('status')}: {outcome.get('error', '')}")
        for kind, parity in (("save", 0), ("draft", 1)):
            results = [r for r in outcome["results"] if r[3] % 2 == parity]
            latencies = sorted(r[0] for r in results)
            errors = [r[2] for r in results if not r[1]]
            p95 = latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))] if latencies else float("nan")
            if mode == "none":
                idle_p95[kind] = p95
            ratio = f"{p95 / idle_p95[kind]:.2f}" if idle_p95.get(kind) else "-"
            locked = sum("locked" in e for e in errors)
            rows.append([mode, kind, "-" if outcome["import_s"] is None else f"{outcome['import_s']:.0f}",
                         outcome.get("status", "-"), len(results), f"{len(errors)} ({locked} locked)",
                         f"{statistics.median(latencies) * 1000:.0f}" if latencies else "-", f"{p95 * 1000:.0f}",
                         f"{latencies[-1] * 1000:.0f}" if latencies else "-", ratio, f"{outcome['load']:.1f}"])
            print(f"{mode} {kind}: {rows[-1]} {sorted(set(errors))[:3]}", flush=True)
    print_table(f"Label and draft saves during an import of {args.n:,} answers ({args.format}, {connection.vendor}, worker)",
                ["mode", "kind", "import s", "job", "saves", "errors", "median ms", "p95 ms", "max ms", "p95 / idle",
                 "load"],
                rows)
    shutil.rmtree(scratch, ignore_errors=True)
    if failed:
        sys.exit("; ".join(failed))


if __name__ == "__main__":
    main()
