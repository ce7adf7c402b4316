"""Parallel runs (pytest-xdist, ``-n 2``): every worker process gets services of its own.

PostgreSQL: pytest-django gives each worker its own test database (``test_<name>_gw0``, ``..._gw1``), and the
Celery workers a test starts connect to that one (``tests.celery_helpers.worker_database_url``).

Redis: a test's Redis databases are numbered by the test itself (the worker tests' brokers, ``DB = 13``), and
every test empties the cache database (``tests/conftest.py``), so two pytest workers on one Redis server would
empty and consume each other's queues. The first worker keeps the suite's ``REDIS_URL``; each other worker
gets a private ``redis-server`` on a free port for the length of the run, with the same database numbers, and
every process it starts (Celery workers, manage.py) inherits that ``REDIS_URL``.

Registered for the whole suite in ``tests/conftest.py`` (``pytest_plugins``); the hook runs in the controlling
pytest process before the worker processes start, and sets their environment through execnet.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

REDIS_SERVER = "redis-server"
START_TIMEOUT_S = 10.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _answers_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as connection:
            connection.sendall(b"PING\r\n")
            return connection.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class PrivateRedis:
    """A ``redis-server`` on 127.0.0.1 and a free port, in memory only; :meth:`stop` ends it."""

    def __init__(self) -> None:
        executable = shutil.which(REDIS_SERVER)
        if executable is None:
            raise pytest.UsageError(
                f"parallel test runs give each worker its own Redis, and {REDIS_SERVER} is not on PATH: "
                "install it (make services) or run without -n"
            )
        self.port = _free_port()
        self.log_path = Path(tempfile.mkstemp(prefix=f"factlab-test-redis-{self.port}-", suffix=".log")[1])
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [executable, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _answers_ping(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                log = self.log_path.read_text(errors="replace")[-2000:]
                self.stop()
                raise pytest.UsageError(f"the private Redis of a test worker did not answer on port {self.port}:\n{log}")
            time.sleep(0.05)

    def url_like(self, url: str) -> str:
        """``url`` with this server's host and port (same scheme, password-free, same database number)."""
        parts = urlsplit(url)
        return urlunsplit((parts.scheme, f"127.0.0.1:{self.port}", parts.path, parts.query, parts.fragment))

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.log_path.unlink(missing_ok=True)  # read only when the server does not start (the error quotes it)


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: without the plugin (-p no:xdist) there is nothing to do
def pytest_xdist_setupnodes(config: pytest.Config, specs) -> None:
    suite_redis = os.environ.get("REDIS_URL", "")
    if not suite_redis:
        return  # no Redis (SQLite and eager Celery): each worker's cache is its own process's memory
    shared = [name for name in ("CELERY_BROKER_URL", "CELERY_RESULT_BACKEND", "FACTLAB_CACHE_URL") if os.environ.get(name)]
    if shared:
        raise pytest.UsageError(f"{', '.join(shared)} would point every test worker at the same Redis: unset it (REDIS_URL is enough)")
    for spec in specs[1:]:
        server = PrivateRedis()
        config.add_cleanup(server.stop)
        spec.env["REDIS_URL"] = server.url_like(suite_redis)


def _worksteal_parts(count: int, workers: int) -> list[int]:
    """How many tests of a collection of ``count`` pytest-xdist's worksteal scheduler first gives each worker, in
    order: contiguous parts, each the pending tests divided by the workers still without one."""
    sizes = []
    for index in range(workers):
        sizes.append(count // (workers - index))
        count -= sizes[-1]
    return sizes


@pytest.hookimpl(trylast=True)  # after pytest-django's own ordering
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``long`` (a minute or more) start first, one after another at the head of each worker's part
    (but transactional ones: see :func:`_transactional`).

    Worksteal gives each worker a contiguous part of the collection and lets an idle worker take the tail of a
    busy one's queue, so a test queued late runs late: a long test at the end of a part would leave the other
    worker idle for its length. Each worker's part of the collection starts with its share of the long tests,
    longest (``long(seconds=...)``) first; the other tests keep their order. Every worker collects the same
    order, which xdist requires."""
    workers = getattr(config, "workerinput", {}).get("workercount", 0)
    long = sorted((item for item in items if item.get_closest_marker("long") and not _transactional(item)),
                  key=_expected_seconds, reverse=True)
    if workers < 2 or not long:
        return
    queues: list[list[pytest.Item]] = [[] for _ in range(workers)]
    loads = [0.0] * workers
    for item in long:  # longest first, each to the least loaded worker
        least = loads.index(min(loads))
        queues[least].append(item)
        loads[least] += _expected_seconds(item)
    # The FRANK template (tests/frank_template.py) is built by the first worker that needs it while the others
    # wait: only the first part starts with a test that needs it, the others with their other long tests.
    for queue in queues[1:]:
        queue.sort(key=lambda item: "frank_benchmark" in getattr(item, "fixturenames", ()))
    chosen = set(long)
    rest = iter([item for item in items if item not in chosen])
    ordered = []
    for queue, size in zip(queues, _worksteal_parts(len(items), workers)):
        ordered += queue
        ordered += [item for _, item in zip(range(size - len(queue)), rest)]
    ordered += list(rest)
    items[:] = ordered


def _transactional(item: pytest.Item) -> bool:
    """A test whose database changes are committed (and flushed after it, migrations' rows included): pytest-django
    runs those after the other database tests, as Django does, and a long one keeps its place there."""
    from pytest_django.fixtures import validate_django_db

    marker = item.get_closest_marker("django_db")
    if marker is not None and any(validate_django_db(marker)[:2]):  # transaction, reset_sequences
        return True
    return bool({"transactional_db", "live_server"} & set(getattr(item, "fixturenames", ())))


def _expected_seconds(item: pytest.Item) -> float:
    return float(item.get_closest_marker("long").kwargs.get("seconds", 60))
