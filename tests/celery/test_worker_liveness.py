"""Workers that stay up and are supervised (factlab/liveness.py), on real Celery workers and Redis (db 15).

A worker whose broker connections are cut consumes again or fails its liveness check; one that stops taking
messages while it answers pings fails the check and exits for its supervisor; one asked to stop exits within
its bound even with a task running.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from urllib.parse import urlparse

import psutil
import pytest
import redis

from factlab.celery import app
from factlab.liveness import EX_STUCK, Watch
from metrics_service.scorers import REGISTRY
from metrics_service.scoring.jobs import submit_scoring_job
from tests.celery_helpers import (
    EXTRA_SCORERS_ENV,
    TEST_SCORERS,
    CeleryWorker,
    broker,
    redis_url,
    wait_for,
)
from tests.conftest import REPO_ROOT

DB = 15  # broker database of these tests
STUCK_SECONDS, STOP_SECONDS = 4, 5


def test_a_message_left_next_in_line_while_a_slot_is_free_means_the_worker_no_longer_consumes():
    watch = Watch(threshold=10)
    assert watch.look(0, free_slot=True, tails={"cpu": None}) == ""  # nothing waiting proves nothing
    assert watch.look(1, free_slot=True, tails={"cpu": b"m1"}) == ""
    assert watch.look(10.9, free_slot=True, tails={"cpu": b"m1"}) == ""
    assert "queue 'cpu' has waited 10 s" in watch.look(11, free_slot=True, tails={"cpu": b"m1"})
    # A busy worker takes nothing and is not stuck; the wait counts from the moment a slot is free.
    busy = Watch(threshold=10)
    assert busy.look(0, free_slot=False, tails={"cpu": b"m1"}) == busy.look(30, free_slot=False, tails={"cpu": b"m1"}) == ""
    assert busy.look(31, free_slot=True, tails={"cpu": b"m1"}) == ""
    assert busy.look(41, free_slot=True, tails={"cpu": b"m1"}) != ""
    # Another message next in line: the previous one was taken.
    moving = Watch(threshold=10)
    for second, message in enumerate([b"a", b"b", b"c"]):
        assert moving.look(second * 8, free_slot=True, tails={"cpu": message, "gpu": None}) == ""


def liveness_env(state_dir) -> dict[str, str]:
    return {"FACTLAB_WORKER_STUCK_SECONDS": str(STUCK_SECONDS), "FACTLAB_WORKER_STOP_SECONDS": str(STOP_SECONDS),
            "FACTLAB_WORKER_STATE_DIR": str(state_dir)}


def worker_alive(state_dir, name: str | None = None, *options: str) -> subprocess.CompletedProcess:
    """``manage.py worker_alive``, as a container's health check runs it."""
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}, **liveness_env(state_dir)}
    return subprocess.run([sys.executable, "manage.py", "worker_alive", *(["--name", name] if name else []), *options],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)


def node_name(worker: CeleryWorker) -> str:
    return re.search(r"(\S+@\S+) ready\.", worker.log()).group(1)


def send(queue: str) -> str:
    return app.send_task("celery.accumulate", args=(1,), queue=queue).id


def done(worker: CeleryWorker, task_id: str) -> bool:
    return f"[{task_id}] succeeded" in worker.log()


def kill_broker_connections(pid: int) -> int:
    """End the worker's Redis connections from the server side (as a Redis restart or a proxy would)."""
    redis_port = urlparse(redis_url(DB)).port or 6379
    ports = {c.laddr.port for c in psutil.Process(pid).net_connections(kind="tcp") if c.raddr and c.raddr.port == redis_port}
    server = redis.Redis.from_url(redis_url(DB))
    ids = [c["id"] for c in server.client_list() if int(c["addr"].rsplit(":", 1)[1]) in ports]
    for client_id in ids:
        server.client_kill_filter(_id=client_id)
    return len(ids)


@pytest.mark.celery_worker
@pytest.mark.slow
def test_a_worker_whose_broker_connections_are_killed_consumes_again_or_fails_its_check(transactional_db, tmp_path):
    with broker(redis_db=DB) as url, CeleryWorker(broker_url=url, queues=("cpu",), env=liveness_env(tmp_path)) as worker:
        before = send("cpu")
        wait_for(lambda: done(worker, before), timeout=60, what="a task before the cut", workers=[worker])
        assert worker_alive(tmp_path).returncode == 0
        assert kill_broker_connections(worker.process.pid) >= 1
        after = send("cpu")
        wait_for(lambda: done(worker, after) or worker.process.poll() is not None, timeout=90,
                 what="the worker to consume again or to give up", workers=[worker])
        check = worker_alive(tmp_path)
        if done(worker, after):
            assert "Connection to broker lost" in worker.log()  # the cut was felt, and survived
            assert check.returncode == 0, check.stderr
        else:  # the known kombu failure: the worker found itself stuck and left for its supervisor
            assert worker.process.returncode == EX_STUCK
            assert check.returncode == 1 and "no longer consumes" in check.stderr


@pytest.mark.celery_worker
@pytest.mark.slow
def test_a_worker_that_stops_taking_messages_fails_its_check_and_exits_for_its_supervisor(transactional_db, tmp_path):
    with broker(redis_db=DB) as url:
        with CeleryWorker(broker_url=url, queues=("cpu",), env=liveness_env(tmp_path)) as stuck:
            name = node_name(stuck)
            assert worker_alive(tmp_path, name).returncode == 0
            # The consumer lets go of its queue while the worker lives on: the failure a ping cannot see.
            assert app.control.cancel_consumer("cpu", destination=[name], reply=True, timeout=10)
            waiting = send("cpu")
            assert app.control.ping(destination=[name], timeout=5) == [{name: {"ok": "pong"}}]
            wait_for(lambda: stuck.process.poll() is not None, timeout=STUCK_SECONDS + STOP_SECONDS + 30,
                     what="the stuck worker to exit", workers=[stuck])
        assert stuck.process.returncode == EX_STUCK and not done(stuck, waiting)
        assert "it no longer consumes" in stuck.log()
        check = worker_alive(tmp_path, name)
        assert check.returncode == 1 and "queue 'cpu'" in check.stderr and "no longer consumes" in check.stderr
        # What its supervisor starts takes the message that waited.
        with CeleryWorker(broker_url=url, queues=("cpu",), env=liveness_env(tmp_path)) as fresh:
            wait_for(lambda: done(fresh, waiting), timeout=60, what="the fresh worker to take the message", workers=[fresh])
            assert worker_alive(tmp_path, node_name(fresh)).returncode == 0
            # A frozen worker cannot stop itself: the check, told to, kills it for its supervisor to restart.
            fresh.process.send_signal(signal.SIGSTOP)
            time.sleep(3 * STUCK_SECONDS / 4 + 10 + 1)  # its last sign of life is stale (factlab.liveness.stale_after)
            check = worker_alive(tmp_path, node_name(fresh), "--kill-frozen")
            assert check.returncode == 1 and "frozen, killed" in check.stderr
            assert fresh.process.wait(timeout=10) == -signal.SIGKILL
        # A worker that is gone fails its check too.
        assert "is gone" in worker_alive(tmp_path, node_name(fresh)).stderr


@pytest.mark.celery_worker
@pytest.mark.slow
def test_a_worker_asked_to_stop_exits_within_its_bound_with_a_task_running(transactional_db, tmp_path, monkeypatch):
    from tests.celery.test_scoring_jobs_worker import make_campaign

    for metric, target in TEST_SCORERS.items():
        monkeypatch.setitem(REGISTRY, metric, target)
    campaign = make_campaign("stop-bound", n_documents=1, with_references=False)
    env = {**liveness_env(tmp_path), "FACTLAB_EXTRA_SCORERS": EXTRA_SCORERS_ENV}
    with broker(redis_db=DB) as url, CeleryWorker(broker_url=url, queues=("cpu",), env=env) as worker:
        submit_scoring_job(metric="test_sleepy", config={"state_dir": str(tmp_path), "sleep_on_call": 1, "seconds": 600},
                           campaign=campaign, chunk_size=2)
        wait_for((tmp_path / "sleeping").exists, timeout=60, what="the long chunk to start", workers=[worker])
        asked = time.monotonic()
        worker.process.terminate()  # a warm shutdown would wait the chunk's 600 s
        worker.process.wait(timeout=STOP_SECONDS + 30)
        assert time.monotonic() - asked < STOP_SECONDS + 10
        assert "asked to stop: exiting now" in worker.log()
