"""
The batch path of the provider benchmark: judge calls through a loopback Batch API.

    .venv/bin/python bench/provider_bench_batch.py [--calls 2000] [--delay 20] [--max-lines 50000]

N judge calls of about 1,500 prompt and 300 output tokens each (answers long enough for that)
go through the machinery real batch runs use: a judge setting and a batch-mode run in a scratch
SQLite database, the run's requests written as JSONL lines, uploaded to the loopback server's
``/v1/files`` (tests/llm_batches.py on tests/llm_server.py, in this process) in files of at most
`max_lines` lines, a batch per file that completes `delay` seconds after it is created, polled
with back-off, the output files read into the same JudgeResult rows live calls write. The poll
runs in this process (`services.run_batch_inline`: the body of the poll task, without a
worker: the time of a batch run is the provider's, not ours).

It checks that every call's result is attached and none twice (JudgeResult rows per response,
custom_ids the server saw per batch), and prints its figures; the last line reads
``batch: attached = A/N, duplicated = D, wall = W s, overhead = O s`` (overhead: the wall time
beyond the provider's own delay). `run(calls, ...)` returns the figures as a dict for
bench/provider_bench.py --batch.
"""
import argparse
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PROMPT_TOKENS = 1500
OUTPUT_TOKENS = 300


def _ensure_django():
    from django.conf import settings

    if not settings.configured:
        from bench._setup import setup_django

        setup_django()
    else:
        import django

        django.setup()


def _reply_text(number, output_tokens=OUTPUT_TOKENS):
    """About `output_tokens` tokens (4 characters each), ending in the score the judge parses."""
    reasoning = ("The student states the key identity and checks the boundary case; the argument "
                 "for the second part is complete but terse. ") * (output_tokens // 25 + 1)
    return f"{reasoning[: output_tokens * 4 - 60]}\n\nOverall Score: {number % 11}\n\nBrief Explanation: fine."


def run(calls=2000, *, prompt_tokens=PROMPT_TOKENS, output_tokens=OUTPUT_TOKENS, delay=20.0, max_lines=50_000,
        poll_seconds=1.0, price_in=0.0025, price_out=0.01, quiet=False):
    """Judge `calls` answers of about `prompt_tokens` / `output_tokens` through the loopback
    Batch API; return the figures (a dict). The per-minute limits of the live bench do not apply:
    a batch has none."""
    _ensure_django()
    import re
    import uuid
    from decimal import Decimal

    from django.conf import settings
    from django.test.utils import override_settings

    from annotation.models import Exam, Question, Response
    from annotation.models.dataset import content_hash
    from grading.judges import services
    from grading.models import JudgeBatchPart, JudgeResult, JudgeRunItem, LlmEndpoint
    from tests.llm_batches import BatchApi
    from tests.llm_server import LlmServer, Reply, message_text

    def reply(payload):
        match = re.search(r"Answer (\d+):", message_text(payload))
        return Reply(_reply_text(int(match.group(1)) if match else 0, output_tokens))

    filler = "We expand both sides, collect the terms in x and compare coefficients step by step. "
    with LlmServer(default=reply) as server, override_settings(
            LLM_BATCH_POLL_SECONDS=poll_seconds, LLM_BATCH_POLL_MAX_SECONDS=max(poll_seconds, delay / 4),
            LLM_BATCH_MAX_LINES=max_lines, LLM_ALLOWED_HOSTS=[]):
        batches = BatchApi(server, delay=delay).install()
        tag = uuid.uuid4().hex[:8]
        exam = Exam.objects.create(name=f"batch bench {tag}")
        question = Question.objects.create(
            exam=exam, statement="Prove the inequality for all real x.", statement_hash=content_hash(tag),
            reference_solution="(1) the identity ------5 points\n(2) the bound ------10 points", full_score=Decimal(10),
            location="B-01")
        # A prompt of ~PROMPT_TOKENS tokens: the template and reference (~325 tokens) and the answer.
        body = (filler * (prompt_tokens // 20 + 1))[: max(0, prompt_tokens - 325) * 4]
        Response.objects.bulk_create([
            Response(question=question, source="human", student_id=f"bench-{tag}-{n:06d}",
                     transcript=f"Answer {n}: {body}", transcript_hash=content_hash(f"{tag}-{n}"))
            for n in range(calls)
        ], batch_size=500)
        endpoint = LlmEndpoint.objects.create(name=f"batch-bench-{tag}", base_url=server.url, api_key_env="",
                                              max_concurrency=32, timeout_seconds=30)
        setting = services.create_judge_setting(
            name=f"batch-bench-{tag}", kind="rubric", endpoint=endpoint, model="bench-model", temperature=0.0,
            max_tokens=output_tokens * 2, price_input_per_1k=Decimal(str(price_in)),
            price_output_per_1k=Decimal(str(price_out)))
        started = time.perf_counter()
        run_ = services.start_judge_run(setting, params={"question": str(question.pk)}, mode="batch", enqueue=False)
        written = time.perf_counter()
        run_ = services.run_batch_inline(run_, timeout=delay * 10 + 600)
        wall = time.perf_counter() - started

        results = JudgeResult.objects.filter(setting=setting)
        per_response = Counter(results.values_list("response_id", flat=True))
        seen = Counter(batches.seen)
        items_ok = JudgeRunItem.objects.filter(run=run_, state="ok").count()
        tokens_in = sum(results.values_list("prompt_tokens", flat=True))
        tokens_out = sum(results.values_list("completion_tokens", flat=True))
        cost = sum(results.values_list("cost", flat=True))
        full = (Decimal(tokens_in) * Decimal(str(price_in)) + Decimal(tokens_out) * Decimal(str(price_out))) / 1000
        figures = {
            "calls": calls,
            "status": run_.status,
            "attached": items_ok,
            "results": results.count(),
            "duplicated": sum(n - 1 for n in per_response.values()) + sum(n - 1 for n in seen.values()),
            "parts": JudgeBatchPart.objects.filter(run=run_).count(),
            "uploads": batches.count("POST", "/files"),
            "batches_created": batches.count("POST", "/batches"),
            "polls": batches.count("GET", "/batches") + sum(
                1 for m, p in batches.calls if m == "GET" and p.startswith("/batches/")),
            "live_calls": server.count(),
            "wall_s": round(wall, 2),
            "start_s": round(written - started, 2),
            "delay_s": delay,
            "overhead_s": round(wall - delay, 2),
            "prompt_tokens_per_call": round(tokens_in / max(1, results.count())),
            "completion_tokens_per_call": round(tokens_out / max(1, results.count())),
            "cost_batch": float(cost),
            "cost_live": float(full),
            "price_factor": float(settings.LLM_BATCH_PRICE_FACTOR),
        }
    if not quiet:
        print(f"batch path: {calls} calls through the loopback /v1/batches (each batch completes {delay:g} s after it "
              f"is created; files of at most {max_lines} lines)")
        for key, value in figures.items():
            print(f"  {key:28} {value}")
        print(f"batch: attached = {figures['attached']}/{calls}, duplicated = {figures['duplicated']}, "
              f"wall = {figures['wall_s']} s, overhead = {figures['overhead_s']} s")
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--delay", type=float, default=20.0, help="seconds from a batch's creation to its completion")
    parser.add_argument("--max-lines", type=int, default=50_000, help="lines per uploaded file")
    parser.add_argument("--poll", type=float, default=1.0, help="the first wait between polls (LLM_BATCH_POLL_SECONDS)")
    parser.add_argument("--smoke", action="store_true", help="a size that runs in seconds (make bench-smoke)")
    args = parser.parse_args()
    if args.smoke:
        args.calls, args.delay, args.max_lines, args.poll = 20, 1.0, 8, 0.2
    figures = run(args.calls, delay=args.delay, max_lines=args.max_lines, poll_seconds=args.poll)
    ok = figures["attached"] == args.calls and figures["duplicated"] == 0 and figures["live_calls"] == 0
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
