"""Real Celery workers for tests: start a worker subprocess on a Redis database, point this process's
producer at the same broker, and always stop the worker again.

Usage (in a ``transactional_db`` test marked ``celery_worker``, so the worker sees committed rows)::

    with broker(redis_db=3) as url, CeleryWorker(broker_url=url) as worker:
        job = submit_scoring_job(...)
        wait_for(lambda: job_finished(job), timeout=120, worker=worker)

Also holds the test-only scorers the worker tests register through ``FACTLAB_EXTRA_SCORERS``
(the worker imports them from this module).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Self

import kombu.pools

from metrics_service.scorers.base import Scorer

REPO_ROOT = Path(__file__).resolve().parent.parent


def _redis_host() -> str:
    """host:port of the suite's Redis (``REDIS_URL``'s), so parallel runs can each use a Redis of their own."""
    from urllib.parse import urlsplit

    parts = urlsplit(os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0")
    return f"{parts.hostname or '127.0.0.1'}:{parts.port or 6379}"


REDIS_HOST = _redis_host()


def redis_url(db: int) -> str:
    return f"redis://{REDIS_HOST}/{db}"


def worker_database_url() -> str:
    """A DATABASE_URL naming the database this test process uses (pytest-django's ``test_...`` one)."""
    from django.db import connection

    s = connection.settings_dict
    assert connection.vendor == "postgresql", (
        "worker tests need PostgreSQL (a worker subprocess cannot see an SQLite test database): "
        "set DATABASE_URL=postgres://postgres@127.0.0.1:5432/factlab"
    )
    auth = s["USER"] + (f":{s['PASSWORD']}" if s.get("PASSWORD") else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


def _reset_producer_pool(app) -> None:
    # Celery caches its broker connection pool; drop it so the next send uses the new broker_url.
    if app._pool is not None:
        app._pool.force_close_all()
    app._pool = None
    if "amqp" in app.__dict__:
        app.amqp._producer_pool = None
    # kombu keeps producer pools per connection URL: a closed one would be handed out again to a later
    # test on the same Redis database ("Acquire on closed pool").
    kombu.pools.reset()


@contextmanager
def broker(redis_db: int) -> Iterator[str]:
    """Send this process's tasks to ``redis://<REDIS_HOST>/<redis_db>`` (purged first), then restore."""
    import redis

    from factlab.celery import app

    url = redis_url(redis_db)
    client = redis.Redis.from_url(url, socket_connect_timeout=3)
    try:
        client.ping()
    except redis.exceptions.ConnectionError as exc:
        raise AssertionError(f"the worker tests need Redis on {REDIS_HOST} ({exc})") from exc
    client.flushdb()  # leftovers of an earlier run (queued or unacked chunks) must not reach this worker
    previous = app.conf.broker_url, app.conf.task_always_eager
    app.conf.broker_url = url
    app.conf.task_always_eager = False
    _reset_producer_pool(app)
    try:
        yield url
    finally:
        app.conf.broker_url, app.conf.task_always_eager = previous
        _reset_producer_pool(app)
        client.flushdb()
        client.close()


class CeleryWorker:
    """A ``celery -A factlab worker`` subprocess (solo pool) on ``broker_url`` and the test database.

    ``pool="prefork"`` runs its task in a child process, as production's workers do (time limits need it).

    ``env`` adds environment variables (e.g. ``CELERY_VISIBILITY_TIMEOUT``). Leaving the ``with``
    block terminates the worker (then kills it); :meth:`kill` sends SIGKILL at once, as a crash would.
    """

    def __init__(
        self,
        *,
        broker_url: str,
        database_url: str | None = None,
        queues: Sequence[str] = ("interactive", "reports", "cpu", "gpu"),
        env: dict[str, str] | None = None,
        ready_timeout: float = 120.0,  # a worker loads the spaCy pipelines before it is ready (seconds; more when busy)
        pool: str = "solo",
    ):
        self.broker_url = broker_url
        self.database_url = database_url or worker_database_url()
        self.queues = ",".join(queues)
        self.extra_env = env or {}
        self.ready_timeout = ready_timeout
        self.pool = pool
        self.process: subprocess.Popen | None = None
        self.log_path = Path(tempfile.mkstemp(prefix="celery-worker-", suffix=".log")[1])

    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CELERY_", "PYTEST_"))}
        env.update(
            DJANGO_SETTINGS_MODULE="factlab.settings",
            DATABASE_URL=self.database_url,
            DB_CONN_MAX_AGE="0",
            REDIS_URL=self.broker_url,
            CELERY_BROKER_URL=self.broker_url,
            CELERY_RESULT_BACKEND=self.broker_url,
            CELERY_TASK_ALWAYS_EAGER="0",
            CELERY_SKIP_CHECKS="1",  # system checks are the suite's business; the worker starts faster without
            PYTHONUNBUFFERED="1",
        )
        # The worker shares this process's cache, as web and workers share one Redis in production: a report a
        # worker computes is read from the cache by the web side (else each would derive it from its broker db).
        from django.conf import settings

        if settings.CACHE_URL:
            env["FACTLAB_CACHE_URL"] = settings.CACHE_URL
        env.update(self.extra_env)
        return env

    def start(self) -> Self:
        command = [
            sys.executable, "-m", "celery", "-A", "factlab", "worker", "-Q", self.queues, f"--pool={self.pool}",
            "--concurrency=1", "-l", "info", "-n", f"test-{uuid.uuid4().hex[:8]}@%h",
            "--without-gossip", "--without-mingle", "--without-heartbeat",
        ]
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                command, cwd=REPO_ROOT, env=self.environment(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        deadline = time.monotonic() + self.ready_timeout
        while "ready." not in self.log():
            if self.process.poll() is not None:
                raise AssertionError(f"the Celery worker exited with {self.process.returncode}:\n{self.log()[-4000:]}")
            if time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f"the Celery worker was not ready after {self.ready_timeout:g} s:\n{self.log()[-4000:]}")
            time.sleep(0.2)
        return self

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def kill(self) -> None:
        """SIGKILL: no cleanup, no acknowledgement (a crashed or OOM-killed worker)."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self, timeout: float = 15.0) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()


def wait_for(condition: Callable[[], bool], *, timeout: float, what: str, workers: Sequence[CeleryWorker] = (), interval: float = 0.25) -> None:
    """Poll ``condition`` until true; on timeout fail with the workers' log tails."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            logs = "\n".join(f"--- worker log {w.log_path}:\n{w.log()[-3000:]}" for w in workers)
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}\n{logs}")
        time.sleep(interval)


# --------------------------------------------------------------------------- test-only scorers


class WordCountScorer(Scorer):
    """Reference-free word count, plus word overlap with the reference when one is given."""

    name = "test_words"
    output_names = ("test_words", "test_ref_overlap")

    def score(self, documents, summaries, references=None):
        self._check_lengths(documents, summaries, references)
        out = {"test_words": [float(len(s.split())) for s in summaries]}
        if references is not None:
            out["test_ref_overlap"] = [float(len(set(s.split()) & set(r.split()))) for s, r in zip(summaries, references)]
        return out


class SleepyScorer(Scorer):
    """Counts its calls in ``state_dir``; on call number ``sleep_on_call`` it writes ``sleeping`` and sleeps.

    Deterministic "slow chunk" for the killed-worker test: with a solo worker, the N-th chunk is the slow
    one, and after a restart later calls (the retried chunk included) are fast.
    """

    name = "test_sleepy"
    output_names = ("test_sleepy_chars",)

    def score(self, documents, summaries, references=None):
        self._check_lengths(documents, summaries, None)
        state = Path(self.config["state_dir"])
        calls = state / "calls"
        with calls.open("a") as handle:
            handle.write(f"{os.getpid()}\n")
        if len(calls.read_text().splitlines()) == int(self.config.get("sleep_on_call", 1)):
            (state / "sleeping").write_text(str(os.getpid()))
            time.sleep(float(self.config.get("seconds", 60)))
        return {"test_sleepy_chars": [float(len(s)) for s in summaries]}


class SlowScorer(Scorer):
    """Takes ``seconds_per_summary`` per summary it is given, like a model scoring one summary after another."""

    name = "test_slow"
    output_names = ("test_slow_chars",)

    def score(self, documents, summaries, references=None):
        self._check_lengths(documents, summaries, None)
        time.sleep(float(self.config.get("seconds_per_summary", 0.25)) * len(summaries))
        return {"test_slow_chars": [float(len(s)) for s in summaries]}


TEST_SCORERS = {
    "test_words": "tests.celery_helpers:WordCountScorer",
    "test_sleepy": "tests.celery_helpers:SleepyScorer",
    "test_slow": "tests.celery_helpers:SlowScorer",
}
EXTRA_SCORERS_ENV = ",".join(f"{name}={target}" for name, target in TEST_SCORERS.items())
