"""The whole FRANK benchmark imported and scored once per test run, in a template database.

Importing FRANK (499 articles, 2246 summaries, their traps and gold) and storing ROUGE and BLEU of every
summary takes about a minute, and the report, dashboard and corpus tests all start from that same state. On
PostgreSQL it is built once per run into a template database; each pytest process (each xdist worker) clones
it once into a database of its own (``CREATE DATABASE ... TEMPLATE``), and a test that asks for
:func:`frank_benchmark` runs on that copy inside a transaction rolled back after it, like any ``django_db``
test: every such test starts from the same imported state, and no other test sees it.

- The template starts as a copy of the freshly migrated test database, taken right after pytest-django created
  it (:func:`seed`, called by ``django_db_setup`` in ``tests/conftest.py``): a later copy would carry whatever
  a transactional test's flush leaves behind, and PostgreSQL copies a database only while nobody is connected
  to it, which a live server's thread may be.
- The first process that needs the benchmark imports it into the template, under a lock the xdist workers
  share; a process that needs it meanwhile waits for it, then clones it.
- The import runs as in a test: in one transaction, with Celery eager and the suite's import settings; what
  it would do once committed (queue the figures' computation for a worker) is dropped, as a test's rollback
  drops it.
- Without PostgreSQL (the SQLite fallback) each test imports and scores the benchmark itself.

Registered for the whole suite in ``tests/conftest.py`` (``pytest_plugins``).
"""
from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

#: The campaign the template holds.
SLUG = "frank-report"
_SEEDED, _BUILT = "frank-template.seeded", "frank-template.built"


def _run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of this run that every xdist worker shares (the parent of the workers' own ones)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@contextlib.contextmanager
def _run_lock(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[Path]:
    """An exclusive lock of this run's workers (seeding and building have one each: a worker seeding its new
    database does not wait for another's minute of building)."""
    folder = _run_dir(tmp_path_factory)
    with (folder / f"frank-template-{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield folder
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _template_of(test_database: str) -> str:
    """The run's template: named after the test database without the xdist worker's suffix."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    base = test_database.removesuffix(f"_{worker}") if worker else test_database
    return f"{base}_frank_template"


def _admin(settings_dict: dict):
    """A connection to the server's maintenance database, for CREATE and DROP DATABASE."""
    import psycopg

    return psycopg.connect(
        dbname="postgres", user=settings_dict.get("USER") or None, password=settings_dict.get("PASSWORD") or None,
        host=settings_dict.get("HOST") or None, port=settings_dict.get("PORT") or None, autocommit=True,
    )


def _execute(settings_dict: dict, statement: str, *names: str) -> None:
    from psycopg import sql

    with _admin(settings_dict) as admin:
        admin.execute(sql.SQL(statement).format(*(sql.Identifier(name) for name in names)))


def _drop(settings_dict: dict, name: str) -> None:
    _execute(settings_dict, "DROP DATABASE IF EXISTS {} WITH (FORCE)", name)


def _copy(settings_dict: dict, source: str, target: str) -> None:
    _drop(settings_dict, target)
    _execute(settings_dict, "CREATE DATABASE {} TEMPLATE {}", target, source)


def _switch(name: str) -> str:
    """Point Django's default connection at database ``name``; returns the one it used."""
    from django.db import connection

    if connection.in_atomic_block:
        raise pytest.UsageError(
            "frank_benchmark switches the test's database before its transaction starts: "
            "a test that asks for it must not carry the django_db mark (the fixture gives it database access)"
        )
    previous = connection.settings_dict["NAME"]
    connection.close()
    connection.settings_dict["NAME"] = name
    return previous


def seed(django_db_blocker, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Copy the freshly migrated test database into the run's template (once per run, by the first process)."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    with _run_lock(tmp_path_factory, "seed") as folder:
        if (folder / _SEEDED).exists():
            return
        with django_db_blocker.unblock():
            connection.close()  # nobody may be connected to the database copied
        source = connection.settings_dict["NAME"]
        _copy(connection.settings_dict, source, _template_of(source))
        (folder / _SEEDED).write_text(_template_of(source))


def _build(template: str, django_db_blocker) -> None:
    """Import and score FRANK into the template as a test would, and commit it."""
    from django.db import connection, transaction
    from django.test.utils import override_settings

    from factlab.celery import app
    from tests.conftest import FRANK_DIR
    from tests.test_report_support import frank_campaign

    eager = app.conf.task_always_eager, app.conf.task_eager_propagates
    app.conf.task_always_eager = app.conf.task_eager_propagates = True
    with django_db_blocker.unblock():
        previous = _switch(template)
        try:
            with override_settings(FACTLAB_PREPARE_PAGES_AFTER_IMPORT=False), transaction.atomic():
                frank_campaign(FRANK_DIR, SLUG)
                # What the import does once committed (the figures' job) never runs in a test, which is rolled back.
                connection.run_on_commit.clear()
        finally:
            connection.close()
            connection.settings_dict["NAME"] = previous
            app.conf.task_always_eager, app.conf.task_eager_propagates = eager


@pytest.fixture(scope="session")
def frank_database(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[str | None]:
    """This process's copy of the template (built first if no process has yet); None without PostgreSQL."""
    from django.db import connection

    if connection.vendor != "postgresql":
        yield None
        return
    own = connection.settings_dict["NAME"]
    template, copy = _template_of(own), f"{own}_frank"
    with _run_lock(tmp_path_factory, "build") as folder:
        if not (folder / _SEEDED).exists():
            raise pytest.UsageError("the FRANK template is seeded by django_db_setup (tests/conftest.py), which did not run")
        if not (folder / _BUILT).exists():
            _build(template, django_db_blocker)
            (folder / _BUILT).write_text(template)
        _copy(connection.settings_dict, template, copy)
    yield copy
    _drop(connection.settings_dict, copy)


@pytest.fixture
def frank_benchmark(request, frank_database, django_db_blocker):
    """The whole FRANK benchmark imported, with the ROUGE and BLEU of every summary stored (the campaign
    ``frank-report``), in this test's own transaction; gives the test database access like ``db``."""
    from annotate.models import Campaign

    if frank_database is None:
        from tests.conftest import FRANK_DIR
        from tests.test_report_support import frank_campaign

        request.getfixturevalue("db")
        return frank_campaign(FRANK_DIR, SLUG)
    with django_db_blocker.unblock():
        previous = _switch(frank_database)

    def switch_back() -> None:
        with django_db_blocker.unblock():
            _switch(previous)

    # Added to the test before ``db`` is set up, so it runs after ``db`` has rolled the test back.
    request.node.addfinalizer(switch_back)
    request.getfixturevalue("db")
    return Campaign.objects.get(slug=SLUG)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """pytest-django creates the test database only for a run with a test that asks for ``db`` (or carries the
    mark) by name; ``frank_benchmark`` asks for it only once the connection is switched. Named last, it is
    already set up when pytest reaches it."""
    for item in items:
        names = getattr(item, "fixturenames", [])
        if "frank_benchmark" in names and "db" not in names:
            names.append("db")


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The controlling process drops the run's template once every worker is done with it."""
    if hasattr(session.config, "workerinput"):
        return
    factory = session.config._tmp_path_factory
    seeded = factory.getbasetemp() / _SEEDED
    if seeded.exists():
        from django.conf import settings

        _drop(settings.DATABASES["default"], seeded.read_text())
        seeded.unlink()
