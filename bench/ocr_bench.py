"""OCR engines on rendered exam pages: a bare engine call beside our pipeline in a real Celery worker.

The page set is rendered from known text (Chinese exam lines with formulas in Noto Sans CJK,
uneven light, noise, specks, a 1.5-2.5 degree rotation, JPEG compression), so every page has its
exact ground truth: by default pages the size of a 200-dpi A4 scan (ocr.synthetic.full_page,
1654 x ~2100 px, 12 lines), with ``--size small`` four-line strips (ocr.synthetic.spoiled_page).

For each engine, on the same pages:

- bare: the engine's own call on the decoded page, as a script would do it
  (``pytesseract.image_to_string`` / ``RapidOCR()(array)``, no preprocessing), one page after
  the other in this process, after one warm-up call;
- worker: what an upload costs here, the way users run it: the pages are uploaded as one batch
  (``services.ingest_uploads``: sniffing, decoding with limits, pixel checksum, master PNG
  stored, rows written) and a real Celery worker (``celery -A config worker``, prefork, as
  ``make worker`` starts it) takes one task per page: flatten, threshold, deskew, renditions
  stored, the engine through our interface with character boxes, tokens scaled to screen
  pixels, transcript seeded.

Per page it prints the bare time, the worker's task time (claim to stored transcript) and,
inside it, the engine's own time; the ratio task / bare is what issue 13 asks to keep under
1.3. It also prints pages/min of the whole batch (upload to last transcript, worker start-up
excluded) and the CER of both paths. Everything runs on a scratch SQLite database, media
folder and file-system broker, so the worker sees exactly what this process wrote.

    .venv/bin/python bench/ocr_bench.py [--pages 6] [--size a4|small] [--engines rapidocr,tesseract] [--concurrency 2]
"""
import argparse
import os
import signal
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("OMP_THREAD_LIMIT", "1")
os.environ["CELERY_TASK_ALWAYS_EAGER"] = "false"

from _setup import ROOT, print_table, setup_django  # noqa: E402


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
        self.process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", self.queue,
             "--concurrency", str(self.concurrency), "--pool", "prefork", "--without-gossip",
             "--without-mingle", "--without-heartbeat", "--loglevel", "INFO", "-n", f"{self.queue}@%h"],
            cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
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
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=6)
    parser.add_argument("--size", choices=["a4", "small"], default="a4")
    parser.add_argument("--engines", default="rapidocr,tesseract")
    parser.add_argument("--concurrency", type=int, default=os.cpu_count(), help="worker processes (as make worker)")
    args = parser.parse_args()
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
          f"spoiled); worker: prefork, concurrency {args.concurrency}; "
          f"OCR_ENGINE_THREADS={settings.OCR_ENGINE_THREADS}, OMP_THREAD_LIMIT={os.environ['OMP_THREAD_LIMIT']}")
    print(f"At start: {load_note()}")
    worker = Worker(args.concurrency, Path(settings.VAR_DIR) / "worker.log")
    worker.start()
    rows, stage_rows = [], []
    try:
        for name in [n.strip() for n in args.engines.split(",") if n.strip()]:
            bare, bare_cer = run_bare(name, pages)
            result = run_worker(name, pages, exam, worker)
            n = len(pages)
            bare_mean, task_mean = statistics.mean(bare), statistics.mean(result["task"])
            rows.append([
                name,
                f"{bare_mean:.2f}",
                f"{task_mean:.2f}",
                f"{statistics.mean(result['engine']):.2f}",
                f"{task_mean / bare_mean:.2f}",
                f"{60 * n / sum(bare):.1f}",
                f"{60 * n / result['wall']:.1f}",
                f"{bare_cer:.4f}",
                f"{result['cer']:.4f}",
            ])
            stage_rows.append([name] + [
                f"{statistics.mean(result['stages'].get(stage, [0])):.2f}"
                for stage in ("render", "prepare", "engine", "store")
            ])
    finally:
        worker.stop()
    print_table(
        "Per engine (bare = the engine's own call on the decoded page, one page after the other; worker = one "
        "Celery task per page)",
        ["engine", "bare s/page", "worker task s/page", "engine s/page in task", "task / bare",
         "bare pages/min", "worker pages/min", "bare CER", "worker CER"],
        rows,
    )
    print_table("Inside a worker task (mean seconds per page)", ["engine", "render", "prepare", "engine", "store"],
                stage_rows)
    print(f"\nAt the end: {load_note()}")
    print("\nCER = Levenshtein edits / reference characters after NFKC and whitespace removal (ocr/metrics.py).")
    print("Worker pages/min covers upload to the last stored transcript with all worker processes busy;")
    print("the task time includes preprocessing, which changes what the engine sees (and so its time and CER).")


if __name__ == "__main__":
    main()
