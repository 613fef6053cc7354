"""Throughput that grows with machines (issue 38): N Celery workers as N machines on this host.

Each "machine" is one ``celery -A config worker --concurrency 1`` (prefork, as ``make worker``)
with a working folder of its own (REALMATH_VAR_DIR: nothing on disk is shared) and a node name of
its own (``-n m1-<run>@%h``), reaching what a multi-machine installation shares (docs/deploy.md):
PostgreSQL (a database of the bench's own, ``realmath_scale_bench``, created and dropped here; the
``test`` database is not touched), Redis (broker and cache, databases 12 and 13 by default: only
the keys of this run are removed) and an S3-compatible bucket (moto's server on 127.0.0.1, started
here). The embedded default (SQLite file, file-system broker, local media folder) is not used: it
works only for processes that share one folder, which separate machines do not. Without PostgreSQL
and Redis the bench stops and says so (``--smoke`` then skips, exit 0). This process is the web
server: it uploads the pages and starts the judge runs from a folder of its own.

For N = 1, 2 (``--machines``; more where the host has the cores), in the same run, N = 1 first:

- OCR: the same ``--pages`` rendered exam pages (ocr.synthetic.full_page, 200-dpi A4, seeds
  200...; what bench/ocr_bench.py reads) through real tesseract. The machines start on a holding
  queue and warm up; the pages are uploaded (services.ingest_uploads: tasks wait in Redis); then
  every machine is told at once to consume the page queue (Celery's add_consumer), and the clock
  runs from that broadcast to the last stored transcript: pages per minute, without start-up or
  upload. Per machine: pages taken and CPU seconds; for the host: how busy its cores were.
- Judges: ``--judges`` runs of ``--answers`` answers each against tests/llm_server.py answering
  every call after a fixed ``--latency``, through an endpoint allowing ``--concurrency`` calls in
  flight (shared by all machines through Redis, as a provider's limit is). Calls per second from
  the first run's start to the last run's end; ideal = concurrency / latency. A machine adds calls
  per second only while one machine cannot keep the endpoint's concurrency busy (its CPU): the
  default limit (256 in flight, 0.5 s: 512 calls/s) is set above what one worker process does, so
  the figure is the machines', not the endpoint's; a lower ``--concurrency`` shows the endpoint's.

Per level it also reports the CPU seconds of each process group (each machine, this process as
"web", the S3 and LLM servers), how busy the host's cores were, and the sizing figures of
docs/deploy.md: OCR pages per worker CPU-minute and judge calls per worker CPU-second.

It prints a table and one JSON object (host, services, seeds, settings, figures; ``--json FILE``
writes it too). Quote the load average it prints: figures from a busy machine are not the host's.

    .venv/bin/python bench/scale_bench.py [--machines 1,2] [--pages 40] [--answers 512] [--judges 4]
        [--latency 0.5] [--concurrency 256] [--postgres postgres://postgres@127.0.0.1:5432/postgres]
        [--redis redis://127.0.0.1:6379] [--json scale.json] [--smoke]
"""
import argparse
import json
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _procs  # noqa: E402
from _setup import ROOT, print_table, setup_django, smoke_argument  # noqa: E402

DATABASE = "realmath_scale_bench"
PAGE_SEEDS = 200  # the first page's seed; ocr_bench reads 100..., the tests lower ones
BUCKET = "realmath-scale-bench"
# Folders the settings read from the environment (else under REALMATH_VAR_DIR, each machine's own).
FOLDER_VARIABLES = ("REALMATH_MEDIA_ROOT", "REALMATH_IMPORT_ROOT", "REALMATH_EXPORT_ROOT", "REALMATH_RATELIMIT_DIR",
                    "REALMATH_BEAT_LOCK")
KEYS = {"AWS_ACCESS_KEY_ID": "scale-bench", "AWS_SECRET_ACCESS_KEY": "scale-bench"}


# ----------------------------------------------------------------------------- services


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def services_missing(postgres, redis_url):
    """Why the shared services cannot be used here (None when they can)."""
    try:
        import psycopg
        import redis

        psycopg.connect(postgres, connect_timeout=3, autocommit=True).close()
        redis.Redis.from_url(f"{redis_url}/0", socket_connect_timeout=3).ping()
        import boto3  # noqa: F401
        import moto.server  # noqa: F401
    except Exception as exc:  # noqa: BLE001 - any reason is reported as it is
        return f"{type(exc).__name__}: {exc}"
    return None


def database_url(postgres, name):
    return re.sub(r"/[^/?]*(\?.*)?$", f"/{name}", postgres)


def recreate_database(postgres, name, drop_only=False):
    import psycopg

    with psycopg.connect(postgres, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if not drop_only:
            admin.execute(f'CREATE DATABASE "{name}"')


def start_s3():
    """moto's S3 server as its own process (a machine of its own would serve it), and the bucket."""
    import boto3

    port = free_port()
    process = _procs.spawn([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    client = boto3.client("s3", endpoint_url=url, region_name="us-east-1",
                          aws_access_key_id=KEYS["AWS_ACCESS_KEY_ID"], aws_secret_access_key=KEYS["AWS_SECRET_ACCESS_KEY"])
    deadline = time.monotonic() + 60
    while True:
        try:
            client.create_bucket(Bucket=BUCKET)
            return process, url
        except Exception:  # noqa: BLE001 - not listening yet
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("moto's S3 server did not start") from None
            time.sleep(0.2)


def forget_redis_keys(redis_url, databases, run):
    """Remove this run's keys (its queues, bindings, rate limits) from the bench's Redis databases."""
    import redis

    for db in databases:
        client = redis.Redis.from_url(f"{redis_url}/{db}")
        keys = list(client.scan_iter(match=f"*{run}*", count=1000))
        if keys:
            client.delete(*keys)


# ----------------------------------------------------------------------------- measuring


def host():
    memory = next((int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
                   if line.startswith("MemTotal:")), 0) if Path("/proc/meminfo").exists() else 0
    model = ""
    if Path("/proc/cpuinfo").exists():
        model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                      if line.startswith("model name")), "")
    return {"cores": os.cpu_count(), "memory_gb": round(memory / 1024 / 1024, 1), "cpu": model,
            "system": platform.platform(), "python": platform.python_version()}


def load():
    return [round(x, 2) for x in os.getloadavg()]


def cpu_busy():
    """The host's (busy, total) jiffies from /proc/stat: busy share over an interval = d(busy)/d(total)."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except OSError:
        return 0, 0
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return sum(fields) - idle, sum(fields)


def cpu_of(pgid):
    """CPU seconds so far of a process group, or of this process (the web server) for 0."""
    if pgid == 0:
        times = os.times()
        return times.user + times.system
    return group_cpu(pgid)


def group_cpu(pgid):
    """CPU seconds (user + system) used so far by the live processes of a process group, with the
    children they have waited for (tesseract runs as a child process of the worker's child)."""
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:  # after the name: state, ppid, pgrp, ..., utime, stime, cutime, cstime
            total += sum(int(x) for x in fields[11:15])
    return total / ticks


class Machine:
    """One worker process as one machine: its own folder, node name and log."""

    def __init__(self, index, scratch, run, env, queues):
        self.name = f"m{index}"
        self.folder = scratch / self.name
        self.folder.mkdir(parents=True)
        self.log_path = self.folder / "worker.log"
        self.node = f"m{index}-{run}@{socket.gethostname()}"
        self.env = {**env, "REALMATH_VAR_DIR": str(self.folder / "var")}
        self.queues = queues
        self.process = None

    def start(self):
        self.log = open(self.log_path, "w")
        self.process = _procs.spawn(  # its own process group, stopped with the bench however it ends
            [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", ",".join(self.queues),
             "--concurrency", "1", "--pool", "prefork", "--without-gossip", "--without-mingle",
             "--without-heartbeat", "--loglevel", "INFO", "-n", f"{self.node.split('@')[0]}@%h"],
            cwd=ROOT, env=self.env, stdout=self.log, stderr=subprocess.STDOUT,
        )

    def wait_ready(self, timeout=240):
        """Until the worker is ready and its process has run a page through tesseract once."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.log_path.read_text()
            if "ready." in text and "OCR engines warm" in text:
                return
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{self.name} did not start:\n{text[-3000:]}")
            time.sleep(0.2)

    def pages_done(self):
        return len(re.findall(r"Task ocr\.run_ocr\[[^\]]+\] succeeded", self.log_path.read_text()))

    def chunks_done(self):
        return len(re.findall(r"Task grading\.judges\.tasks\.\S+\[[^\]]+\] succeeded", self.log_path.read_text()))

    def cpu(self):
        return group_cpu(self.process.pid)

    def files_left(self):
        """Files in the machine's own folder besides its log (a task writing outside the storage
        layer would leave them here)."""
        return sorted(str(p.relative_to(self.folder)) for p in self.folder.rglob("*")
                      if p.is_file() and p != self.log_path)

    def stop(self):
        if self.process is not None:
            _procs.stop(self.process, grace=30)
            self.log.close()


def add_consumer(queue, machines):
    """Tell the machines to read `queue`, all in one broadcast; every one must say it did."""
    from celery import current_app

    replies = current_app.control.add_consumer(queue, destination=[m.node for m in machines], reply=True, timeout=10)
    answered = {node for reply in replies or () for node in reply}
    missing = [m.node for m in machines if m.node not in answered]
    if missing:
        raise SystemExit(f"no answer to add_consumer from {', '.join(missing)}")


def measure_ocr(machines, pages, exam, queue, cpu_groups):
    """Upload the pages while no machine reads their queue, then let every machine read it."""
    from django.conf import settings
    from django.db.models import Max

    from ocr import services
    from ocr.models import OcrRun
    from ocr.selectors import batch_progress

    settings.OCR_QUEUE = queue  # route_task reads it per message
    batch = services.create_batch(exam=exam, engine="tesseract", name=f"scale bench {queue}")
    services.ingest_uploads(batch, [services.Upload(f"s{i:03d}_B-1_1.png", data, "image/png")
                                    for i, (_, _, data) in enumerate(pages)])
    done_before = {m.name: m.pages_done() for m in machines}
    cpu_before = {name: cpu_of(pid) for name, pid in cpu_groups.items()}
    busy_before = cpu_busy()
    started = time.time()  # wall clock: compared with the runs' `finished` stamps
    add_consumer(queue, machines)
    deadline = time.monotonic() + 120 * len(pages) + 120
    while not batch_progress(batch)["complete"]:  # the end is read from the runs' stamps, not from here
        if any(m.process.poll() is not None for m in machines) or time.monotonic() > deadline:
            raise SystemExit("a machine stopped or the batch timed out:\n"
                             + "\n".join(m.log_path.read_text()[-1500:] for m in machines))
        time.sleep(0.5)
    runs = OcrRun.objects.filter(page__batch=batch)
    failed = runs.exclude(status=OcrRun.Status.DONE)
    if failed.exists() or runs.count() != len(pages):
        raise SystemExit(f"OCR: {failed.count()} of {runs.count()} pages failed: "
                         f"{failed.first().error if failed.exists() else 'pages missing'}")
    seconds = runs.aggregate(last=Max("finished"))["last"].timestamp() - started
    busy_after = cpu_busy()
    time.sleep(0.3)  # the last task's log line
    cpu = {name: round(cpu_of(pid) - cpu_before[name], 1) for name, pid in cpu_groups.items()}
    worker_cpu = sum(cpu[m.name] for m in machines)
    result = {
        "machines": len(machines), "seconds": round(seconds, 2), "pages_per_min": round(60 * len(pages) / seconds, 2),
        "pages_per_machine": {m.name: m.pages_done() - done_before[m.name] for m in machines},
        "cpu_seconds": cpu, "pages_per_worker_cpu_minute": round(60 * len(pages) / max(worker_cpu, 0.1), 1),
        "host_busy": round((busy_after[0] - busy_before[0]) / max(1, busy_after[1] - busy_before[1]), 3),
        "task_seconds_mean": round(sum((r.finished - r.started).total_seconds() for r in runs) / len(pages), 2),
    }
    batch.delete()  # the next level uploads the same pages, which would otherwise be duplicates
    return result


def measure_judges(machines, level, args, endpoint, server_url, cpu_groups):
    """`judges` runs over the bench's answers with settings new to this level (no cached answer)."""
    from django.db.models import Count, Max
    from judge_bench import server_stats

    from annotation.models import Response
    from grading.judges import services
    from grading.models import JudgeRun, JudgeRunItem

    judge_settings = [services.create_judge_setting(name=f"scale-n{level}-j{j}", kind="rubric", endpoint=endpoint,
                                                    model=f"judge-n{level}-{j}", temperature=0.7, max_tokens=512)
                      for j in range(args.judges)]
    ids = list(Response.objects.filter(student_id__startswith="scale-").values_list("pk", flat=True))
    server_stats(server_url, reset=True)
    chunks_before = {m.name: m.chunks_done() for m in machines}
    cpu_before = {name: cpu_of(pid) for name, pid in cpu_groups.items()}
    busy_before = cpu_busy()
    started = time.time()
    runs = [services.start_judge_run(setting, response_ids=ids) for setting in judge_settings]
    deadline = time.monotonic() + 600 + len(ids) * args.judges * args.latency
    while JudgeRun.objects.filter(pk__in=[r.pk for r in runs], status=JudgeRun.Status.RUNNING).exists():
        if any(m.process.poll() is not None for m in machines) or time.monotonic() > deadline:
            raise SystemExit("a machine stopped or the judge runs timed out")
        time.sleep(0.2)
    busy_after = cpu_busy()
    seconds = JudgeRun.objects.filter(pk__in=[r.pk for r in runs]).aggregate(last=Max("finished"))["last"].timestamp() - started
    states = dict(JudgeRunItem.objects.filter(run__in=runs).values_list("state").annotate(n=Count("id")))
    stats = server_stats(server_url)
    time.sleep(0.3)
    calls = len(ids) * args.judges
    cpu = {name: round(cpu_of(pid) - cpu_before[name], 1) for name, pid in cpu_groups.items()}
    worker_cpu = sum(cpu[m.name] for m in machines)
    return {
        "machines": len(machines), "calls": calls, "server_requests": stats["requests"],
        "max_in_flight": stats["max_in_flight"], "seconds": round(seconds, 2),
        "calls_per_s": round(calls / seconds, 1), "items": states, "chunk_size": runs[0].chunk_size,
        "chunks_per_machine": {m.name: m.chunks_done() - chunks_before[m.name] for m in machines},
        "cpu_seconds": cpu, "calls_per_worker_cpu_second": round(calls / max(worker_cpu, 0.1), 1),
        "host_busy": round((busy_after[0] - busy_before[0]) / max(1, busy_after[1] - busy_before[1]), 3),
    }


# ----------------------------------------------------------------------------- the bench


def levels_of(text):
    levels = sorted({int(x) for x in text.split(",") if x.strip()} | {1})
    if levels[0] < 1:
        raise SystemExit("--machines: counts from 1")
    return levels


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default_levels = ",".join(str(n) for n in range(1, max(2, min(os.cpu_count() or 1, 4)) + 1))
    parser.add_argument("--machines", default=default_levels, help="worker counts to measure (1 is always first)")
    parser.add_argument("--pages", type=int, default=40, help="OCR pages per level")
    parser.add_argument("--size", choices=["a4", "small"], default="a4")
    parser.add_argument("--answers", type=int, default=1024, help="answers per judge run")
    parser.add_argument("--judges", type=int, default=4, help="judge runs per level")
    parser.add_argument("--latency", type=float, default=0.5, help="seconds the LLM server takes per call")
    parser.add_argument("--concurrency", type=int, default=256, help="the endpoint's calls in flight, all machines")
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432/postgres",
                        help="a PostgreSQL server's admin URL (the bench creates and drops its own database)")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379", help="a Redis server (no database number)")
    parser.add_argument("--redis-dbs", default="12,13", help="Redis databases for the broker and the cache")
    parser.add_argument("--skip", choices=["ocr", "judges"], help="leave one half out")
    parser.add_argument("--json", type=Path, help="also write the JSON figures to this file")
    smoke_argument(parser)
    args = parser.parse_args()
    if args.smoke:
        args.machines, args.pages, args.size = "1,2", 2, "small"
        args.answers, args.judges, args.latency, args.concurrency = 24, 2, 0.05, 8
    levels = levels_of(args.machines)
    broker_db, cache_db = (int(x) for x in args.redis_dbs.split(","))

    missing = services_missing(args.postgres, args.redis)
    if missing:
        message = (f"scale_bench needs PostgreSQL ({args.postgres}) and Redis ({args.redis}), which several "
                   f"machines share (docs/deploy.md), and boto3 + moto: {missing}")
        if args.smoke:
            print(f"skipped: {message}")
            return
        raise SystemExit(message)

    _procs.install()
    run = uuid.uuid4().hex[:8]
    name = DATABASE + ("_smoke" if args.smoke else "")
    scratch = Path(tempfile.mkdtemp(prefix="realmath-scale-bench-"))
    machines, server, s3 = [], None, None
    load_start, info = load(), host()
    print(f"scale bench {run}: {info['cores']} cores, {info['memory_gb']} GB, load average {load_start[0]} "
          f"(1 min) {load_start[1]} (5 min); machines {levels}", flush=True)
    recreate_database(args.postgres, name)
    try:
        s3, s3_url = start_s3()
        from judge_bench import start_server

        server, server_url = start_server(args.latency)
        shared = {
            "DJANGO_SETTINGS_MODULE": "config.settings", "DJANGO_SECRET_KEY": f"scale-bench-{run}",
            "DATABASE_URL": database_url(args.postgres, name),
            "CELERY_BROKER_URL": f"{args.redis}/{broker_db}", "REDIS_URL": f"{args.redis}/{cache_db}",
            "REALMATH_STORAGE": "s3", "AWS_STORAGE_BUCKET_NAME": BUCKET, "AWS_S3_ENDPOINT_URL": s3_url,
            "AWS_S3_REGION_NAME": "us-east-1", **KEYS,
            "REALMATH_JUDGE_QUEUE": f"scale-judges-{run}", "REALMATH_RATELIMIT_PREFIX": f"scale:{run}:",
            "REALMATH_DEFAULT_QUEUE": f"scale-default-{run}", "REALMATH_LLM_KEY_BENCH": "bench",
            "OCR_DEFAULT_ENGINE": "tesseract", "OMP_THREAD_LIMIT": "1", "PYTHONUNBUFFERED": "1",
        }
        # The machines start on a holding queue (their OCR_QUEUE, so that they warm tesseract up)
        # and are given each level's page queue by a broadcast.
        hold = f"scale-hold-{run}"
        for variable in FOLDER_VARIABLES:  # a folder named in this environment would be shared
            os.environ.pop(variable, None)
        worker_env = {**os.environ, **shared, "OCR_QUEUE": hold}
        worker_env.pop("CELERY_TASK_ALWAYS_EAGER", None)
        os.environ.update(shared)
        os.environ["REALMATH_VAR_DIR"] = str(scratch / "web" / "var")
        os.environ["CELERY_TASK_ALWAYS_EAGER"] = "false"
        started = time.monotonic()
        setup_django()
        print(f"  database {name} migrated in {time.monotonic() - started:.0f} s", flush=True)

        from django.conf import settings
        from django.core.management import call_command

        from annotation.models import Exam, Question, Response, content_hash
        from grading.models import LlmEndpoint
        from ocr import synthetic
        from ocr.imaging import encode_png

        make_page = synthetic.full_page if args.size == "a4" else synthetic.spoiled_page
        seeds = list(range(PAGE_SEEDS, PAGE_SEEDS + args.pages))
        pages = []
        for seed in seeds:
            image, truth = make_page(seed)
            pages.append((image, truth, encode_png(image)))
        exam = Exam.objects.create(name=f"Scale bench {run}")
        Question.objects.create(exam=exam, statement="Scale bench question",
                                statement_hash=content_hash("Scale bench question"), location="B-1")
        call_command("import_realmath", str(ROOT / "fixtures" / "demo" / "realmath_eval.json"), verbosity=0)
        sources = list(Response.objects.order_by("id"))
        Response.objects.bulk_create(
            Response(question=sources[i % len(sources)].question, student_id=f"scale-{i}",
                     transcript=f"{sources[i % len(sources)].transcript}\n(copy {i})",
                     transcript_hash=content_hash(f"{sources[i % len(sources)].transcript}\n(copy {i})"))
            for i in range(args.answers))
        endpoint = LlmEndpoint.objects.create(name="scale bench", base_url=server_url, api_key_env="REALMATH_LLM_KEY_BENCH",
                                              max_concurrency=args.concurrency, timeout_seconds=60, max_attempts=3)

        ocr_rows, judge_rows = [], []
        for level in levels:
            while len(machines) < level:
                machine = Machine(len(machines) + 1, scratch, run, worker_env, [hold, settings.JUDGE_TASK_QUEUE])
                machine.start()
                machines.append(machine)
            for machine in machines:
                machine.wait_ready()
            groups = {m.name: m.process.pid for m in machines} | {"web": 0, "s3": s3.pid, "llm_server": server.pid}
            print(f"  {level} machine(s) ready; load average {load()[0]}", flush=True)
            if args.skip != "ocr":
                ocr_rows.append(measure_ocr(machines, pages, exam, f"scale-ocr-{run}-n{level}", groups))
                ocr_rows[-1]["load"] = load()
                print(f"  OCR, {level} machine(s): {ocr_rows[-1]['pages_per_min']} pages/min", flush=True)
            if args.skip != "judges":
                judge_rows.append(measure_judges(machines, level, args, endpoint, server_url, groups))
                judge_rows[-1]["load"] = load()
                print(f"  judges, {level} machine(s): {judge_rows[-1]['calls_per_s']} calls/s", flush=True)
        files_left = {m.name: m.files_left() for m in machines}
    finally:
        for machine in machines:
            machine.stop()
        for process in (server, s3):
            if process is not None:
                _procs.stop(process)
        try:
            from django.db import connections

            connections.close_all()
        except Exception:  # noqa: BLE001 - Django may not be set up yet
            pass
        recreate_database(args.postgres, name, drop_only=True)
        forget_redis_keys(args.redis, (broker_db, cache_db), run)
        shutil.rmtree(scratch, ignore_errors=True)

    for rows, key in ((ocr_rows, "pages_per_min"), (judge_rows, "calls_per_s")):
        for row in rows:
            row["ratio"] = round(row[key] / rows[0][key], 2)
    report = {
        "bench": "scale_bench", "run": run, "host": info, "load_start": load_start, "load_end": load(),
        "smoke": args.smoke,
        "services": {"database": "PostgreSQL", "broker": "Redis", "cache": "Redis", "storage": "S3 (moto server)",
                     "machine": "celery worker --concurrency 1 --pool prefork, own REALMATH_VAR_DIR and node name"},
        "seeds": {"pages": seeds, "answers": "fixtures/demo/realmath_eval.json in turn"},
        "ocr": {"engine": "tesseract", "pages": args.pages, "size": args.size,
                "page_px": list(pages[0][0].size), "levels": ocr_rows},
        "judges": {"answers": args.answers, "runs": args.judges, "latency_s": args.latency,
                   "endpoint_concurrency": args.concurrency,
                   "ideal_calls_per_s": round(args.concurrency / args.latency, 1), "levels": judge_rows},
        "files_left_in_machine_folders": files_left,
    }
    if ocr_rows:
        print_table(f"OCR: {args.pages} pages ({pages[0][0].width}x{pages[0][0].height} px), tesseract, "
                    f"one worker process per machine",
                    ["machines", "seconds", "pages/min", "x N=1", "pages/worker CPU-min", "pages per machine", "host busy",
                     "CPU s per process group"],
                    [[r["machines"], r["seconds"], r["pages_per_min"], r["ratio"], r["pages_per_worker_cpu_minute"],
                      " ".join(str(v) for v in r["pages_per_machine"].values()), f"{100 * r['host_busy']:.0f} %",
                      " ".join(f"{k} {v}" for k, v in r["cpu_seconds"].items())] for r in ocr_rows])
    if judge_rows:
        print_table(f"Judges: {args.judges} runs x {args.answers} answers, latency {args.latency} s, endpoint "
                    f"concurrency {args.concurrency} (ideal {args.concurrency / args.latency:.0f} calls/s)",
                    ["machines", "seconds", "calls/s", "x N=1", "calls/worker CPU-s", "max in flight", "chunks per machine",
                     "host busy", "CPU s per process group"],
                    [[r["machines"], r["seconds"], r["calls_per_s"], r["ratio"], r["calls_per_worker_cpu_second"],
                      r["max_in_flight"],
                      " ".join(str(v) for v in r["chunks_per_machine"].values()), f"{100 * r['host_busy']:.0f} %",
                      " ".join(f"{k} {v}" for k, v in r["cpu_seconds"].items())] for r in judge_rows])
    print(f"\nload average at the start {load_start}, at the end {report['load_end']} on {info['cores']} cores")
    print(json.dumps(report))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    if any(files_left.values()):
        raise SystemExit(f"files left in the machines' own folders: {files_left}")


if __name__ == "__main__":
    main()
