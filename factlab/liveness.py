"""Workers that stop consuming are found and replaced; workers asked to stop do stop.

A known kombu failure (seen after a Redis restart) leaves a worker alive and answering pings while it no
longer takes messages from its queues, so a ping is no liveness check. Instead a thread in each worker's
main process (started when the worker is ready, :func:`start_watchdog`) looks every few seconds at the
next message of each queue the worker was started for (the tail of its Redis list). A message that stays
next in line for ``FACTLAB_WORKER_STUCK_SECONDS`` while the worker had a free pool slot all along is one
this worker does not take: the worker records that it is stuck and stops with status 70, and its
supervisor (compose's restart policy, systemd's ``Restart=``) starts a fresh one. Running tasks get
``FACTLAB_WORKER_STOP_SECONDS`` to finish; then the process exits anyway (a killed task's message is
delivered again and the beat requeues its job, as for a crashed worker). The same bound applies to a stop
asked by a signal (:func:`bound_shutdown`): a worker wedged in its broker connection once ignored SIGTERM.

Each look rewrites ``FACTLAB_WORKER_STATE_DIR/<worker name>.json``; ``manage.py worker_alive`` (the
containers' health check) fails when a worker's file says it is stuck, or is stale because the process is
gone or frozen. An empty queue proves nothing either way, and none is needed: a worker that does not
consume is harmless until a message waits, and found within the threshold once one does.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import signal
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

logger = logging.getLogger(__name__)

EX_STUCK = 70  # EX_SOFTWARE: a failure, so "restart on failure" supervisors restart the worker too


def look_interval() -> float:
    """Seconds between two looks: a quarter of the stuck threshold, between 0.5 s and 15 s."""
    return min(15.0, max(0.5, settings.FACTLAB_WORKER_STUCK_SECONDS / 4))


def stale_after() -> float:
    """A state file older than this belongs to a worker that is gone or frozen."""
    return 3 * look_interval() + 10.0


def state_path(nodename: str) -> Path:
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in nodename)
    return Path(settings.FACTLAB_WORKER_STATE_DIR) / f"{safe}.json"


@dataclass
class Watch:
    """What one worker's watchdog remembers between looks (plain data: tested without a worker)."""

    threshold: float
    free_since: float | None = None
    tails: dict[str, tuple[str, float]] = field(default_factory=dict)

    def look(self, now: float, *, free_slot: bool, tails: dict[str, bytes | None]) -> str:
        """The reason the worker is stuck, or "" while it consumes, is busy, or has nothing waiting."""
        if not free_slot:
            self.free_since = None
        elif self.free_since is None:
            self.free_since = now
        for queue, raw in tails.items():
            if raw is None:
                self.tails.pop(queue, None)
                continue
            digest = hashlib.sha1(raw).hexdigest()
            if self.tails.get(queue, ("", 0.0))[0] != digest:
                self.tails[queue] = (digest, now)
        if self.free_since is None:
            return ""
        for queue, (_, seen) in sorted(self.tails.items()):
            waited = now - max(seen, self.free_since)
            if waited >= self.threshold:
                return (f"the next message of queue {queue!r} has waited {waited:.0f} s while this worker had a free "
                        f"slot: it no longer consumes")
        return ""


def queue_tails(client, queues: Sequence[str]) -> dict[str, bytes | None]:
    """The next message of each queue (kombu's Redis lists take from the right), None for an empty one."""
    pipe = client.pipeline(transaction=False)
    for queue in queues:
        pipe.lindex(queue, -1)
    return dict(zip(queues, pipe.execute()))


def write_state(path: Path, state: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(state))
    tmp.replace(path)


_started: set[str] = set()


def start_watchdog(consumer) -> None:
    """Watch this worker's consumption (called when the worker is ready; once per process)."""
    broker_url = consumer.app.conf.broker_url or ""
    nodename = consumer.hostname
    if nodename in _started or not broker_url.startswith(("redis://", "rediss://")):
        return  # the demo's filesystem broker has no queue to look at
    _started.add(nodename)
    import redis

    queues = sorted(consumer.app.amqp.queues.consume_from)
    slots = int(getattr(consumer.controller, "concurrency", 1) or 1)
    client = redis.Redis.from_url(broker_url, socket_timeout=5, socket_connect_timeout=5)
    thread = threading.Thread(
        target=_watch, args=(client, nodename, queues, slots, consumer.controller), name="factlab-liveness", daemon=True,
    )
    thread.start()


def _watch(client, nodename: str, queues: list[str], slots: int, worker) -> None:
    from celery.worker import state as worker_state

    watch = Watch(threshold=settings.FACTLAB_WORKER_STUCK_SECONDS)
    path = state_path(nodename)
    while True:
        now = time.time()
        try:
            tails = queue_tails(client, queues)
        except Exception as exc:
            tails, broker = {}, f"unreachable: {exc}"
        else:
            broker = "ok"
        stuck = watch.look(now, free_slot=len(worker_state.active_requests) < slots, tails=tails)
        write_state(path, {"pid": os.getpid(), "time": now, "queues": queues, "broker": broker, "stuck": stuck})
        if stuck:
            logger.error("worker %s: %s; stopping so that its supervisor starts a fresh one", nodename, stuck)
            worker_state.should_stop = EX_STUCK  # the worker's loop leaves with this status (a warm shutdown)
            _exit_after(settings.FACTLAB_WORKER_STOP_SECONDS, worker, EX_STUCK)
            return
        time.sleep(look_interval())


def bound_shutdown(worker) -> None:
    """After a stop signal, exit within FACTLAB_WORKER_STOP_SECONDS even if the worker is wedged."""
    threading.Thread(
        target=_exit_after, args=(settings.FACTLAB_WORKER_STOP_SECONDS, worker, 1), name="factlab-stop", daemon=True,
    ).start()


def _exit_after(seconds: float, worker, status: int) -> None:
    time.sleep(seconds)
    logger.error("worker still running %.0f s after it was asked to stop: exiting now", seconds)
    for pid in _pool_pids(worker):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    logging.shutdown()
    os._exit(status)


def _pool_pids(worker) -> list[int]:
    """The prefork pool's child processes (none for the solo pool)."""
    pool = getattr(getattr(worker, "pool", None), "_pool", None)
    return [p.pid for p in getattr(pool, "_pool", None) or () if getattr(p, "pid", None)]


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists (the check runs beside the worker: same machine or container)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return pid > 0


def problems(name: str | None = None, *, kill_frozen: bool = False) -> list[str]:
    """Why the worker ``name`` (or any worker with a state file here) is not alive; empty when all are.

    ``kill_frozen``: SIGKILL a worker whose process runs but gives no sign of life (frozen: it cannot stop
    itself as a stuck one does), so that its supervisor starts a fresh one.
    """
    directory = Path(settings.FACTLAB_WORKER_STATE_DIR)
    paths = [state_path(name)] if name else sorted(directory.glob("*.json"))
    if not paths:
        return [f"no worker state in {directory} (is the worker running on this machine?)"]
    found = []
    for path in paths:
        try:
            state = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            found.append(f"{path.name}: no readable state ({exc})")
            continue
        age = time.time() - float(state.get("time", 0))
        if state.get("stuck"):
            found.append(f"{path.stem}: {state['stuck']}")
        elif not _running(int(state.get("pid", 0))):
            found.append(f"{path.stem}: process {state.get('pid')} is gone")
        elif age > stale_after():
            found.append(f"{path.stem}: no sign of life for {age:.0f} s: process {state['pid']} frozen")
            if kill_frozen:
                os.kill(int(state["pid"]), signal.SIGKILL)
                found[-1] += ", killed"
    return found
