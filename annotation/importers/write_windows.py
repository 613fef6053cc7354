"""A large import in the worker, written in short transactions that can be undone.

SQLite has one writer at a time: an import in one transaction held the write lock for minutes,
and every label save, draft save and login meanwhile failed with "database is locked". In a
background job on SQLite an import is therefore written in write windows of about
IMPORT_BATCH_SECONDS, each its own transaction, with IMPORT_BATCH_PAUSE_SECONDS between them so
that waiting writers get their turn. (On PostgreSQL the worker runs the import in a thread of
lower CPU priority, IMPORT_NICE, services.run_import_job; not on SQLite, where a window holding the
write lock at a low priority makes every waiting save wait longer.)

It stays one all-or-nothing import:

- everything is checked before the first window (every line or record: fields, references,
  roles), so a window fails only for reasons outside the file (a killed worker, a full disk);
- each window notes what it wrote in its job (`ImportJob.written`), in the same transaction: the
  AUTOINCREMENT counters of every table before and after it (`sqlite_sequence`). While a window
  holds the write lock nobody else inserts, so the rows between the two counters are the
  window's own;
- if the import fails, the worker removes those rows (`undo`); if the worker died, the job goes
  stale (`services.fail_stale_jobs`) and a task removes them. A window that never committed left
  nothing and noted nothing.

While the job runs, what its committed windows wrote is visible (the job's page says the import
is running); a label saved meanwhile on an imported response is removed with it if the import
fails. On PostgreSQL, where writers do not block each other, a job keeps one transaction, paced the same
way (`Pacer`).

(A write window, not a batch: "batch" is a scan batch or the provider's Batch API,
docs/architecture.md's Glossary. The settings keep their names, IMPORT_BATCH_SECONDS and
IMPORT_BATCH_PAUSE_SECONDS, and their environment variables REALMATH_IMPORT_BATCH_*, for the
installations that set them.)
"""
import logging
import time
from contextlib import nullcontext

from django.apps import apps
from django.conf import settings
from django.db import connection, transaction
from django.db.models import AutoField, BigAutoField, ProtectedError, SmallAutoField

from ..models import ImportJob

logger = logging.getLogger(__name__)
AUTO = (AutoField, BigAutoField, SmallAutoField)
APPS = ("annotation", "grading", "ocr", "auth")


class JobAbandoned(Exception):
    """The job is no longer running (marked failed as stale): the worker must stop writing."""


def write_windows_needed():
    """Whether imports in the worker are written in write windows: on SQLite (one writer at a time)."""
    return connection.vendor == "sqlite"


def _tracked():
    """{table: model} of every model an import may insert into (those with an integer counter)."""
    tables = {}
    for label in APPS:
        for model in apps.get_app_config(label).get_models(include_auto_created=True):
            if isinstance(model._meta.pk, AUTO) and model is not ImportJob:
                tables[model._meta.db_table] = model
    return tables


def _counters():
    with connection.cursor() as cursor:
        cursor.execute("SELECT name, seq FROM sqlite_sequence")
        return dict(cursor.fetchall())


class Pacer:
    """The `writer` of a background import on PostgreSQL: one transaction (`transaction()`; writers
    do not block each other there). The worker runs it at a lower CPU priority (IMPORT_NICE); only
    where that is off (IMPORT_NICE = 0) does it pause IMPORT_BATCH_PAUSE_SECONDS after each
    IMPORT_BATCH_SECONDS of writing, so that the web server's requests get the CPU in between on a
    small machine. Nothing to undo: a failure rolls the one transaction back."""

    def __init__(self):
        self.seconds = settings.IMPORT_BATCH_SECONDS if not settings.IMPORT_NICE else float("inf")
        self.pause = settings.IMPORT_BATCH_PAUSE_SECONDS
        self.started = None

    def transaction(self):
        return transaction.atomic()

    def step(self):
        now = time.monotonic()
        if self.started is None:
            self.started = now
        elif now - self.started >= self.seconds:
            time.sleep(self.pause)
            self.started = time.monotonic()

    def finish(self):
        pass

    def fail(self, exc_type=None, exc=None, tb=None):
        pass  # the one transaction is rolled back as the exception leaves it


class WindowWriter:
    """Call `step()` before each unit of writes (a line, a batch of records); it opens a
    transaction, or commits the open one when it is older than IMPORT_BATCH_SECONDS and opens
    the next. `finish()` commits the last; `fail()` rolls back the open one and undoes the rest."""

    def __init__(self, job_id, attempt=None):
        self.job_id, self.attempt = job_id, attempt  # writes only while this attempt is the job's current one
        self.seconds = settings.IMPORT_BATCH_SECONDS
        self.pause = settings.IMPORT_BATCH_PAUSE_SECONDS
        self.tables = _tracked()
        self.written = {}
        self.atomic = None
        self.windows = 0

    def transaction(self):
        """Each batch is its own transaction (`step`): nothing around them."""
        return nullcontext()

    def step(self):
        if self.atomic is not None and time.monotonic() - self.started < self.seconds:
            return
        if self.atomic is not None:
            self._commit()
            time.sleep(self.pause)
        self._begin()

    def _begin(self):
        self.atomic = transaction.atomic()
        self.atomic.__enter__()
        # A write first, so that this transaction holds SQLite's write lock before the counters
        # are read; and a job given up meanwhile (stale) stops here.
        current = ImportJob.objects.filter(pk=self.job_id, status=ImportJob.Status.RUNNING)
        if self.attempt is not None:  # a worker only slow, whose job was given up and restarted, stops here
            current = current.filter(attempt=self.attempt)
        if not current.update(written=self.written):
            self.atomic.__exit__(JobAbandoned, JobAbandoned(), None)
            self.atomic = None
            raise JobAbandoned(f"import job {self.job_id} is no longer running")
        self.before = _counters()
        self.started = time.monotonic()

    def _commit(self):
        after = _counters()
        for table, seq in after.items():
            low = self.before.get(table, 0)
            if seq > low and table in self.tables:
                ranges = self.written.setdefault(table, [])
                if ranges and ranges[-1][1] == low:
                    ranges[-1][1] = seq  # adjacent to the previous batch's: one range
                else:
                    ranges.append([low, seq])  # rows low+1 .. seq
        ImportJob.objects.filter(pk=self.job_id).update(written=self.written)
        self.atomic.__exit__(None, None, None)
        self.atomic = None
        self.windows += 1

    def finish(self):
        if self.atomic is not None:
            self._commit()

    def fail(self, exc_type=None, exc=None, tb=None):
        if self.atomic is not None:
            self.atomic.__exit__(exc_type or RuntimeError, exc or RuntimeError(), tb)
            self.atomic = None
        if self.attempt is not None and not ImportJob.objects.filter(pk=self.job_id, attempt=self.attempt).exists():
            # The job was restarted (its worker looked dead): the job's `written` is the new
            # attempt's now; only this attempt's own rows go (most are gone already: the new
            # attempt removed what this one had noted before it started).
            undo(self.job_id, written=self.written)
            return
        undo(self.job_id)


def _order(models):
    """Models that refer to others first, so that deleting them frees the rows they protect."""
    done, ordered = set(), []

    def visit(model, path):
        if model in done or model in path:
            return
        path = path | {model}
        referrers = [rel.related_model for rel in model._meta.get_fields()
                     if rel.is_relation and rel.auto_created and not rel.concrete and rel.related_model in models]
        for referrer in referrers:
            visit(referrer, path)
        done.add(model)
        ordered.append(model)

    for model in models:
        visit(model, frozenset())
    return ordered


def undo(job_id, written=None):
    """Remove what a failed job's committed windows wrote (see the module's docstring); with
    `written` ({table: ranges}, one attempt's own), only those rows, and the job's note stays."""
    job = ImportJob.objects.filter(pk=job_id).first()
    if job is None or not (written if written is not None else job.written):
        return 0
    tables = _tracked()
    models = {tables[table]: ranges for table, ranges in (written if written is not None else job.written).items()
              if table in tables}
    removed = 0
    pending = _order(list(models))
    for _ in range(3):  # a row protected by one not yet removed goes in the next round
        left = []
        for model in pending:
            try:
                removed += _delete_ranges(model, models[model])
            except ProtectedError:
                left.append(model)
        pending = left
        if not pending:
            break
    for model in models:  # deleting wrote "-" history rows of rows that were never imported
        history = getattr(model, "history", None)
        if history is not None and hasattr(history, "model"):
            for low, high in models[model]:
                history.model.objects.filter(**{f"{model._meta.pk.attname}__gt": low,
                                                f"{model._meta.pk.attname}__lte": high}).delete()
    if written is None:
        ImportJob.objects.filter(pk=job_id).update(written={})
    logger.info("Import job %s: removed %s rows of its committed write windows", job_id, removed)
    return removed


def _delete_ranges(model, ranges, chunk=2000):
    """Delete the rows of `ranges`, highest first, in short transactions."""
    removed = 0
    pk = model._meta.pk.attname
    for low, high in ranges:
        top = high
        while top > low:
            bottom = max(low, top - chunk)
            with transaction.atomic():
                count, _ = model._base_manager.filter(**{f"{pk}__gt": bottom, f"{pk}__lte": top}).delete()
            removed += count
            top = bottom
    return removed
