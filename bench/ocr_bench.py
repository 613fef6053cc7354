"""OCR engines on rendered exam pages: a bare engine call beside our pipeline in a real Celery worker.

The page set is rendered from known text (Chinese exam lines with formulas in Noto Sans CJK,
uneven light, noise, specks, a 1.5-2.5 degree rotation, JPEG compression), so every page has its
exact ground truth: by default pages the size of a 200-dpi A4 scan (ocr.synthetic.full_page,
1654 x ~2100 px, 12 lines), with ``--size small`` four-line strips (ocr.synthetic.spoiled_page).

For each engine, on the same pages, with 1 process and then with N (``--concurrency``, default
the number of cores, as ``make worker`` runs):

- bare: the engine's own call on the decoded page, as a script would do it
  (``pytesseract.image_to_string`` / ``RapidOCR()(array)``, no preprocessing), after one warm-up
  call; with N, N such processes at once, each with its share of the pages;
- worker: what an upload costs here, the way users run it: the pages are uploaded as one batch
  (``services.ingest_uploads``: sniffing, decoding with limits, pixel checksum, master PNG
  stored, rows written) and a real Celery worker (``celery -A config worker --concurrency N``,
  prefork, as ``make worker`` starts it) takes one task per page: flatten, threshold, deskew,
  renditions stored, the engine through our interface with character boxes, tokens scaled to
  screen pixels, transcript seeded.

Per page it prints the bare time and the worker's task time (claim to stored transcript; its
stages below), their ratio at the same parallelism (issue 13 asks for at most 1.3), and pages
per minute of the whole batch (upload to last transcript, worker start-up excluded). Comparing
at the same parallelism keeps apart what our pipeline costs and what a busy machine costs: two
processes on two busy cores each take longer per page, bare or not. Everything runs on a
scratch SQLite database, media folder and file-system broker, so the worker sees exactly what
this process wrote. The load average is printed before and after each engine: on a shared
machine, quote it with the figures.

    .venv/bin/python bench/ocr_bench.py [--pages 6] [--size a4|small] [--engines rapidocr,tesseract] [--concurrency 2] [--rounds 2]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("OMP_THREAD_LIMIT", "1")
os.environ["CELERY_TASK_ALWAYS_EAGER"] = "false"

import _procs  # noqa: E402
from _setup import ROOT, print_table, setup_django, smoke_argument  # noqa: E402


def bare_call(name):
    """The engine as a script would call it, without our pipeline."""
    if name == "tesseract":
        import pytesseract

        return lambda image: pytesseract.image_to_string(image, lang="chi_sim+eng")
    if name == "rapidocr":
        import numpy as np
        from rapidocr import RapidOCR

        from ocr.engines.rapid import bundled_model_paths

        params = {"Global.log_level": "error", "EngineConfig.onnxruntime.intra_op_num_threads": 1}
        params.update({f"{stage}.model_path": str(path) for stage, path in bundled_model_paths().items()})
        engine = RapidOCR(params=params)

        def call(image):
            output = engine(np.asarray(image.convert("L")))
            return "\n".join(output.txts or ())

        return call
    from ocr.engines import get_engine

    engine = get_engine(name)
    return lambda image: engine.recognise(image).text


def run_bare(name, pages):
    """Seconds per page (one after the other) and CER of the bare engine call."""
    from ocr.metrics import char_errors

    call = bare_call(name)
    call(pages[0][0])  # warm-up: model loading is not per page
    edits = length = 0
    seconds = []
    for image, truth, _ in pages:
        started = time.perf_counter()
        text = call(image.convert("L"))
        seconds.append(time.perf_counter() - started)
        e, n = char_errors(text, truth)
        edits, length = edits + e, length + n
    return seconds, edits / length


def _bare_process(name, pngs, barrier, results):
    """One of N bare processes: warm up, wait for the others, read its pages."""
    import io

    from _setup import setup_django
    from PIL import Image

    setup_django(migrate=False)
    images = [Image.open(io.BytesIO(data)).convert("L") for data in pngs]
    call = bare_call(name)
    call(images[0])
    barrier.wait()
    seconds = []
    for image in images:
        started = time.perf_counter()
        call(image)
        seconds.append(time.perf_counter() - started)
    results.put(seconds)


def run_bare_parallel(name, pages, processes):
    """N bare processes at once, the pages dealt out between them: (seconds per page, wall seconds)."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(processes + 1), context.Queue()
    workers = [context.Process(target=_bare_process, args=(name, [p[2] for p in pages[i::processes]], barrier, results))
               for i in range(processes)]
    for worker in workers:
        worker.start()
    barrier.wait()
    started = time.perf_counter()
    seconds = [value for _ in workers for value in results.get(timeout=1800)]
    wall = time.perf_counter() - started
    for worker in workers:
        worker.join()
    return seconds, wall


class Worker:
    """A Celery worker process on its own queue, started like `make worker` starts one."""

    def __init__(self, concurrency, log_path):
        self.queue = f"ocr-bench-{uuid.uuid4().hex[:8]}"
        self.concurrency = concurrency
        self.log_path = log_path
        self.process = None

    def start(self):
        env = dict(os.environ, OCR_QUEUE=self.queue)
        env.pop("CELERY_TASK_ALWAYS_EAGER", None)
        self.log = open(self.log_path, "w")
        self.process = _procs.spawn(  # its own process group, stopped with the bench however it ends
            [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", self.queue,
             "--concurrency", str(self.concurrency), "--pool", "prefork", "--without-gossip",
             "--without-mingle", "--without-heartbeat", "--loglevel", "INFO", "-n", f"{self.queue}@%h"],
            cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 120
        while "ready." not in self.log_path.read_text():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"The worker did not start:\n{self.log_path.read_text()[-3000:]}")
            time.sleep(0.2)
        # Each child warms its engines up when it starts (ocr.tasks, worker_process_init).
        while self.log_path.read_text().count("OCR engines warm") < self.concurrency:
            if self.process.poll() is not None or time.monotonic() > deadline:
                break  # an older worker without warm-up: measured as it is
            time.sleep(0.2)

    def stop(self):
        if self.process is None:
            return
        _procs.stop(self.process, grace=30)
        self.log.close()


def run_worker(name, pages, exam, worker):
    """Upload the pages as one batch and let the worker OCR them: per-page times, wall time, CER."""
    from django.conf import settings

    from ocr import services
    from ocr.metrics import char_errors
    from ocr.models import OcrRun
    from ocr.selectors import batch_progress

    settings.OCR_QUEUE = worker.queue
    batch = services.create_batch(exam=exam, engine=name, name=f"bench {name}")
    started = time.perf_counter()
    uploads = [services.Upload(f"s{index:03d}_B-1_1.png", data, "image/png") for index, (_, _, data) in enumerate(pages)]
    services.ingest_uploads(batch, uploads)  # autocommit: the tasks are sent as each page is stored
    deadline = time.monotonic() + 60 * len(pages) + 120
    while not batch_progress(batch)["complete"]:
        if worker.process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"The worker stopped or timed out:\n{worker.log_path.read_text()[-3000:]}")
        time.sleep(0.2)
    wall = time.perf_counter() - started
    runs = list(OcrRun.objects.filter(page__batch=batch).order_by("page__student_id"))
    failed = [run for run in runs if run.status != "done"]
    if failed or len(runs) != len(pages):
        raise SystemExit(f"{name}: {len(failed)} run(s) failed: {failed[0].error if failed else 'missing runs'}")
    edits = length = 0
    for run, (_, truth, _) in zip(runs, pages):
        e, n = char_errors(run.raw_text, truth)
        edits, length = edits + e, length + n
    task_seconds = [(run.finished - run.started).total_seconds() for run in runs]
    engine_seconds = [run.seconds for run in runs]
    stages = {}
    for run in runs:
        for stage, seconds in (run.timings or {}).items():
            stages.setdefault(stage, []).append(seconds)
    batch.delete()  # the next engine gets the same pages, which would otherwise be duplicates
    return {"wall": wall, "cer": edits / length, "task": task_seconds, "engine": engine_seconds, "stages": stages}


def load_note():
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min), {five:.1f} (5 min) on {os.cpu_count()} cores"


def measure(name, pages, exam, concurrency, log_path, rounds):
    """Bare and worker at one parallelism, in alternation for `rounds` rounds (a shared machine's load
    changes by the minute): a row of the table (medians of the rounds) and the worker's stages."""
    n = len(pages)
    bare_means, bare_walls, task_means, engine_means, walls, stages_seen, bare_cer = [], [], [], [], [], {}, None
    worker = Worker(concurrency, log_path)
    worker.start()
    try:
        for _ in range(rounds):
            if concurrency == 1:
                bare, bare_cer = run_bare(name, pages)
                bare_wall = sum(bare)
            else:
                bare, bare_wall = run_bare_parallel(name, pages, concurrency)
            result = run_worker(name, pages, exam, worker)
            bare_means.append(statistics.mean(bare))
            bare_walls.append(bare_wall)
            task_means.append(statistics.mean(result["task"]))
            engine_means.append(statistics.mean(result["engine"]))
            walls.append(result["wall"])
            for stage, values in result["stages"].items():
                stages_seen.setdefault(stage, []).extend(values)
    finally:
        worker.stop()
    median = statistics.median
    row = [name, str(concurrency), f"{median(bare_means):.2f}", f"{median(task_means):.2f}",
           f"{median(engine_means):.2f}", f"{median(task_means) / median(bare_means):.2f}",
           f"{60 * n / median(bare_walls):.1f}", f"{60 * n / median(walls):.1f}",
           "—" if bare_cer is None else f"{bare_cer:.4f}", f"{result['cer']:.4f}"]
    stages = [name, str(concurrency)] + [f"{statistics.mean(stages_seen.get(stage, [0])):.2f}"
                                         for stage in ("render", "prepare", "engine", "store")]
    return row, stages


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=6)
    parser.add_argument("--size", choices=["a4", "small"], default="a4")
    parser.add_argument("--engines", default="rapidocr,tesseract")
    parser.add_argument("--concurrency", type=int, default=os.cpu_count(), help="worker processes (as make worker)")
    parser.add_argument("--rounds", type=int, default=2, help="bare and worker alternate this many times; medians")
    smoke_argument(parser)
    args = parser.parse_args()
    if args.smoke:
        args.pages, args.size, args.engines, args.concurrency, args.rounds = 1, "small", "tesseract", 1, 1
    setup_django()

    from django.conf import settings

    from annotation.models import Exam, Question, content_hash
    from ocr import synthetic
    from ocr.imaging import encode_png

    # Pages are made from seeds no test uses; the same pages go to every engine and both paths.
    pages = []
    make_page = synthetic.full_page if args.size == "a4" else synthetic.spoiled_page
    for seed in range(100, 100 + args.pages):
        image, truth = make_page(seed)
        pages.append((image, truth, encode_png(image)))
    exam = Exam.objects.create(name=f"OCR bench {time.time():.0f}")
    statement = "Bench question"
    Question.objects.create(exam=exam, statement=statement, statement_hash=content_hash(statement), location="B-1")

    print(f"OCR benchmark: {len(pages)} rendered exam pages ({pages[0][0].width}x{pages[0][0].height} px, "
          f"spoiled); worker: prefork; OCR_ENGINE_THREADS={settings.OCR_ENGINE_THREADS}, "
          f"OMP_THREAD_LIMIT={os.environ['OMP_THREAD_LIMIT']}")
    rows, stage_rows = [], []
    levels = sorted({1, args.concurrency})
    for name in [n.strip() for n in args.engines.split(",") if n.strip()]:
        print(f"{name}: at start, {load_note()}", flush=True)
        for concurrency in levels:
            row, stages = measure(name, pages, exam, concurrency, Path(settings.VAR_DIR) / "worker.log", args.rounds)
            rows.append(row)
            stage_rows.append(stages)
        print(f"{name}: at the end, {load_note()}", flush=True)
    print_table(
        "Per engine and parallelism, medians of the rounds (bare = the engine's own call on the decoded page, in "
        "that many processes at once; worker = one Celery task per page, that many worker processes)",
        ["engine", "processes", "bare s/page", "worker task s/page", "engine s/page in task", "task / bare",
         "bare pages/min", "worker pages/min", "bare CER", "worker CER"],
        rows,
    )
    print_table("Inside a worker task (mean seconds per page)",
                ["engine", "processes", "render", "prepare", "engine", "store"], stage_rows)
    print("\nCER = Levenshtein edits / reference characters after NFKC and whitespace removal (ocr/metrics.py).")
    print("Worker pages/min covers upload to the last stored transcript with all worker processes busy;")
    print("the task time includes preprocessing, which changes what the engine sees (and so its time and CER).")


if __name__ == "__main__":
    main()
