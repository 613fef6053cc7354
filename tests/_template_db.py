"""One migrated template database per xdist run, copied into each worker's test database.

pytest-django migrates a test database in every xdist worker (~9 s each, all at once on few
cores). Here the controller makes a folder for the run and hands it to its workers
(`pytest_configure_node`); in it, whoever takes the lock first migrates a template database,
named by the run and by a hash of every migration file (a template from other migrations is never
reused): the controller starts a process for that (`main`) as the workers start, so the
migration runs while they collect; a worker that gets the lock before it migrates the template
itself. Every worker then copies the template into its own test database while holding the lock:

- SQLite: the template is a file; a worker's in-memory test database (the default) is filled
  with the sqlite3 backup API, a file test database (SQLITE_TEST_NAME) is a copy of the file.
- PostgreSQL: `CREATE DATABASE <worker's test db> TEMPLATE <template>` (nothing stays
  connected to the template, which PostgreSQL requires of a template being copied).

Then the worker does what Django's create_test_db does after `migrate` (serialization if a test
asks for serialized_rollback, createcachetable), so its database is what migrating would have
made: same schema, same rows of the data migrations, same name (tests/workers.py hands that name
to Celery workers and servers). Teardown is Django's. The controller drops the PostgreSQL
template and removes the folder when the run ends. Without xdist (`-n 0`, or a child pytest), with
--reuse-db, --nomigrations, another alias or another backend, or REALMATH_TEST_DB_TEMPLATE=0, the
setup is pytest-django's own (each worker migrates).
"""
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pytest

# pytest-django's own helpers for its django_db_setup, which this fixture replaces (4.14).
from pytest_django.fixtures import _disable_migrations, _get_databases_for_setup
from pytest_django.plugin import blocking_manager_key

FOLDER_KEY = "realmath_template_db_folder"
FOLDER = pytest.StashKey[Path]()
MIGRATING = pytest.StashKey[subprocess.Popen]()
VENDORS = ("sqlite", "postgresql")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """Controller: one folder for the run, handed to every worker, and a process that migrates the
    template there while the workers start and collect (a worker that gets the lock first
    migrates it instead)."""
    config = node.config
    if FOLDER not in config.stash:
        folder = config.stash[FOLDER] = Path(tempfile.mkdtemp(prefix="realmath-test-db-"))
        if wanted(config):
            with open(folder / "migrate.log", "w") as log:
                config.stash[MIGRATING] = subprocess.Popen(
                    [sys.executable, "-m", "tests._template_db", str(folder), node.workerinput["testrunuid"]],
                    cwd=config.rootpath, stdout=log, stderr=subprocess.STDOUT,
                )
    node.workerinput[FOLDER_KEY] = str(config.stash[FOLDER])


def wanted(config):
    return (os.environ.get("REALMATH_TEST_DB_TEMPLATE") != "0" and not config.getvalue("reuse_db")
            and not config.getvalue("nomigrations"))


def pytest_unconfigure(config):
    """Controller, after every worker has ended: drop the PostgreSQL templates, remove the folder."""
    folder = config.stash.get(FOLDER, None)
    if folder is None:
        return
    migrating = config.stash.get(MIGRATING, None)
    if migrating is not None and migrating.poll() is None:  # the run ended before it did
        migrating.terminate()
        migrating.wait(30)
    names = [path.read_text() for path in folder.glob("*.postgresql")]
    if names:
        from django.db import connections

        connection = connections["default"]
        with config.stash[blocking_manager_key].unblock(), connection.creation._nodb_cursor() as cursor:
            for name in names:
                cursor.execute(f"DROP DATABASE IF EXISTS {connection.ops.quote_name(name)}")
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def django_db_setup(
    request, django_test_environment, django_db_blocker, django_db_use_migrations, django_db_keepdb,
    django_db_createdb, django_db_modify_db_settings,
):
    """pytest-django's django_db_setup, with the test database copied from the run's template."""
    from django.db import connections
    from django.test.utils import setup_databases, teardown_databases

    aliases, serialized_aliases = _get_databases_for_setup(request.session.items)
    verbosity = request.config.option.verbose
    folder = getattr(request.config, "workerinput", {}).get(FOLDER_KEY)
    from_template = (folder and wanted(request.config) and not django_db_keepdb and set(aliases) == {"default"}
                     and connections["default"].vendor in VENDORS)
    if not django_db_use_migrations:
        _disable_migrations()
    with django_db_blocker.unblock():
        if from_template:
            db_cfg = [copy_of_template(connections["default"], Path(folder), request.config.workerinput["testrunuid"],
                                       "default" in serialized_aliases, verbosity)]
        else:
            db_cfg = setup_databases(verbosity=verbosity, interactive=False, aliases=aliases,
                                     serialized_aliases=serialized_aliases,
                                     keepdb=django_db_keepdb and not django_db_createdb)
    yield
    if not django_db_keepdb:
        with django_db_blocker.unblock():
            try:
                teardown_databases(db_cfg, verbosity=verbosity)
            except Exception as exc:  # noqa: BLE001
                request.node.warn(pytest.PytestWarning(f"Error when trying to teardown test databases: {exc!r}"))


def copy_of_template(connection, folder, run, serialize, verbosity):
    """The worker's test database made from the run's template (migrated here if no worker has
    yet); returns the (connection, old name, destroy) entry Django's teardown_databases takes."""
    from django.conf import settings
    from django.core.management import call_command

    old_name = connection.settings_dict["NAME"]
    test_name = connection.creation._get_test_db_name()
    with locked(folder / "template.lock"):
        template = ready_template(connection, folder, run, verbosity)
        if verbosity >= 1:
            connection.creation.log(f"Copying the migrated template into test database {test_name}...")
        copy = copy_postgresql if connection.vendor == "postgresql" else copy_sqlite
        copy(connection, template, test_name)
    # What create_test_db does after migrating.
    connection.close()
    settings.DATABASES[connection.alias]["NAME"] = test_name
    connection.settings_dict["NAME"] = test_name
    if connection.vendor == "sqlite" and connection.is_in_memory_db():
        connection.ensure_connection()  # the connection that keeps the in-memory database alive
        fill_in_memory(connection, template)
    if serialize:
        connection._test_serialized_contents = connection.creation.serialize_db_to_string()
    call_command("createcachetable", database=connection.alias)
    connection.ensure_connection()
    return connection, old_name, True


@contextmanager
def locked(path):
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def migrations_hash():
    """A hash of every installed app's migration files: another migration, another template."""
    from django.apps import apps

    digest = hashlib.sha256()
    for app in sorted(apps.get_app_configs(), key=lambda app: app.label):
        for path in sorted((Path(app.path) / "migrations").glob("*.py")):
            digest.update(f"{app.label}/{path.name}\0".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def ready_template(connection, folder, run, verbosity):
    """The template's name (a database name or a file path), migrated by the first caller (who
    holds the lock); a marker file says it is complete. `run` is the xdist run's id."""
    key = f"{migrations_hash()}_{run[:8]}".lower()
    ready = folder / f"template-{key}.ready"
    if ready.exists():
        return ready.read_text()
    if connection.vendor == "postgresql":
        base = connection.settings_dict["TEST"].get("NAME") or f"test_{connection.settings_dict['NAME']}"
        name = f"{base.rsplit('_gw', 1)[0][:40]}_tpl_{key}"
        (folder / f"template-{key}.postgresql").write_text(name)  # dropped by the controller, even half-made
    else:
        name = str(folder / f"template-{key}.sqlite3")
    migrate_template(connection, name, verbosity)
    ready.write_text(name)
    return name


def migrate_template(connection, name, verbosity):
    """create_test_db (drop, create, migrate) on the template's name; the connection is then
    closed and pointed back at where it was."""
    from django.conf import settings

    test_settings = connection.settings_dict["TEST"]
    old_name, old_test_name = connection.settings_dict["NAME"], test_settings.get("NAME")
    test_settings["NAME"] = name
    try:
        connection.creation.create_test_db(verbosity=verbosity, autoclobber=True, serialize=False, keepdb=False)
        if connection.vendor == "sqlite":
            with connection.cursor() as cursor:  # one self-contained file to copy
                cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                cursor.execute("PRAGMA journal_mode=DELETE")
    finally:
        connection.close()
        if connection.vendor == "postgresql":
            connection.close_pool()
        test_settings["NAME"] = old_test_name
        settings.DATABASES[connection.alias]["NAME"] = old_name
        connection.settings_dict["NAME"] = old_name


def copy_postgresql(connection, template, test_name):
    quote = connection.ops.quote_name
    with connection.creation._nodb_cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {quote(test_name)}")
        cursor.execute(f"CREATE DATABASE {quote(test_name)} TEMPLATE {quote(template)}")


def copy_sqlite(connection, template, test_name):
    """A file test database is a copy of the template file; an in-memory one is filled once the
    connection to it is open (fill_in_memory)."""
    if connection.creation.is_in_memory_db(test_name):
        return
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(test_name + suffix).unlink(missing_ok=True)
    shutil.copyfile(template, test_name)


def fill_in_memory(connection, template):
    import sqlite3

    source = sqlite3.connect(f"file:{template}?mode=ro", uri=True)
    try:
        source.backup(connection.connection)
    finally:
        source.close()


def main(folder, run):
    """The controller's process: migrate the run's template before any worker asks for it."""
    import django

    django.setup()
    from django.db import connections
    from django.test.utils import setup_test_environment

    setup_test_environment()  # as pytest-django's django_test_environment does in a worker
    connection = connections["default"]
    if connection.vendor in VENDORS:
        with locked(folder / "template.lock"):
            ready_template(connection, folder, run, verbosity=0)


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2])
