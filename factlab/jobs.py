"""What every background job shares: dispatch that survives a broker outage, and "is anyone running it?".

* :func:`send_after_commit` queues a task once the caller's transaction commits. If the broker cannot be
  reached the error is logged, not raised: the job's row stays "not dispatched" and the beat schedule
  (``factlab.celery``) sends it again when the broker is back. A request never fails after its data
  was committed.
* :func:`broker_available` lets a view refuse work that cannot start without the broker with a 503
  before it stores anything (:class:`BrokerUnavailable`).
* :func:`running_lock` holds a PostgreSQL session advisory lock while a job runs. The database drops it
  when the worker's connection dies, so :func:`is_running` tells a live run from one whose worker was
  killed, within seconds and whatever the broker's visibility timeout (a file lock without PostgreSQL).
* :func:`cancel_checkpoint` lets a long job stop within about a second of being cancelled: it is called
  between small steps (a document, a slice of summaries) and asks the database at most once a second.
"""
from __future__ import annotations

import contextlib
import fcntl
import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from django.db import connection, transaction

logger = logging.getLogger("factlab.jobs")

# Advisory-lock namespaces (first key of pg_try_advisory_lock(int, int)).
IMPORT_JOB_LOCK = 1601
SCORING_CHUNK_LOCK = 1602
PAGE_PREPARATION_LOCK = 1603
LABEL_REFIT_LOCK = 1604
# Not a job's: submissions of one item take turns adding it to the pairs of workers who share it.
ITEM_SUBMISSIONS_LOCK = 1605


class JobCancelled(Exception):
    """Raised by a :func:`cancel_checkpoint` once the job it watches was cancelled."""


def cancel_checkpoint(cancelled: Callable[[], bool], *, every: float = 1.0) -> Callable[[], None]:
    """A function to call between the small steps of a long job; it raises :class:`JobCancelled` once
    ``cancelled()`` is true. ``cancelled`` (a query) runs at most once per ``every`` seconds, so the job can
    call the checkpoint after every document and still stop within about ``every`` seconds of a cancel."""
    last = -every

    def checkpoint() -> None:
        nonlocal last
        now = time.monotonic()
        if now - last < every:
            return
        last = now
        if cancelled():
            raise JobCancelled()

    return checkpoint


class BrokerUnavailable(Exception):
    """The task broker (Redis) cannot be reached; the API answers 503 with this message."""

    default_message = "The task queue (Redis) cannot be reached, so this job cannot be started; nothing was stored. Please try again in a minute."

    def __init__(self, message: str | None = None):
        super().__init__(message or self.default_message)


def _eager() -> bool:
    from factlab.celery import app

    return bool(app.conf.task_always_eager)


def broker_available(timeout: float = 2.0) -> bool:
    """True when the broker answers (always true in eager mode, which needs none)."""
    if _eager():
        return True
    from factlab.celery import app

    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, interval_start=0, interval_step=0, timeout=timeout)
        return True
    except Exception as exc:  # kombu raises OperationalError, redis-py its ConnectionError
        logger.warning("task broker unreachable: %s", exc)
        return False


def require_broker() -> None:
    if not broker_available():
        raise BrokerUnavailable()


def task_named(name: str):
    """The registered Celery task ``name``. Services queue tasks by name: the task modules import the
    services, so a service importing a task module would close an import cycle."""
    from factlab.celery import app

    if name not in app.tasks:
        app.loader.import_default_modules()  # autodiscovery: a web process has not imported the task modules yet
    return app.tasks[name]


def send_after_commit(send: Callable[[], None], *, what: str, on_sent: Callable[[], None] | None = None) -> None:
    """Run ``send`` (which publishes task messages) after the current transaction commits.

    A broker error is logged as a warning and swallowed; ``on_sent`` runs only after a successful
    publish (it records that the message reached the broker). In eager mode ``send`` runs at once,
    inside the transaction, so the task sees the caller's rows.
    """

    def guarded() -> None:
        try:
            send()
        except Exception as exc:
            if _eager():
                raise
            logger.warning("could not queue %s (the beat schedule will send it again): %s", what, exc)
            return
        if on_sent is not None:
            on_sent()

    if _eager():
        guarded()
    else:
        transaction.on_commit(guarded)


def _postgres() -> bool:
    return connection.vendor == "postgresql"


@contextlib.contextmanager
def running_lock(namespace: int, key: int) -> Iterator[bool]:
    """Hold the lock (namespace, key) while the block runs; yields False if another process holds it.

    PostgreSQL: a session advisory lock. Elsewhere (SQLite in the demo, whose worker runs on the same
    machine): an ``flock`` on a file under ``FACTLAB_LOCK_DIR``; the kernel drops both when the process dies.
    """
    if not _postgres():
        with _file_lock(namespace, key) as acquired:
            yield acquired
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [namespace, key])
        acquired = bool(cursor.fetchone()[0])
    try:
        yield acquired
    finally:
        if acquired:
            with contextlib.suppress(Exception), connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [namespace, key])


def is_running(namespace: int, key: int) -> bool:
    """Whether some live process holds the lock (namespace, key)."""
    if not _postgres():
        with _file_lock(namespace, key) as acquired:
            return not acquired
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND classid = %s AND objid = %s AND objsubid = 2 AND granted)",
            [namespace, key],
        )
        return bool(cursor.fetchone()[0])


def _lock_path(namespace: int, key: int) -> Path:
    from django.conf import settings

    folder = Path(getattr(settings, "FACTLAB_LOCK_DIR", "") or Path(settings.MEDIA_ROOT) / ".locks")
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{namespace}-{key}.lock"


@contextlib.contextmanager
def _file_lock(namespace: int, key: int) -> Iterator[bool]:
    # flock locks belong to the open file, so a second open in this same process is refused too.
    with _lock_path(namespace, key).open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
