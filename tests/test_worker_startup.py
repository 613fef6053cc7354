"""The Celery worker's main process freezes what it imported and warmed up before its pool forks."""
import gc

from celery.signals import celeryd_after_setup

from config.celery import app


def test_the_startup_objects_are_frozen_once_the_worker_is_set_up():
    gc.unfreeze()
    assert gc.get_freeze_count() == 0
    try:
        celeryd_after_setup.send(sender="test@host", instance=None, conf=app.conf)
        # config.celery.freeze_startup_objects: everything alive now is out of the collector's reach.
        assert gc.get_freeze_count() > 10_000
    finally:
        gc.unfreeze()
