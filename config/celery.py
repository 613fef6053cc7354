"""Celery application. The broker comes from settings (CELERY_BROKER_URL)."""
import fcntl
import gc
import logging
import os
import signal

from billiard.process import active_children
from celery import Celery
from celery.platforms import set_pdeathsig
from celery.signals import (
    beat_embedded_init,
    beat_init,
    celeryd_after_setup,
    worker_process_init,
    worker_process_shutdown,
    worker_shutting_down,
)
from django.conf import settings

import llm

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("realmath")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
app.autodiscover_tasks(["annotation.export", "annotation.importers", "grading.judges", "grading.generation", "grading.runs", "grading.review", "studies",
                        "studies.geometry"])  # tasks of sub-packages


@celeryd_after_setup.connect
def freeze_startup_objects(**kwargs):
    """In the worker's main process, once everything is imported and warmed up (``worker_init``)
    and before the pool forks: move every object so far out of the garbage collector's reach.

    Django, the `openai` client and their imports are several hundred thousand objects that live
    as long as the process. Left tracked, each full collection in a pool process walks all of
    them: 0.1-0.2 s with the process's every thread stopped, long enough to let the endpoint's
    slots go idle in the middle of a judge run (docs/judges.md, "Fifth round"). Frozen, they
    are never walked, and a child's pages shared with the parent stay shared. See `gc.freeze`.
    """
    gc.freeze()


# A warm shutdown must not wait out rate-limit pauses (a 429's Retry-After, an endpoint's
# cooldown, a back-off): every wait of an LLM call wakes and the call sends nothing more
# (llm.cancel.shut_down; the work stays claimed and is taken over later, grading/runs/engine.py).
# The main process tells its pool processes with SIGURG, whose default action is to be ignored:
# a pool process still starting, without the handler, is not killed by it.
SHUTDOWN_SIGNAL = signal.SIGURG


@worker_process_init.connect
def listen_for_shutdown(**kwargs):
    """In each pool process: the main process's shutdown signal stops this process's LLM waits."""
    signal.signal(SHUTDOWN_SIGNAL, lambda signum, frame: llm.shut_down())


@worker_process_shutdown.connect
def stop_llm_waits_in_pool_process(**kwargs):
    """A pool process that stops (connected before the judges' tails are waited for, so their
    calls waiting out a 429 end at once instead of after it)."""
    llm.shut_down()


@worker_shutting_down.connect
def stop_llm_waits(**kwargs):
    """The worker's main process begins a shutdown: its own LLM waits stop (solo and threads
    pools run tasks here), and so do those of its pool processes, running tasks included."""
    llm.shut_down()
    for child in active_children():
        try:
            os.kill(child.pid, SHUTDOWN_SIGNAL)
        except (ProcessLookupError, TypeError):  # gone already, or never started
            pass


# One beat, whatever dies. A second beat would send every periodic task twice (and a beat
# orphaned by a worker killed with SIGKILL kept sending for ever while the restarted worker ran
# its own). Each beat takes an exclusive lock on BEAT_LOCK_FILE when it starts and holds it while
# it lives (the kernel lets go of it when the process dies, however it dies); a beat that finds
# it taken refuses to start. A beat embedded in a worker (`-B`) also dies with that worker's main
# process (PR_SET_PDEATHSIG): it is never orphaned.
logger = logging.getLogger(__name__)
_beat_lock = []  # the open, locked file: kept for the life of the beat process


@beat_init.connect
def one_beat(**kwargs):
    path = settings.BEAT_LOCK_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "?"
        handle.close()
        logger.error("Another celery beat (pid %s) holds %s: this one does not start (one beat per installation).",
                     holder, path)
        raise SystemExit(1) from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"{os.getpid()}\n")
    handle.flush()
    _beat_lock.append(handle)


@beat_embedded_init.connect
def die_with_the_worker(**kwargs):
    """A beat run inside a worker (`-B`) ends when the worker's main process does, even by SIGKILL."""
    set_pdeathsig("SIGKILL")
