"""Celery tasks of the ocr app: thin wrappers around services, and the worker processes' warm-up.

The services import this module to queue its tasks, so each task imports them inside its body."""
import logging
import threading

from celery import current_app, shared_task
from celery.signals import worker_process_init, worker_ready
from django.conf import settings

logger = logging.getLogger(__name__)


@shared_task(name="ocr.run_ocr", acks_late=True)
def run_ocr_task(run_id, takeovers=0):
    """OCR one page with one engine (one task per page, so a batch spreads over the workers)."""
    from . import services  # cycle: services queue this task

    run = services.perform_ocr_run(run_id, takeovers=takeovers)
    return None if run is None else run.status


@shared_task(name="ocr.watch_ocr_run", ignore_result=True)
def watch_ocr_run_task(run_id, takeovers=0):
    """The watchdog of a page in flight: queued again once its worker died (services.watch_ocr_run)."""
    from . import services  # cycle: services queue this task

    return services.watch_ocr_run(run_id, takeovers)


@shared_task(name="ocr.watch_running_ocr", ignore_result=True)
def watch_running_ocr_task():
    from . import services  # cycle: services queue this task

    return services.watch_running_ocr()


@worker_ready.connect
def watch_pages_after_start(**kwargs):
    """A worker that (re)starts watches every page in flight (their watchdog may have died too)."""
    watch_running_ocr_task.delay()


@shared_task(name="ocr.render_page", acks_late=True)
def render_page_task(page_id):
    """Render a page that is not OCR'd (a packet's cover page) for its thumbnail."""
    from . import packets  # cycle: packets queue this task

    page = packets.render_without_ocr(page_id)
    return None if page is None else page.status


@worker_process_init.connect
def warm_up_in_background(**kwargs):
    """Each new process of a worker that takes OCR tasks loads the default engine and runs it once.

    In a thread: a child must report itself up within seconds of starting; a page task that
    arrives meanwhile waits for the engine (RapidOCR runs one call at a time per process).
    """
    if _takes_ocr_tasks():
        threading.Thread(target=_warm_up, name="ocr-warm-up", daemon=True).start()


def _takes_ocr_tasks():
    """Whether this worker reads the queue page tasks go to (a judges-only worker need not warm up)."""
    consumed = set(current_app.amqp.queues.consume_from or ())
    wanted = settings.OCR_QUEUE or current_app.conf.task_default_queue
    return not consumed or wanted in consumed


def _warm_up():
    # Not at a lower priority: a page task that arrives meanwhile waits for the engine lock the
    # warm-up holds, so a slowed warm-up would only slow that page.
    from . import services  # cycle: services queue this module's tasks

    try:
        warmed = services.warm_up_engines()
    except Exception:  # noqa: BLE001 - a warm-up failure must not kill the worker; the page task reports it
        logger.exception("OCR warm-up failed")
        return
    if warmed:
        logger.info("OCR engines warm: %s in %.1f s", *warmed)


@shared_task(name="ocr.delete_expired_class_uploads", ignore_result=True)
def delete_expired_class_uploads_task():
    """Hourly (CELERY_BEAT_SCHEDULE): refused class uploads kept past their expiry are deleted."""
    from . import class_uploads  # cycle: class_uploads reach the services, which queue this module's tasks

    return class_uploads.delete_expired()
