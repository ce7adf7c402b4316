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
