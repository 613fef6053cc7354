"""Server time of the labelling pages at 1,000 and at 100,000 responses, side by side.

Builds a scratch database (SQLite in a temporary folder unless DATABASE_URL is set) with 14
rubric questions, N responses with imported gold, two annotators assigned to every response
(k=2, round-robin through the real assignment service), and expert labels with step labels on
a fifth of the responses (some disagreeing, so the adjudication queue is not empty); the
annotators are a team of 10 (`--annotators`), each response assigned to two of them. Then it
times the pages in-process through Django's test client (server time only: URL routing,
middleware, views, templates and SQL; no network, no browser), grows the data to the larger
size and times them again. The foundation's response page is timed as the baseline.

    .venv/bin/python bench/labelling_bench.py [--small 1000] [--large 100000] [--repeat 15]
"""
import argparse
import random
import statistics
import sys
import time
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import print_table, setup_django, smoke_argument  # noqa: E402

SAMPLE = Path(__file__).resolve().parent.parent / "fixtures" / "demo" / "realmath_eval.json"
N_QUESTIONS = 14


def make_questions():
    import json

    from annotation.models import Exam, Question, RubricCheckpoint, SubQuestion, content_hash
    from annotation.rubric import read_rubric

    records = json.loads(SAMPLE.read_text())
    templates = list({r["problem_statement"]: r for r in records}.values())
    exam = Exam.objects.create(name="bench", blind=True)
    questions = []
    for i in range(N_QUESTIONS):
        record = templates[i % len(templates)]
        statement = f"[bench {i}] {record['problem_statement']}"
        question = Question.objects.create(
            exam=exam, statement=statement, statement_hash=content_hash(statement),
            reference_solution=record["reference_answer"], full_score=Decimal(str(record["full_score"])),
            location=f"B-{i:02d}", level=record["question_level"],
        )
        reading = read_rubric(question.reference_solution, list(record["sub_question_scores"]), question.full_score)
        parsed, maxima = reading.checkpoints, reading.maxima
        labels = reading.labels or ["(1)"]
        subs = {
            label: SubQuestion.objects.create(question=question, label=label, order=n, max_points=maxima.get(label))
            for n, label in enumerate(labels)
        }
        RubricCheckpoint.objects.bulk_create(
            RubricCheckpoint(question=question, sub_question=subs.get(c.sub_label), order=c.order,
                             cumulative_points=c.cumulative_points, text=c.text, start=c.start, end=c.end)
            for c in parsed
        )
        questions.append((question, record["student_response"], labels))
    return questions


def add_responses(questions, start, count, annotators):
    """Bulk-insert responses with imported gold, assign k=2 annotators, label a fifth of them."""
    from annotation.labelling import services
    from annotation.models import Assignment, Label, Response, StepLabel, content_hash

    rng = random.Random(start)
    rows = []
    for i in range(start, start + count):
        question, transcript, _ = questions[i % N_QUESTIONS]
        text = f"{transcript}\n(sheet {i})"
        rows.append(Response(
            question=question, source="human", student_id=f"s{i:07d}", transcript=text,
            transcript_hash=content_hash(text), status="labelled", gold_score=Decimal(rng.randint(0, 5)),
            gold_status="imported",
        ))
    created = Response.objects.bulk_create(rows, batch_size=2000)
    if any(r.pk is None for r in created):
        created = list(Response.objects.filter(student_id__gte=f"s{start:07d}").order_by("pk")[:count])
    Label.objects.bulk_create(
        (Label(response=r, is_imported=True, total=r.gold_score, sub_scores={}, submitted=True,
                    provenance={"file": "bench", "record_index": n}) for n, r in enumerate(created)),
        batch_size=2000,
    )
    services.assign_responses(
        responses=Response.objects.filter(pk__gte=created[0].pk), annotators=annotators, per_response=2,
        strategy="round_robin",
    )
    labelled = created[::5]
    first_annotator = {}
    for response_id, annotator_id in Assignment.objects.filter(response__in=[r.pk for r in labelled]).exclude(
        annotator=annotators[0]
    ).values_list("response_id", "annotator_id"):
        first_annotator.setdefault(response_id, annotator_id)
    labels = []
    for n, response in enumerate(labelled):
        _, _, subs = questions[(start + 5 * n) % N_QUESTIONS]
        points = (response.gold_score if n % 4 else response.gold_score + 3)
        labels.append(Label(response=response, annotator_id=first_annotator[response.pk], total=points,
                                 sub_scores={subs[0]: float(points)}, submitted=True, version=1))
    labels = Label.objects.bulk_create(labels, batch_size=2000)
    if any(a.pk is None for a in labels):
        labels = list(Label.objects.filter(annotator__isnull=False, response__in=labelled))
    StepLabel.objects.bulk_create(
        (StepLabel(label=a, start=0, end=3, quote="x", verdict="logical_gap") for a in labels), batch_size=2000
    )
    for label in labels:  # what a submission does: gold status and the label summary
        services.refresh_gold(label.response_id)
    return created


def measure(client, url, repeat):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client.get(url)  # warm caches (templates, connection)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        page = client.get(url)
        times.append(time.perf_counter() - start)
        assert page.status_code == 200, (url, page.status_code)
    with CaptureQueriesContext(connection) as queries:
        client.get(url)
    return statistics.median(times) * 1000, len(queries.captured_queries)


def pages(annotator, responses, rng):
    from django.urls import reverse

    from annotation.models import Assignment, Label

    mine = Assignment.objects.filter(annotator=annotator)
    labelled_by_others = Label.objects.filter(annotator__isnull=False).exclude(annotator=annotator)
    candidates = list(
        mine.filter(response__in=labelled_by_others.values("response")).values_list("response_id", flat=True)[:200]
    )
    target = rng.choice(candidates)  # assigned to the annotator, labelled by a colleague
    question_id = next(r.question_id for r in responses if r.pk == target)
    last_page = (mine.count() + 49) // 50
    return {
        "labelling page (annotator)": ("annotator", reverse("annotation:label", args=[target])),
        "labelling page (reviewer, labels shown)": ("reviewer", reverse("annotation:label", args=[target])),
        "my queue, page 1": ("annotator", reverse("annotation:label_queue") + "?state=all"),
        "my queue, last page": ("annotator", reverse("annotation:label_queue") + f"?state=all&page={last_page}"),
        "adjudication queue": ("reviewer", reverse("annotation:adjudication_queue")),
        "assignment page (workload tables)": ("reviewer", reverse("annotation:assign")),
        "agreement, one question": ("reviewer", reverse("annotation:agreement") + f"?question={question_id}"),
        "agreement, all labels": ("reviewer", reverse("annotation:agreement")),
        "baseline: response page (foundation)": ("reviewer", reverse("annotation:response_detail", args=[target])),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--small", type=int, default=1000)
    parser.add_argument("--large", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--annotators", type=int, default=10, help="team size; every response gets k=2 of them")
    smoke_argument(parser)
    args = parser.parse_args()
    if args.smoke:
        args.small, args.large, args.repeat, args.annotators = 40, 120, 2, 3
    setup_django()
    from django.conf import settings
    from django.test import Client

    from accounts.services import create_user_with_role

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.ALLOWED_HOSTS = ["*"]
    annotators = [
        create_user_with_role(f"bench-ann{i + 1}", f"bench-password-{i}", "annotator") for i in range(args.annotators)
    ]
    reviewer = create_user_with_role("bench-rev", "bench-password-rev", "reviewer")
    clients = {"annotator": Client(), "reviewer": Client()}
    clients["annotator"].force_login(annotators[0])
    clients["reviewer"].force_login(reviewer)
    rng = random.Random(4)
    questions = make_questions()

    results, sizes = {}, [args.small, args.large]
    responses = []
    for size in sizes:
        started = time.perf_counter()
        responses += add_responses(questions, len(responses), size - len(responses), annotators)
        print(f"built {size:,} responses in {time.perf_counter() - started:.1f} s", flush=True)
        for name, (role, url) in pages(annotators[0], responses, rng).items():
            results.setdefault(name, {})[size] = measure(clients[role], url, args.repeat)

    header = ["page (median server time)"] + [f"{s:,} responses" for s in sizes] + ["queries"]
    rows = []
    for name, by_size in results.items():
        cells = [f"{by_size[s][0]:.1f} ms" for s in sizes]
        counts = {by_size[s][1] for s in sizes}
        rows.append([name, *cells, " = ".join(str(by_size[s][1]) for s in sizes) + ("" if len(counts) == 1 else "  (grows!)")])
    print_table(
        f"Labelling pages, median of {args.repeat} requests after one warm-up "
        f"({args.annotators} annotators, k=2 labels asked per response, one in five labelled)",
        header, rows,
    )


if __name__ == "__main__":
    main()
