"""OCR through a real Celery worker on the real broker: one task per page, transcripts seeded.

The worker is another process, so it must reach the test database (PostgreSQL's test database
by name, or SQLite in a file) and the test's media folder. On SQLite's in-memory test database
this test runs itself again in a child pytest whose test database is a file.
"""
import os
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from ocr import synthetic
from ocr.models import OcrRun, Page
from ocr.selectors import batch_progress
from tests.workers import ROOT, Worker, database_url, in_memory_sqlite, purge_queue

from .conftest import png_bytes

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def test_pages_are_ocrd_by_a_real_worker(tmp_path, make_batch, settings):
    if in_memory_sqlite():
        if os.environ.get("REALMATH_INTEGRATION_CHILD"):
            pytest.fail("The child run still got an in-memory SQLite database.")
        env = dict(os.environ, SQLITE_TEST_NAME=str(tmp_path / "ocr-test-db.sqlite3"), REALMATH_INTEGRATION_CHILD="1")
        node = f"{Path(__file__).relative_to(ROOT)}::test_pages_are_ocrd_by_a_real_worker"
        child = subprocess.run(
            [sys.executable, "-m", "pytest", node, "-q", "-x", "-p", "no:cacheprovider", "-W", "ignore"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=280,
        )
        assert child.returncode == 0, f"child pytest failed:\n{child.stdout[-6000:]}\n{child.stderr[-3000:]}"
        assert "1 passed" in child.stdout
        return

    queue = f"ocr-test-{uuid.uuid4().hex[:10]}"
    settings.OCR_QUEUE = queue  # this process sends the page tasks there; only our worker reads it
    env = dict(
        os.environ,
        DATABASE_URL=database_url(),
        REALMATH_MEDIA_ROOT=str(settings.MEDIA_ROOT),
        OCR_QUEUE=queue,
        DJANGO_SETTINGS_MODULE="config.settings",
        OMP_THREAD_LIMIT="1",
        OCR_DEFAULT_ENGINE="tesseract",  # what each worker process warms up (nothing to load for tesseract)
    )
    env.pop("CELERY_TASK_ALWAYS_EAGER", None)
    log_path = tmp_path / "worker.log"
    pages = [synthetic.render_page([line], width=520, font_size=30, margin=24) for line in synthetic.EXAM_LINES[:2]]
    batch, results = make_batch(
        [(f"w{i}_3-17_1.png", png_bytes(image)) for i, image in enumerate(pages)], engine="tesseract"
    )  # autocommit: the tasks are on the broker now, before any worker exists
    assert [r.status for r in results] == ["accepted", "accepted"]
    assert batch_progress(batch)["queued"] == 2

    worker = Worker(env, log_path, queue=queue, concurrency=2)
    try:
        deadline = time.monotonic() + 180
        # The batch is complete once each task stored its transcript; Celery logs "succeeded"
        # only after the task returns: wait for both lines before stopping the worker. Each
        # process's warm-up (a whole page, in a thread) may end after the pages are done.
        while (not batch_progress(batch)["complete"] or len(_succeeded(log_path)) < 2
               or log_path.read_text().count("OCR engines warm: tesseract") < 2):
            if worker.proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"worker exited or timed out:\n{log_path.read_text()[-4000:]}")
            time.sleep(0.3)
    finally:
        worker.stop()
        purge_queue(queue)

    runs = list(OcrRun.objects.filter(page__batch=batch))
    assert [run.status for run in runs] == ["done", "done"], [run.error for run in runs]
    assert all(run.raw_text and run.tokens and run.engine_version.startswith("tesseract") for run in runs)
    assert all(page.transcript.version == 1 and page.web for page in Page.objects.filter(batch=batch))
    log = log_path.read_text()
    assert len(_succeeded(log_path)) == 2  # one task per page
    # Each worker process warmed up once when it started (a loaded machine may replace a process
    # that was slow to report itself up: the new one warms up too).
    assert log.count("OCR engines warm: tesseract") >= 2
    assert all(run.timings.keys() == {"render", "prepare", "engine", "store"} for run in runs)


def _succeeded(log_path):
    return re.findall(r"Task ocr\.run_ocr\[[0-9a-f-]+\] succeeded", log_path.read_text())

