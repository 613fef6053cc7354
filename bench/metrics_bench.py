"""Metrics page time at 1,000 and 100,000 judge results, beside a bare pandas baseline.

For each size N: N responses over 14 problems (half human, half synthetic) with a gold score and
one judge result each are bulk-inserted into a scratch database. Then we time, as a logged-in
reviewer through the Django test client (full request: query, figures with bootstrap 95%
intervals for every group, template, plots' data):

- the metrics page, the CSV download, the disagreement queue page (|delta| >= 2, first 50) and
  the methods report for that setting (every figure with its bootstrap intervals);
- the first load of the metrics page and of the methods report in this process, after what a
  web process does at start (`config.wsgi`, as gunicorn imports it): a person's first page;

and, as the baseline, the bare computation a script would do: fetch the same pairs into pandas
and a groupby for MSE and FR_1..5 by source and question, without intervals, correlations,
left-out accounting or rendering. A second table shows the bootstrap alone: our multinomial
draws over distinct deltas against resampling the pairs' indices (1,000 resamples, MSE only).

First, on the demo alone (`load_demo`: what a new user opens first), the metrics page and the
methods report as they open from the menu (no setting chosen, so the report covers every
setting), first load (this web process's first pages) and warm, with their queries; last, the
same two pages again with the demo and every size's results in the database. Targets (issue 28):
under 1 s each on the demo, under 2 s at 100,000 results.

    .venv/bin/python bench/metrics_bench.py [--sizes 1000 100000] [--no-demo]
    .venv/bin/python bench/metrics_bench.py --sizes 2000      # a quick end-to-end check
"""
import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import print_table, setup_django, smoke_argument, timed  # noqa: E402


def populate(n, tag, seed=5):
    import numpy as np

    from annotation.models import Exam, Question, Response, content_hash
    from grading.models import JudgeResult, JudgeSetting

    rng = np.random.default_rng(seed)
    exam = Exam.objects.create(name=f"bench exam {tag}")
    questions = [
        Question.objects.create(exam=exam, statement=f"[{tag}] problem {q}", statement_hash=content_hash(f"[{tag}] problem {q}"),
                                full_score=14, location=f"3-{q:02d}", level="low" if q % 2 else "high")
        for q in range(14)
    ]
    gold = rng.integers(0, 15, n)
    noise = np.where(np.arange(n) % 2 == 0, rng.choice([-3, -2, -1, 0, 0, 1, 2, 3], n), rng.choice([-1, 0, 0, 0, 1], n))
    judge = np.clip(gold + noise, 0, 14)
    responses = [
        Response(
            question=questions[i % 14], source="human" if i % 2 == 0 else "synthetic", student_id=f"{tag}-{i:07d}",
            transcript=f"answer {i}", transcript_hash=content_hash(f"answer {i}"), gold_score=int(gold[i]),
            gold_status="imported",
        )
        for i in range(n)
    ]
    Response.objects.bulk_create(responses, batch_size=5000)
    ids = list(Response.objects.filter(student_id__startswith=f"{tag}-").order_by("pk").values_list("pk", flat=True))
    setting = JudgeSetting.objects.create(name=f"bench judge {tag}", kind=JudgeSetting.Kind.EXTERNAL)
    JudgeResult.objects.bulk_create(
        (JudgeResult(setting=setting, response_id=pk, cache_key=f"k{pk}", status="ok", score=float(judge[i]),
                     rationale=f"Overall Score: {judge[i]:d}") for i, pk in enumerate(ids)),
        batch_size=5000,
    )
    return setting


def baseline(setting):
    import pandas as pd
    from django.db import connection

    sql = (
        "SELECT r.score AS judge, resp.gold_score AS gold, resp.source AS source, resp.question_id AS question "
        "FROM grading_judgeresult r JOIN annotation_response resp ON resp.id = r.response_id "
        "WHERE r.config_id = %s AND r.status = 'ok'"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [setting.pk])
        frame = pd.DataFrame(cursor.fetchall(), columns=["judge", "gold", "source", "question"])
    frame["gold"] = frame["gold"].astype(float)
    delta = frame["judge"] - frame["gold"]
    frame["sq"] = delta**2
    for d in range(1, 6):
        frame[f"fr{d}"] = (delta.abs() >= d).astype(float)
    columns = ["sq"] + [f"fr{d}" for d in range(1, 6)]
    return frame.groupby("source")[columns].mean(), frame.groupby("question")[columns].mean()


def run(sizes, first_loads=True):
    import numpy as np
    import pandas  # noqa: F401  (imported before timing the baseline)
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from accounts.services import create_user_with_role
    from grading.review import metrics
    from grading.review import selectors as review_selectors

    create_user_with_role("bench-reviewer", "bench-password-123", "reviewer")
    client = Client(HTTP_HOST="127.0.0.1")  # an allowed host (DJANGO_ALLOWED_HOSTS)
    client.force_login(get_user_model().objects.get(username="bench-reviewer"))
    rows, boot_rows, first = [], [], {}
    for n in sizes:
        setup_times = {}
        with timed(setup_times, "insert"):
            setting = populate(n, f"n{n}")
        times, queries = {}, {}
        if first_loads and not first:  # a person's first pages in this process (else the demo's table)
            with timed(first, "metrics page"):
                client.get(f"/grading/review/metrics/?setting={setting.pk}")
            with timed(first, "methods report"):
                client.get(f"/grading/report/?setting={setting.pk}")
        client.get(f"/grading/review/metrics/?setting={setting.pk}")  # warm caches (templates, imports)
        for name, url in [
            ("metrics page", f"/grading/review/metrics/?setting={setting.pk}"),
            ("CSV", f"/grading/review/metrics.csv?setting={setting.pk}"),
            ("queue page", f"/grading/review/disagreements/?setting={setting.pk}"),
            ("methods report", f"/grading/report/?setting={setting.pk}"),
        ]:
            with CaptureQueriesContext(connection) as captured, timed(times, name):
                response = client.get(url)
            assert response.status_code == 200, (url, response.status_code)
            queries[name] = len(captured)
        with timed(times, "baseline"):
            baseline(setting)
        rows.append([
            f"{n:,}", f"{setup_times['insert']:.1f} s", f"{times['metrics page']:.2f} s ({queries['metrics page']} q)",
            f"{times['CSV']:.2f} s", f"{times['queue page']:.2f} s ({queries['queue page']} q)",
            f"{times['methods report']:.2f} s ({queries['methods report']} q)", f"{times['baseline']:.2f} s",
        ])
        pairs = list(review_selectors.current_results(review_selectors.Scope(setting=setting))
                     .values_list("score", "response__gold_score"))
        pred = np.array([p for p, _ in pairs], dtype=float)
        gold = np.array([float(g) for _, g in pairs])
        boot = {}
        with timed(boot, "ours"):
            metrics.delta_intervals(pred - gold, n_resamples=1000)
        with timed(boot, "indices"):
            metrics.bootstrap_interval(pred, gold, metrics.mse, n_resamples=1000)
        boot_rows.append([f"{n:,}", f"{boot['ours'] * 1000:.1f} ms (8 figures)", f"{boot['indices'] * 1000:.0f} ms (MSE only)"])
    print_table(
        "Judge-vs-human pages (Django test client, logged-in reviewer; q = SQL queries)",
        ["results", "bulk insert", "metrics page", "CSV download", "queue page", "methods report",
         "baseline: pandas groupby, no CIs"],
        rows,
    )
    if first:
        print(f"First loads in a new web process ({sizes[0]:,} results): metrics page "
              f"{first['metrics page']:.2f} s, methods report {first['methods report']:.2f} s")
    print_table(
        "Bootstrap 95% intervals, 1,000 resamples",
        ["results", "ours: multinomial over distinct deltas", "resampling pair indices"],
        boot_rows,
    )


def menu_page_rows(client):
    """The metrics page and the methods report as they open from the menu (no setting chosen:
    the report covers every setting), first load and warm, with the warm load's queries."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    rows = []
    for name, url in [("metrics page", "/grading/review/metrics/"), ("methods report", "/grading/report/")]:
        times = {}
        for load in ("first", "warm"):
            with CaptureQueriesContext(connection) as captured, timed(times, load):
                response = client.get(url)
            assert response.status_code == 200, (url, response.status_code)
        rows.append([name, f"{times['first']:.2f} s", f"{times['warm']:.2f} s ({len(captured)} q)"])
    return rows


def demo_client():
    """The demo loaded (`load_demo`, as a new user starts) and its reviewer logged in."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client

    setup_times = {}
    with timed(setup_times, "load"):
        call_command("create_demo_users", verbosity=0, stdout=open("/dev/null", "w"))  # noqa: SIM115 - passwords
        call_command("load_demo", verbosity=0, stdout=open("/dev/null", "w"))  # noqa: SIM115 - the demo's notes
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(get_user_model().objects.get(username="reviewer"))
    return client, setup_times["load"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 100_000])
    parser.add_argument("--no-demo", action="store_true", help="skip the timings on the demo")
    smoke_argument(parser)
    args = parser.parse_args()
    if args.smoke:
        args.sizes, args.no_demo = [200], True
    setup_django()
    import config.wsgi  # noqa: F401  (what a web process imports at start, warm-up included)

    started = time.perf_counter()
    client = None
    if not args.no_demo:  # first, alone in the database: what a new user opens first
        client, load_seconds = demo_client()
        print_table(f"On the demo alone (load_demo in {load_seconds:.0f} s; target under 1 s; "
                    "the first load is this web process's first page)",
                    ["page", "first load", "warm load"], menu_page_rows(client))
    run(args.sizes, first_loads=args.no_demo)
    if client is not None:
        total = " + ".join(f"{n:,}" for n in args.sizes)
        print_table(f"The demo with the {total} results above in the same database, from the menu "
                    "(the report covers every setting; target under 2 s)",
                    ["page", "first load", "warm load"], menu_page_rows(client))
    print(f"\n(total {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
