"""
Judge-run throughput: our Celery path against a plain asyncio + AsyncOpenAI script.

    .venv/bin/python bench/judge_bench.py [--answers 224] [--judges 4] [--latency 0.2]
                                          [--concurrency 32] [--workers 2]

Both send the same N = answers x judges chat completions to the scriptable loopback server
(tests/llm_server.py, run as its own process) answering after `latency` seconds, with at
most `concurrency` calls in flight. Ours is the machinery real runs use: judge settings and
runs in a scratch SQLite database, chunk tasks through the configured Celery broker
(CELERY_BROKER_URL, filesystem:// by default) to a real `celery worker`, the shared rate
limiter, result rows with claims and cache keys. The baseline is the fastest simple script:
one event loop, one AsyncOpenAI client, a semaphore. The ideal is N*L/C.
"""
import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import _procs  # noqa: E402
from _setup import copy_template_database, smoke_argument  # noqa: E402


def start_server(latency, command=None):
    """The loopback server as its own process (`command`: another way to start it that prints
    its URL first); returns the process and the URL."""
    command = command or [sys.executable, str(ROOT / "tests" / "llm_server.py"), "--port", "0", "--latency", str(latency)]
    proc = _procs.spawn(command, stdout=subprocess.PIPE, text=True)  # stopped with the bench however it ends
    line = proc.stdout.readline()
    match = re.search(r"(http://\S+/v1)", line)
    if not match:
        _procs.stop(proc)
        raise SystemExit(f"the LLM server did not start: {line!r}")
    return proc, match.group(1)


def server_stats(url, reset=False):
    if reset:
        request = urllib.request.Request(f"{url}/stats/reset", data=b"{}", method="POST")
        urllib.request.urlopen(request).read()
        return None
    return json.loads(urllib.request.urlopen(f"{url}/stats").read())


class Sampler:
    """Polls the server's counters while a side runs: when the first call arrived, and how many
    calls were in flight on average (the ideal keeps `concurrency` in flight throughout)."""

    def __init__(self, url, every=0.02):
        import threading

        self.url, self.every, self.samples = url, every, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self.started = time.perf_counter()
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def _run(self):
        while not self._stop.wait(self.every):
            stats = server_stats(self.url)
            self.samples.append((time.perf_counter() - self.started, stats["requests"], stats["in_flight"]))

    def summary(self):
        busy = [(t, n, f) for t, n, f in self.samples if f or n]
        if not busy:
            return "no calls seen"
        first = busy[0][0]
        mean = sum(f for _, _, f in busy) / len(busy)
        return f"first call after {first:.2f} s, {mean:.1f} in flight on average after it"


def prompts_for(n_answers, n_judges):
    """Prompts of realistic size: a rubric judge prompt around each sample answer."""
    from grading.judges import prompts

    answers = json.loads((ROOT / "fixtures" / "demo" / "realmath_eval.json").read_text())
    messages = []
    for judge in range(n_judges):
        for index in range(n_answers):
            record = answers[index % len(answers)]
            text = prompts.render(prompts.RUBRIC_TEMPLATE, {
                "problem": record["problem_statement"], "reference": record["reference_answer"],
                "response": f"{record['student_response']}\n(copy {index})", "full_score": record["full_score"],
            })
            messages.append((f"judge-{judge}", [{"role": "system", "content": prompts.RUBRIC_SYSTEM},
                                                {"role": "user", "content": text}]))
    return messages


def baseline(url, calls, concurrency):
    """The plain script: asyncio, one AsyncOpenAI client, a semaphore."""
    from openai import AsyncOpenAI

    async def main():
        client = AsyncOpenAI(base_url=url, api_key="bench", max_retries=0, timeout=60)
        gate = asyncio.Semaphore(concurrency)

        async def one(model, messages):
            async with gate:
                reply = await client.chat.completions.create(model=model, messages=messages, temperature=0.7, max_tokens=512)
                return reply.choices[0].message.content

        started = time.perf_counter()
        answers = await asyncio.gather(*(one(m, msgs) for m, msgs in calls))
        elapsed = time.perf_counter() - started
        await client.close()
        assert len(answers) == len(calls)
        return elapsed

    return asyncio.run(main())


def ours(url, n_answers, n_judges, concurrency, workers, scratch):
    """Judge settings and runs through Celery, as `run_judges` or the run page start them."""
    import django

    migrated = copy_template_database(scratch / "bench.sqlite3")

    django.setup()
    from django.core.management import call_command
    from django.db.models import Count, Max

    from annotation.models import Response, content_hash
    from grading.judges import services
    from grading.models import JudgeRun, JudgeRunItem, LlmEndpoint

    if not migrated:  # a copy of the smoke run's migrated database needs none
        call_command("migrate", verbosity=0)
    call_command("import_realmath", str(ROOT / "fixtures" / "demo" / "realmath_eval.json"), verbosity=0)
    sources = list(Response.objects.order_by("id"))
    Response.objects.bulk_create(
        Response(
            question=sources[i % len(sources)].question, student_id=f"bench-{i}",
            transcript=f"{sources[i % len(sources)].transcript}\n(copy {i})",
            transcript_hash=content_hash(f"{sources[i % len(sources)].transcript}\n(copy {i})"),
        )
        for i in range(n_answers)
    )
    endpoint = LlmEndpoint.objects.create(
        name="bench", base_url=url, api_key_env="REALMATH_LLM_KEY_BENCH", max_concurrency=concurrency,
        timeout_seconds=60, max_attempts=3,
    )
    judge_settings = [
        services.create_judge_setting(name=f"bench-judge-{j}", kind="rubric", endpoint=endpoint, model=f"judge-{j}",
                                     temperature=0.7, max_tokens=512)
        for j in range(n_judges)
    ]
    with celery_worker(workers, scratch):
        server_stats(url, reset=True)
        ids = list(Response.objects.filter(student_id__startswith="bench-").values_list("pk", flat=True))
        started = time.time()  # wall clock: compared with the runs' `finished` stamps below
        with Sampler(url) as sampler:
            runs = [services.start_judge_run(setting, response_ids=ids) for setting in judge_settings]
            while JudgeRun.objects.filter(pk__in=[r.pk for r in runs], status=JudgeRun.Status.RUNNING).exists():
                time.sleep(0.05)
        # The end is when the last run was marked done, not when this loop next looked (up to 50 ms later).
        finished = JudgeRun.objects.filter(pk__in=[r.pk for r in runs]).aggregate(last=Max("finished"))["last"]
        elapsed = finished.timestamp() - started
        states = dict(JudgeRunItem.objects.filter(run__in=runs).values_list("state").annotate(n=Count("id")))
        return elapsed, states, runs[0].chunk_size, sampler.summary()


@contextmanager
def celery_worker(workers, scratch):
    """A real `celery worker` with `workers` processes on the bench's queue (REALMATH_JUDGE_QUEUE),
    ready and with this process's broker connection open; stopped (its process group) after."""
    from celery import current_app

    worker = _procs.spawn(  # its own process group, stopped with the bench however it ends
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", os.environ["REALMATH_JUDGE_QUEUE"],
         "--concurrency", str(workers), "--without-gossip", "--without-mingle", "--without-heartbeat",
         "--loglevel", "INFO", "-n", f"bench-{uuid.uuid4().hex[:6]}@%h"],
        cwd=ROOT, env=os.environ.copy(), stdout=subprocess.DEVNULL, stderr=open(scratch / "worker.log", "w"),
    )
    try:
        wait_ready(worker, scratch / "worker.log")
        # Ours starts its clock with its clients ready, as the plain script starts it with its
        # AsyncOpenAI client built: the database connection is open and so is the broker's, as
        # in a web server that has sent a task before.
        with current_app.producer_pool.acquire(block=True) as producer:
            producer.connection.ensure_connection(max_retries=3)
        yield worker
    finally:
        _procs.stop(worker, grace=20)


def wait_ready(worker, log, timeout=180):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if worker.poll() is not None:
            raise SystemExit(f"the worker exited:\n{log.read_text()[-3000:]}")
        if re.search(r"\bready\.", log.read_text()):
            return
        time.sleep(0.2)
    raise SystemExit("the worker did not start in time")


def scratch_environment(name, api_key, **extra):
    """A scratch folder and this process's environment pointed at it (SQLite database, var, rate
    limits), a fresh queue and rate-limit prefix, the key REALMATH_LLM_KEY_BENCH; returns the folder."""
    scratch = Path(tempfile.mkdtemp(prefix=f"{name}-"))
    os.environ.update({
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "REALMATH_VAR_DIR": str(scratch / "var"),
        "DATABASE_URL": f"sqlite:///{scratch / 'bench.sqlite3'}",
        "REALMATH_JUDGE_QUEUE": f"{name}-{uuid.uuid4().hex[:8]}",
        "REALMATH_RATELIMIT_DIR": str(scratch / "ratelimit"),
        "REALMATH_RATELIMIT_PREFIX": f"{name}:{uuid.uuid4().hex[:8]}:",
        "REALMATH_LLM_KEY_BENCH": api_key,
        "OMP_THREAD_LIMIT": "1",
        **extra,
    })
    os.environ.pop("CELERY_TASK_ALWAYS_EAGER", None)
    return scratch


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", type=int, default=224)
    parser.add_argument("--judges", type=int, default=4)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--workers", type=int, default=2, help="Celery worker processes (make run uses 2)")
    smoke_argument(parser)
    args = parser.parse_args()
    if args.smoke:
        args.answers, args.judges, args.latency, args.workers = 16, 2, 0.05, 1

    _procs.install()
    scratch = scratch_environment("judge-bench", api_key="bench")
    n = args.answers * args.judges
    ideal = n * args.latency / args.concurrency
    server, url = start_server(args.latency)
    try:
        calls = prompts_for(args.answers, args.judges)
        server_stats(url, reset=True)
        with Sampler(url) as base_sampler:
            base = baseline(url, calls, args.concurrency)
        base_stats = server_stats(url)
        mine, states, chunk, profile = ours(url, args.answers, args.judges, args.concurrency, args.workers, scratch)
        my_stats = server_stats(url)
    finally:
        _procs.stop(server)
        shutil.rmtree(scratch, ignore_errors=True)

    broker = os.environ.get("CELERY_BROKER_URL", "filesystem://").split("@")[-1]
    print(f"{n} calls ({args.answers} answers x {args.judges} judges), server latency {args.latency * 1000:.0f} ms, concurrency {args.concurrency}")
    print(f"{'':36}{'wall s':>8}{'x ideal':>9}{'calls':>7}{'max in flight':>15}")
    print(f"{'ideal N*L/C':36}{ideal:8.2f}{1:9.2f}")
    print(f"{'plain asyncio + AsyncOpenAI':36}{base:8.2f}{base / ideal:9.2f}{base_stats['requests']:7d}{base_stats['max_in_flight']:15d}")
    print(f"{'RealMath judge runs (Celery)':36}{mine:8.2f}{mine / ideal:9.2f}{my_stats['requests']:7d}{my_stats['max_in_flight']:15d}")
    print(f"  ours: {args.judges} runs, chunks of {chunk}, broker {broker}, {args.workers} worker processes, "
          f"items {states}")
    print(f"  plain: {base_sampler.summary()}; ours: {profile}")
    print(f"  ours / plain: {mine / base:.2f}")
    print(f"  machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} (the server, the clients and "
          f"the worker share them)")


if __name__ == "__main__":
    main()
