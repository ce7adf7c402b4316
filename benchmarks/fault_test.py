"""Fault benchmark: kill gunicorn workers mid-request and a Celery worker mid-job; check nothing is lost or doubled.

1. **gunicorn**: N simulated annotators work on the FRANK benchmark campaign (as in ``load_test.py``)
   while a gunicorn worker process is SIGKILLed every ``--kill-every`` seconds with requests in flight.
   gunicorn's master starts a replacement; clients whose connection died retry the submission with the
   same key, as the annotation page does. Afterwards the database must show every acknowledged
   submission exactly once, no item over its redundancy, no double ledger entry, and the master must
   be running the configured number of workers again.
2. **Celery**: a scoring job over every summary of the campaign runs on a real worker (solo pool, on
   Redis); the worker is SIGKILLed while it is inside a chunk, a new worker is started, and the job
   must complete with each score stored exactly once (the killed chunk is re-delivered and retried).

    .venv/bin/python benchmarks/fault_test.py --users 30 --duration 40
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._bench_common import (
    HOST,
    Gunicorn,
    add_common_arguments,
    bench_env,
    check_invariants,
    flush_redis,
    free_port,
    latency_summary,
    prepare_site,
    run_annotators,
    write_json_out,
)
from tests.celery_helpers import EXTRA_SCORERS_ENV, CeleryWorker, redis_url, wait_for


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=30)
    parser.add_argument("--duration", type=float, default=40.0, help="seconds of load while workers are killed")
    parser.add_argument("--kill-every", type=float, default=8.0, help="seconds between two gunicorn worker kills")
    parser.add_argument("--gunicorn-workers", type=int, default=4)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--redundancy", type=int, default=5)
    parser.add_argument("--chunk-size", type=int, default=200, help="summaries per scoring chunk")
    parser.add_argument("--broker-db", type=int, default=11, help="Celery broker")
    add_common_arguments(parser)
    args = parser.parse_args(argv)
    if not 1 <= args.users <= 500 or not 5 <= args.duration <= 300 or args.kill_every < 1:
        parser.error("--users 1..500, --duration 5..300 s, --kill-every >= 1 s")
    return args


def kill_workers_periodically(server: Gunicorn, *, every: float, started: float, until: float, killed: list[dict], rng: random.Random) -> None:
    """SIGKILL one gunicorn worker every ``every`` seconds until ``until`` (a bounded loop, own thread)."""
    import psutil

    next_kill = started + every
    while time.monotonic() < until - 1:
        time.sleep(0.1)
        if time.monotonic() < next_kill:
            continue
        next_kill += every
        pids = server.worker_pids()
        if not pids:
            continue
        # Prefer a worker that is busy right now (CPU time moving): it is inside a request.
        busy = []
        for pid in pids:
            try:
                busy.append((psutil.Process(pid).cpu_percent(interval=0.05), pid))
            except psutil.NoSuchProcess:
                continue
        victim = max(busy)[1] if busy else rng.choice(pids)
        try:
            os.kill(victim, signal.SIGKILL)
            killed.append({"pid": victim, "at_s": round(time.monotonic() - started, 1), "cpu_percent": max(busy)[0] if busy else None})
        except ProcessLookupError:
            pass


def gunicorn_phase(args, env: dict[str, str], sessions: list[str]) -> dict:
    port = free_port()
    log_path = Path(tempfile.mkstemp(prefix="factlab-gunicorn-fault-", suffix=".log")[1])
    killed: list[dict] = []
    with Gunicorn(env, port=port, workers=args.gunicorn_workers, threads=args.threads, log_path=log_path) as server:
        started = time.monotonic()
        killer = threading.Thread(
            target=kill_workers_periodically, daemon=True,
            kwargs={"server": server, "every": args.kill_every, "started": started, "until": started + args.duration, "killed": killed, "rng": random.Random(7)},
        )
        killer.start()
        stats = asyncio.run(
            run_annotators(f"http://{HOST}:{port}", sessions, args.duration, think=0.1, double_click=0.05, retries=5, seed=3)
        )
        elapsed = time.monotonic() - started
        killer.join(timeout=10)
        wait_for(lambda: len(server.worker_pids()) == args.gunicorn_workers, timeout=30, what="gunicorn to replace the killed workers")
        after = set(server.worker_pids())
        master_alive = server.process.poll() is None
    invariants = check_invariants(stats)
    # A replacement may itself be killed later; what counts is that no killed pid runs and the count is back.
    killed_still_running = sum(k["pid"] in after for k in killed)
    return {
        "users": args.users,
        "duration_s": round(elapsed, 1),
        "workers_killed": len(killed),
        "kills": killed,
        "killed_pids_still_running": killed_still_running,
        "workers_running_after": len(after),
        "master_alive": master_alive,
        "submissions": len(stats.acknowledged),
        "submissions_per_s": round(len(stats.acknowledged) / elapsed, 2),
        "connection_errors": {k: v for k, v in stats.errors.items() if "HTTP" not in k},
        "http_errors": {k: v for k, v in stats.errors.items() if "HTTP" in k},
        "submit_retries": stats.retries,
        "duplicates_answered": stats.duplicates_acknowledged,
        "submit_latency": latency_summary(stats.submit_latencies),
        "invariants": invariants,
        "ok": invariants["ok"] and master_alive and len(after) == args.gunicorn_workers and killed_still_running == 0 and len(killed) > 0,
    }


def celery_phase(args, env: dict[str, str]) -> dict:
    from annotate.models import Campaign, MetricScore, Summary
    from factlab.celery import app
    from metrics_service.models import ChunkStatus, JobStatus, ScoringChunk
    from metrics_service.services import submit_scoring_job

    broker_url = redis_url(args.broker_db)
    flush_redis(args.broker_db)
    app.conf.broker_url = broker_url
    app.conf.task_always_eager = False
    state = Path(tempfile.mkdtemp(prefix="factlab-fault-scorer-"))
    worker_env = {
        "FACTLAB_EXTRA_SCORERS": EXTRA_SCORERS_ENV,
        # The broker hands an unacknowledged chunk to another worker after 4 s; the new worker looks every second.
        "CELERY_VISIBILITY_TIMEOUT": "4", "CELERY_UNACKED_RESTORE_INTERVAL": "1", "CELERY_UNACKED_RESTORE_THROTTLE": "1",
        "FACTLAB_LOG_LEVEL": "WARNING",
    }
    database_url = env["DATABASE_URL"]
    campaign = Campaign.objects.get(slug="bench-frank")
    ids = list(Summary.objects.filter(document__campaign=campaign).values_list("id", flat=True))
    first = CeleryWorker(broker_url=broker_url, database_url=database_url, queues=("cpu",), env=worker_env)
    second = CeleryWorker(broker_url=broker_url, database_url=database_url, queues=("cpu",), env=worker_env)
    started = time.monotonic()
    try:
        first.start()
        # The third chunk the worker takes sleeps (2 minutes): the worker is killed inside it.
        job = submit_scoring_job(
            metric="test_sleepy", config={"state_dir": str(state), "sleep_on_call": 3, "seconds": 120}, campaign=campaign, chunk_size=args.chunk_size,
        )
        wait_for((state / "sleeping").exists, timeout=120, what="the worker to be inside a chunk", workers=[first])
        running = ScoringChunk.objects.get(job=job, status=ChunkStatus.RUNNING)
        os.kill(first.process.pid, signal.SIGKILL)
        first.process.wait(timeout=10)
        killed_at = time.monotonic()
        partial = MetricScore.objects.filter(config_key=job.config_key).count()
        second.start()
        wait_for(lambda: (job.refresh_from_db() or job.status in (JobStatus.DONE, JobStatus.FAILED, JobStatus.CANCELLED)),
                 timeout=180, what="the job to finish after the restart", workers=[first, second])
        recovered_s = time.monotonic() - killed_at
    finally:
        first.stop()
        second.stop()
        flush_redis(args.broker_db)
    running.refresh_from_db()
    rows = list(MetricScore.objects.filter(config_key=job.config_key, metric="test_sleepy_chars").values_list("summary_id", flat=True))
    wrong_values = sum(
        1 for value, text in MetricScore.objects.filter(config_key=job.config_key).values_list("value", "summary__text") if value != float(len(text))
    )
    ok = (
        job.status == JobStatus.DONE and job.done == len(ids) and len(rows) == len(set(rows)) == len(ids)
        and set(rows) == set(ids) and running.status == ChunkStatus.DONE and running.attempts == 2 and wrong_values == 0
    )
    return {
        "summaries": len(ids),
        "chunks": job.chunks.count(),
        "killed_chunk": {"index": running.index, "attempts": running.attempts, "status": running.status},
        "job_status": job.status,
        "scores_stored": len(rows),
        "distinct_summaries_scored": len(set(rows)),
        "wrong_values": wrong_values,
        "scores_before_restart": partial,  # the chunks finished before the kill; none of the killed one
        "seconds_from_kill_to_done": round(recovered_s, 1),
        "total_seconds": round(time.monotonic() - started, 1),
        "ok": ok,
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    env = bench_env(
        database=args.database, redis_db=args.redis_db,
        extra={"FACTLAB_EXTRA_SCORERS": EXTRA_SCORERS_ENV, "CELERY_BROKER_URL": redis_url(args.broker_db), "CELERY_TASK_ALWAYS_EAGER": "0"},
    )
    _setup, sessions = prepare_site(env, args, documents=None)
    results = {"gunicorn": gunicorn_phase(args, env, sessions)}
    print(json.dumps(results["gunicorn"], indent=2), flush=True)
    results["celery"] = celery_phase(args, env)
    print(json.dumps(results["celery"], indent=2), flush=True)
    ok = results["gunicorn"]["ok"] and results["celery"]["ok"]
    print(
        f"\ngunicorn: {results['gunicorn']['workers_killed']} workers SIGKILLed, {results['gunicorn']['submissions']} submissions, "
        f"{sum(results['gunicorn']['connection_errors'].values())} dropped connections, {results['gunicorn']['submit_retries']} retries; "
        f"celery: chunk {results['celery']['killed_chunk']['index']} killed and retried, {results['celery']['scores_stored']}/"
        f"{results['celery']['summaries']} scores once each -> {'OK' if ok else 'BROKEN'}"
    )
    write_json_out(args.json_out, results)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
