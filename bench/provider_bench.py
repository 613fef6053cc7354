"""
Judge calls against a provider's rate limits: ours with blank endpoint limits (learned from the
headers) through the Celery worker, a plain asyncio + AsyncOpenAI script, and the bound.

    .venv/bin/python bench/provider_bench.py [--calls 2000] [--rpm 600] [--tpm 200000]
        [--latency 0.2 --latency-max 0.8] [--prompt-tokens 1500] [--output-tokens 300]
        [--minute 60] [--workers 2] [--batch]

The loopback server (tests/llm_server.py with tests/llm_limits.py, run as its own process)
enforces `rpm` requests and `tpm` tokens per minute per API key, as a provider does: a bucket per
key holding a minute's budget, refilled continuously; a request costs its prompt estimate plus
its max_tokens; beyond that it answers 429 at once with Retry-After, retry-after-ms and the
x-ratelimit-* headers, which it also sends on every answer; an admitted call takes a time drawn
uniformly from [latency, latency-max]. Every call is a rubric judge prompt of about
`prompt-tokens` tokens (a demo answer padded) answered with `output-tokens` tokens of usage.

- ours: judge settings and a run in a scratch SQLite database, chunk tasks through the Celery
  broker to a real `celery worker`, the endpoint's requests and tokens per minute left blank
  (max concurrency at its default, 8), as users run it;
- plain: one event loop, one AsyncOpenAI client with its default retries (2, honouring
  Retry-After), a semaphore of 32;
- the bound: the time the limits allow, max(calls / RPM, tokens / TPM), with the tokens the
  server charged.

The full size (2,000 calls of ~1,800 tokens at 200,000 TPM) takes at least 18 minutes, the token
bound. A miniature keeping its shape: everything scaled by the same factor, the "minute" too,
e.g. ``--calls 300 --rpm 90 --tpm 30000 --minute 5`` (18 windows of 5 s; the client's window
follows through REALMATH_RATELIMIT_WINDOW_SECONDS). The last line reads
``ours/bound = R, failed = F, 429 share = S``.

``--batch`` runs bench/provider_bench_batch.py's ``run(calls, ...)`` after the live comparison,
when that file exists (the Batch API's half of the benchmark).
"""
import argparse
import asyncio
import dataclasses
import importlib.util
import inspect
import json
import os
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import _procs  # noqa: E402
from _setup import copy_template_database, smoke_argument  # noqa: E402
from judge_bench import (  # noqa: E402  (bench/ is on the path as the script's folder)
    celery_worker,
    scratch_environment,
    server_stats,
    start_server,
)

PAD = "Next we check this step against the previous line and carry the computation forward. "


def serve(args):
    """The loopback provider, in this process (started by `start_server` as a child)."""
    from tests import llm_limits
    from tests.llm_server import LlmServer, demo_reply, serve_forever

    def reply(payload):
        return dataclasses.replace(demo_reply(payload), completion_tokens=args.output_tokens)

    server = LlmServer(port=0, default=reply, latency=llm_limits.uniform_latency(args.latency, args.latency_max))
    server.limits = llm_limits.KeyLimits(requests_per_minute=args.rpm, tokens_per_minute=args.tpm,
                                         window=float(args.minute))
    serve_forever(server)


def start_provider(args):
    return start_server(args.latency, [
        sys.executable, str(Path(__file__).resolve()), "--serve", "--rpm", str(args.rpm), "--tpm", str(args.tpm),
        "--latency", str(args.latency), "--latency-max", str(args.latency_max), "--minute", str(args.minute),
        "--output-tokens", str(args.output_tokens)])


def answers(calls, prompt_tokens):
    """`calls` (problem, reference, full score, transcript) with prompts of about `prompt_tokens`
    tokens as the server counts them (characters / 4), the demo answers padded."""
    from grading.judges import prompts

    records = json.loads((ROOT / "fixtures" / "demo" / "realmath_eval.json").read_text())
    made = []
    for index in range(calls):
        record = records[index % len(records)]
        transcript = f"{record['student_response']}\n(copy {index})"
        shell = len(prompts.RUBRIC_SYSTEM) + 1 + len(prompts.render(prompts.RUBRIC_TEMPLATE, {
            "problem": record["problem_statement"], "reference": record["reference_answer"], "response": "",
            "full_score": record["full_score"]}))
        missing = prompt_tokens * 4 - shell - len(transcript)
        if missing > 0:
            transcript += "\n" + (PAD * (missing // len(PAD) + 1))[:missing]
        made.append((record, transcript))
    return made


def messages_for(record, transcript):
    from grading.judges import prompts

    text = prompts.render(prompts.RUBRIC_TEMPLATE, {
        "problem": record["problem_statement"], "reference": record["reference_answer"], "response": transcript,
        "full_score": record["full_score"]})
    return [{"role": "system", "content": prompts.RUBRIC_SYSTEM}, {"role": "user", "content": text}]


def plain(url, made, output_tokens, concurrency=32):
    """asyncio, one AsyncOpenAI client with its default retries, a semaphore: (seconds, failed calls)."""
    from openai import AsyncOpenAI

    async def main():
        client = AsyncOpenAI(base_url=url, api_key="bench-plain", timeout=60)
        gate = asyncio.Semaphore(concurrency)

        async def one(record, transcript):
            async with gate:
                try:
                    reply = await client.chat.completions.create(model="judge-0", messages=messages_for(record, transcript),
                                                                 temperature=0.7, max_tokens=output_tokens)
                    return reply.choices[0].message.content is not None
                except Exception:  # noqa: BLE001 - a failed call, counted
                    return False

        started = time.perf_counter()
        done = await asyncio.gather(*(one(r, t) for r, t in made))
        elapsed = time.perf_counter() - started
        await client.close()
        return elapsed, sum(1 for ok in done if not ok)

    return asyncio.run(main())


def ours(url, made, output_tokens, workers, scratch):
    """One judge run through Celery with the endpoint's limits blank: (seconds, item states)."""
    import django

    migrated = copy_template_database(scratch / "bench.sqlite3")

    django.setup()
    from django.core.management import call_command
    from django.db.models import Count

    from annotation.models import Question, Response, content_hash
    from grading.judges import services
    from grading.models import JudgeRun, JudgeRunItem, LlmEndpoint

    if not migrated:  # a copy of the smoke run's migrated database needs none
        call_command("migrate", verbosity=0)
    call_command("import_realmath", str(ROOT / "fixtures" / "demo" / "realmath_eval.json"), verbosity=0)
    by_problem = {q.statement.strip(): q for q in Question.objects.all()}
    Response.objects.bulk_create(
        Response(question=by_problem[record["problem_statement"].strip()], student_id=f"bench-{i}", transcript=transcript,
                 transcript_hash=content_hash(transcript))
        for i, (record, transcript) in enumerate(made)
    )
    # Blank limits, as users leave them: no requests or tokens per minute; concurrency and
    # attempts at the model's defaults.
    endpoint = LlmEndpoint.objects.create(name="bench", base_url=url, api_key_env="REALMATH_LLM_KEY_BENCH",
                                          timeout_seconds=60)
    setting = services.create_judge_setting(name="bench-judge", kind="rubric", endpoint=endpoint, model="judge-0",
                                            temperature=0.7, max_tokens=output_tokens)
    with celery_worker(workers, scratch):
        ids = list(Response.objects.filter(student_id__startswith="bench-").values_list("pk", flat=True))
        started = time.time()
        run = services.start_judge_run(setting, response_ids=ids)
        while JudgeRun.objects.filter(pk=run.pk, status=JudgeRun.Status.RUNNING).exists():
            time.sleep(0.2)
        run.refresh_from_db()
        elapsed = run.finished.timestamp() - started
        states = dict(JudgeRunItem.objects.filter(run=run).values_list("state").annotate(n=Count("id")))
        return elapsed, states


def batch_hook(args):
    """bench/provider_bench_batch.py's `run(calls, ...)`, when that file exists: the Batch API's
    half of the benchmark (it prints its own lines)."""
    path = Path(__file__).with_name("provider_bench_batch.py")
    if not path.exists():
        print("batch: bench/provider_bench_batch.py is not there yet; nothing run")
        return
    spec = importlib.util.spec_from_file_location("provider_bench_batch", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    offered = {"prompt_tokens": args.prompt_tokens, "output_tokens": args.output_tokens, "rpm": args.rpm,
               "tpm": args.tpm, "latency": args.latency, "latency_max": args.latency_max, "minute": args.minute}
    accepted = inspect.signature(module.run).parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values())
    module.run(args.calls, **{k: v for k, v in offered.items() if takes_any or k in accepted})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rpm", type=int, default=600, help="requests per minute per key the server allows")
    parser.add_argument("--tpm", type=int, default=200_000, help="tokens per minute per key the server allows")
    parser.add_argument("--latency", type=float, default=0.2, help="shortest answer, seconds")
    parser.add_argument("--latency-max", type=float, default=0.8, help="longest answer, seconds")
    parser.add_argument("--prompt-tokens", type=int, default=1500)
    parser.add_argument("--output-tokens", type=int, default=300)
    parser.add_argument("--minute", type=int, default=60, help="seconds in a rate-limit minute (shorter: a miniature)")
    parser.add_argument("--workers", type=int, default=2, help="Celery worker processes (make run uses 2)")
    parser.add_argument("--batch", action="store_true", help="then run bench/provider_bench_batch.py if it exists")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    smoke_argument(parser)
    args = parser.parse_args()
    if args.smoke:  # a miniature: 40 calls, 2-s "minutes"
        args.calls, args.rpm, args.tpm, args.minute, args.workers = 40, 600, 400_000, 2, 1
        args.latency, args.latency_max = 0.02, 0.05
    if args.serve:
        serve(args)
        return
    _procs.install()

    scratch = scratch_environment("provider-bench", api_key="bench-ours",
                                  REALMATH_RATELIMIT_WINDOW_SECONDS=str(args.minute))
    made = answers(args.calls, args.prompt_tokens)
    server, url = start_provider(args)
    try:
        base_time, base_failed = plain(url, made, args.output_tokens)
        base_stats = server_stats(url)
        server_stats(url, reset=True)
        my_time, states = ours(url, made, args.output_tokens, args.workers, scratch)
        my_stats = server_stats(url)
    finally:
        _procs.stop(server)
        shutil.rmtree(scratch, ignore_errors=True)

    my_tokens = my_stats["limits"]["charged_tokens"] - base_stats["limits"]["charged_tokens"]
    per_call = my_tokens / max(1, my_stats["limits"]["admitted"] - base_stats["limits"]["admitted"])
    bound = max(args.calls / args.rpm, args.calls * per_call / args.tpm) * args.minute
    failed = args.calls - states.get("ok", 0)
    share = my_stats["rate_limited"] / max(1, my_stats["requests"])
    base_share = base_stats["rate_limited"] / max(1, base_stats["requests"])
    print(f"{args.calls} judge calls of ~{per_call:,.0f} tokens ({args.prompt_tokens} prompt + {args.output_tokens} output), "
          f"limits {args.rpm} requests and {args.tpm:,} tokens per {args.minute}-s minute per key, "
          f"answers in {args.latency * 1000:.0f}-{args.latency_max * 1000:.0f} ms")
    print(f"{'':40}{'wall s':>8}{'x bound':>9}{'failed':>8}{'requests':>10}{'429s':>7}{'429 share':>11}")
    print(f"{'bound max(calls/RPM, tokens/TPM)':40}{bound:8.1f}{1:9.2f}")
    print(f"{'plain asyncio + AsyncOpenAI (sem 32)':40}{base_time:8.1f}{base_time / bound:9.2f}{base_failed:8d}"
          f"{base_stats['requests']:10d}{base_stats['rate_limited']:7d}{base_share:11.3f}")
    print(f"{'RealMath judge run, blank limits':40}{my_time:8.1f}{my_time / bound:9.2f}{failed:8d}"
          f"{my_stats['requests']:10d}{my_stats['rate_limited']:7d}{share:11.3f}")
    print(f"  ours: items {states}, {args.workers} worker processes, broker "
          f"{os.environ.get('CELERY_BROKER_URL', 'filesystem://').split('@')[-1]}, "
          f"store {'redis' if os.environ.get('REDIS_URL') else 'file'}")
    print(f"  machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    if args.batch:
        batch_hook(args)
    print(f"ours/bound = {my_time / bound:.2f}, failed = {failed}, 429 share = {share:.3f}")


if __name__ == "__main__":
    main()
