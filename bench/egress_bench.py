"""
What the provider-call log costs a judge run: the same run with the log on and off, alternately.

    .venv/bin/python bench/egress_bench.py [--answers 300] [--rounds 3] [--latency 0.0]

Each round judges `answers` new answers (so no cache hit) in this process (`run_inline`: the chunk
loop real workers run, on the call pool, through the senders) against the loopback server
(tests/llm_server.py, in a thread), once with the egress observer installed and once without
(`llm.set_observer(None)`); with the log on, the buffered records are written at the end (one
insert, timed apart). Prints the seconds per run of each side, the mean difference per call, and
the time of the insert.
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import print_table, setup_django, smoke_argument  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    parser.add_argument("--answers", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.0)
    smoke_argument(parser)
    args = parser.parse_args()
    if args.smoke:
        args.answers, args.rounds = 20, 1
    setup_django()
    import os

    import llm
    from egress import services as egress
    from egress.models import ProviderCall
    from grading.judges import services
    from tests.factories import make_endpoint, make_question, make_responses, make_setting
    from tests.llm_server import LlmServer

    os.environ["REALMATH_LLM_KEY_TEST"] = "sk-bench"
    results = {"on": [], "off": []}
    inserts, calls = [], []
    with LlmServer(latency=args.latency) as server:
        endpoint = make_endpoint(server, max_concurrency=32, timeout_seconds=30)
        start = 0
        for round_number in range(args.rounds):
            for side in ("off", "on") if round_number % 2 else ("on", "off"):
                question = make_question(f"Find all x with $x^2 = {start + 4}$.")  # a run judges its question's answers
                make_responses(question, args.answers, start=start)
                start += args.answers
                setting = make_setting(endpoint)
                llm.set_observer(egress.record_call if side == "on" else None)
                run = services.start_judge_run(setting, enqueue=False, chunk_size=args.answers,
                                               params={"question": str(question.pk)})
                before = server.request_count
                began = time.perf_counter()
                services.run_inline(run)
                results[side].append(time.perf_counter() - began)
                calls.append(server.request_count - before)
                if side == "on":
                    began = time.perf_counter()
                    written = egress.flush()
                    inserts.append((written, time.perf_counter() - began))
    llm.set_observer(egress.record_call)
    rows = [[side, len(times), f"{statistics.median(times):.3f}", f"{min(times):.3f}", f"{max(times):.3f}"]
            for side, times in results.items()]
    print_table(f"judge run of {args.answers} calls, log on / off (seconds)", ["log", "runs", "median", "min", "max"],
                rows)
    per_call_us = (statistics.median(results["on"]) - statistics.median(results["off"])) / args.answers * 1e6
    written = sum(n for n, _ in inserts)
    print(f"\nrequests per run: {sorted(set(calls))}")
    print(f"records written: {written} (rows in the log: {ProviderCall.objects.count()}); "
          f"insert time per run: {statistics.median([s for _, s in inserts]) * 1000:.1f} ms for {args.answers} rows")
    print(f"median difference per call (on - off): {per_call_us:.0f} µs")


if __name__ == "__main__":
    main()
