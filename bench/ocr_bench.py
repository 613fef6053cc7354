"""OCR engines on rendered exam pages: pages per minute, CER, and our pipeline beside a bare engine call.

The page set is rendered from known text (ocr.synthetic.spoiled_page: Chinese exam lines with
formulas in Noto Sans CJK, uneven light, noise, specks, a 2-2.5 degree rotation, JPEG
compression), so every page has its exact ground truth.

For each engine, on the same pages:

- bare: the engine's own call on the decoded page, as a script would do it
  (``pytesseract.image_to_string`` / ``RapidOCR()(array)``, no preprocessing);
- pipeline: what an upload costs here, end to end: ``services.ingest_uploads`` with the PNG
  bytes (sniffing, decoding with limits, pixel checksum, master PNG stored, rows written), then
  the page task (flatten, threshold, deskew, renditions stored, the engine through our
  interface with character boxes, tokens scaled to screen pixels, transcript seeded).

It prints pages/min and CER of both, the engine's own time inside the pipeline, and the
overhead ratio pipeline / bare. The pipeline runs its Celery task in-process (eager), on a
scratch SQLite database.

    .venv/bin/python bench/ocr_bench.py [--pages 6] [--engines rapidocr,tesseract]
"""
import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("CELERY_TASK_ALWAYS_EAGER", "true")
os.environ.setdefault("OMP_THREAD_LIMIT", "1")

from _setup import print_table, setup_django  # noqa: E402


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
    from ocr.metrics import char_errors

    call = bare_call(name)
    call(pages[0][0])  # warm-up: model loading is not per page
    edits = length = 0
    started = time.perf_counter()
    for image, truth, _ in pages:
        e, n = char_errors(call(image.convert("L")), truth)
        edits, length = edits + e, length + n
    return time.perf_counter() - started, edits / length


def run_pipeline(name, pages, exam):
    from django.db import transaction

    from ocr import services
    from ocr.engines import get_engine
    from ocr.metrics import char_errors
    from ocr.models import OcrRun

    get_engine(name).recognise(pages[0][0])  # warm-up, as for the bare call
    batch = services.create_batch(exam=exam, engine=name, name=f"bench {name}")
    started = time.perf_counter()
    for index, (_, _, data) in enumerate(pages):
        with transaction.atomic():  # on commit, the page task runs in-process
            services.ingest_uploads(batch, [services.Upload(f"s{index:03d}_B-1_1.png", data, "image/png")])
    elapsed = time.perf_counter() - started
    runs = list(OcrRun.objects.filter(page__batch=batch).order_by("page__student_id"))
    failed = [run for run in runs if run.status != "done"]
    if failed or len(runs) != len(pages):
        raise SystemExit(f"{name}: {len(failed)} run(s) failed: {failed[0].error if failed else 'missing runs'}")
    edits = length = 0
    for run, (_, truth, _) in zip(runs, pages):
        e, n = char_errors(run.raw_text, truth)
        edits, length = edits + e, length + n
    engine_seconds = sum(run.seconds for run in runs)
    batch.delete()  # the next engine gets the same pages, which would otherwise be duplicates
    return elapsed, edits / length, engine_seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=6)
    parser.add_argument("--engines", default="rapidocr,tesseract")
    args = parser.parse_args()
    setup_django()

    from django.conf import settings

    from annotation.models import Exam, Question, content_hash
    from ocr import synthetic
    from ocr.imaging import encode_png

    # Pages are made from seeds no test uses; the same pages go to every engine and both paths.
    pages = []
    for seed in range(100, 100 + args.pages):
        image, truth = synthetic.spoiled_page(seed)
        pages.append((image, truth, encode_png(image)))
    exam = Exam.objects.create(name=f"OCR bench {time.time():.0f}")
    statement = "Bench question"
    Question.objects.create(exam=exam, statement=statement, statement_hash=content_hash(statement), location="B-1")

    print(f"OCR benchmark: {len(pages)} rendered exam pages ({pages[0][0].width}x{pages[0][0].height} px, "
          f"spoiled), {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, "
          f"OCR_ENGINE_THREADS={settings.OCR_ENGINE_THREADS}, OMP_THREAD_LIMIT={os.environ['OMP_THREAD_LIMIT']}")
    rows = []
    for name in [n.strip() for n in args.engines.split(",") if n.strip()]:
        bare_seconds, bare_cer = run_bare(name, pages)
        pipe_seconds, pipe_cer, engine_seconds = run_pipeline(name, pages, exam)
        n = len(pages)
        rows.append([
            name,
            f"{60 * n / bare_seconds:.1f}",
            f"{bare_cer:.4f}",
            f"{60 * n / pipe_seconds:.1f}",
            f"{pipe_cer:.4f}",
            f"{bare_seconds / n:.2f}",
            f"{pipe_seconds / n:.2f}",
            f"{engine_seconds / n:.2f}",
            f"{pipe_seconds / bare_seconds:.2f}",
        ])
    print_table(
        "Per engine (bare = the engine's own call on the page as decoded; pipeline = upload to stored transcript)",
        ["engine", "bare pages/min", "bare CER", "pipeline pages/min", "pipeline CER", "bare s/page",
         "pipeline s/page", "engine s/page in pipeline", "overhead ratio"],
        rows,
    )
    print("\nCER = Levenshtein edits / reference characters after NFKC and whitespace removal (ocr/metrics.py).")
    print("Overhead ratio = pipeline time / bare time on the same pages; it includes preprocessing, which changes")
    print("what the engine sees (and so its own time and CER), storage of renditions and database writes.")


if __name__ == "__main__":
    main()
