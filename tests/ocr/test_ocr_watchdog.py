"""A page whose worker was killed is taken over automatically; the ETA says it (issue 29, item 11)."""
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from ocr import selectors, services
from ocr import tasks as ocr_tasks
from ocr.models import OcrRun, Page

from .conftest import distinct_image, png_bytes

pytestmark = pytest.mark.django_db


@pytest.fixture
def in_flight(make_batch):
    """A page a worker claimed, then died on (no OCR ran in the test)."""
    batch, _ = make_batch([("s1_3-17_1.png", png_bytes(distinct_image(3)))])
    run = Page.objects.get(batch=batch).ocr_runs.get()
    OcrRun.objects.filter(pk=run.pk).update(status="running", started=timezone.now())
    return run


def started_ago(run, seconds):
    OcrRun.objects.filter(pk=run.pk).update(started=timezone.now() - timedelta(seconds=seconds),
                                            created=timezone.now() - timedelta(seconds=seconds))


def test_a_page_whose_worker_died_is_read_again_without_a_retry(in_flight, run_tasks):
    assert services.watch_ocr_run(in_flight.pk) == "watching"  # a worker may still be on it
    assert OcrRun.objects.get(pk=in_flight.pk).status == "running"
    started_ago(in_flight, selectors.stuck_after_seconds() + 5)
    with run_tasks():
        assert services.watch_ocr_run(in_flight.pk) == "taken over"
    run = OcrRun.objects.get(pk=in_flight.pk)
    assert run.status == "done" and run.finished is not None  # the real engine read it, as queued again


def test_a_page_that_kills_its_worker_twice_is_failed_with_a_message(in_flight):
    started_ago(in_flight, selectors.stuck_after_seconds() + 5)
    assert services.watch_ocr_run(in_flight.pk, services.MAX_OCR_TAKEOVERS) == "failed"
    run = OcrRun.objects.get(pk=in_flight.pk)
    assert run.status == "failed" and "stopped (killed or restarted) twice" in run.error
    assert services.watch_ocr_run(in_flight.pk) == "stopped"


def test_claiming_a_page_schedules_its_watch(make_batch, monkeypatch):
    from config.celery import app

    sent = []
    monkeypatch.setattr(ocr_tasks.watch_ocr_run_task, "apply_async", lambda args, countdown: sent.append((args, countdown)))
    batch, _ = make_batch([("s1_3-17_1.png", png_bytes(distinct_image(4)))])
    run = Page.objects.get(batch=batch).ocr_runs.get()
    app.conf.task_always_eager = False  # the autouse _eager_celery fixture puts it back
    monkeypatch.setattr(services.runs, "render_pending_page", lambda page: (_ for _ in ()).throw(RuntimeError("stop")))
    with pytest.raises(RuntimeError):
        services.perform_ocr_run(run.pk)
    assert sent == [([run.pk, 0], selectors.stuck_after_seconds() + 1)]


def test_the_eta_does_not_say_less_than_a_minute_while_nothing_moves(in_flight, reviewer_client):
    started_ago(in_flight, 600)
    progress = selectors.batch_progress(in_flight.page.batch)
    assert progress["stalled"] and progress["eta_seconds"] is None
    assert "no page has finished for 10 min" in progress["eta_text"]
    assert "taken over automatically 7 min after they started" in progress["eta_text"]
    page = reviewer_client.get(reverse("ocr:batch_detail", args=[in_flight.page.batch_id])).content.decode()
    assert "taken over automatically" in page
