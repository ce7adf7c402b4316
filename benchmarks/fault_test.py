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
3. **Whole worker, default visibility timeout**: the same kill (the worker's whole process group), but with
   Redis's one-hour visibility timeout: the beat task ``heal_scoring_jobs`` (called here every
   ``--heal-every`` seconds, as celery beat would) finds the chunk whose running lock vanished and requeues
   it; the job must finish within minutes with each score once.
4. **Redis outage**: a private ``redis-server`` (never the shared one) is the broker and cache of a second
   gunicorn and a worker; annotators work while it is SIGKILLed for ``--outage`` seconds and restarted
   (append-only file kept). Submissions must go on during the outage (rate limits fail open), no request
   may answer 5xx, a scoring job submitted during the outage (its message cannot be sent) must be sent by
   the beat task after the restart and finish, and the database invariants must hold.

    .venv/bin/python benchmarks/fault_test.py --users 30 --duration 40
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from datetime import UTC

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
from tests.celery_helpers import (
    EXTRA_SCORERS_ENV,
    CeleryWorker,
    _reset_producer_pool,
    redis_url,
    wait_for,
)


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
    parser.add_argument("--heal-every", type=float, default=5.0, help="seconds between two beat healing calls (phase 3)")
    parser.add_argument("--outage", type=float, default=15.0, help="seconds Redis stays down (phase 4)")
    parser.add_argument("--site-port", type=int, default=0, help="gunicorn port of phase 4 (default: a free one)")
    parser.add_argument("--phases", default="gunicorn,celery,worker-heal,redis-outage", help="comma-separated phases to run")
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
    from metrics_service.scoring.jobs import submit_scoring_job

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


def worker_heal_phase(args, env: dict[str, str]) -> dict:
    """Kill a whole worker inside a chunk with the default (one-hour) visibility timeout; the beat task heals."""
    from annotate.models import Campaign, MetricScore, Summary
    from factlab.celery import app
    from metrics_service.models import ChunkStatus, JobStatus, ScoringChunk
    from metrics_service.scoring.jobs import submit_scoring_job
    from metrics_service.tasks import heal_scoring_jobs

    broker_url = redis_url(args.broker_db)
    flush_redis(args.broker_db)
    # The same broker as the celery phase: keep Celery's producer pool (kombu hands a reset one back closed).
    app.conf.broker_url, app.conf.task_always_eager = broker_url, False
    state = Path(tempfile.mkdtemp(prefix="factlab-heal-scorer-"))
    worker_env = {"FACTLAB_EXTRA_SCORERS": EXTRA_SCORERS_ENV, "FACTLAB_LOG_LEVEL": "WARNING"}  # visibility timeout: 3600 s
    campaign = Campaign.objects.get(slug="bench-frank")
    ids = list(Summary.objects.filter(document__campaign=campaign).values_list("id", flat=True))
    first = CeleryWorker(broker_url=broker_url, database_url=env["DATABASE_URL"], queues=("cpu",), env=worker_env)
    second = CeleryWorker(broker_url=broker_url, database_url=env["DATABASE_URL"], queues=("cpu",), env=worker_env)
    heals: list[dict] = []
    try:
        first.start()
        job = submit_scoring_job(
            metric="test_sleepy", config={"state_dir": str(state), "sleep_on_call": 3, "seconds": 600}, campaign=campaign, chunk_size=args.chunk_size,
        )
        wait_for((state / "sleeping").exists, timeout=120, what="the worker to be inside a chunk", workers=[first])
        running = ScoringChunk.objects.get(job=job, status=ChunkStatus.RUNNING)
        os.killpg(first.process.pid, signal.SIGKILL)  # the whole worker: its process group
        first.process.wait(timeout=10)
        killed_at = time.monotonic()
        second.start()
        ready_s = time.monotonic() - killed_at  # starting a worker on this loaded machine takes a while
        deadline = killed_at + 300
        while time.monotonic() < deadline:
            job.refresh_from_db()
            if job.status in (JobStatus.DONE, JobStatus.FAILED, JobStatus.CANCELLED):
                break
            healed = heal_scoring_jobs()
            if any(healed.values()):
                heals.append({"at_s": round(time.monotonic() - killed_at, 1), **{k: len(v) for k, v in healed.items()}})
            time.sleep(args.heal_every)
        recovered_s = time.monotonic() - killed_at
    finally:
        first.stop()
        second.stop()
        flush_redis(args.broker_db)
    running.refresh_from_db()
    job.refresh_from_db()
    rows = list(MetricScore.objects.filter(config_key=job.config_key, metric="test_sleepy_chars").values_list("summary_id", flat=True))
    ok = job.status == JobStatus.DONE and len(rows) == len(set(rows)) == len(ids) and running.status == ChunkStatus.DONE and recovered_s < 300
    return {
        "summaries": len(ids), "chunks": job.chunks.count(), "visibility_timeout_s": 3600,
        "killed_chunk": {"index": running.index, "attempts": running.attempts, "status": running.status},
        "replacement_worker_ready_s": round(ready_s, 1), "heal_calls_that_requeued": heals, "job_status": job.status, "scores_stored": len(rows),
        "distinct_summaries_scored": len(set(rows)), "seconds_from_kill_to_done": round(recovered_s, 1), "ok": ok,
    }


class PrivateRedis:
    """A redis-server of this benchmark only (own port and folder), so an outage never touches the shared one."""

    def __init__(self, port: int, folder: Path):
        self.port, self.folder, self.process = port, folder, None

    def start(self) -> None:
        import redis

        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", HOST, "--dir", str(self.folder), "--appendonly", "yes",
             "--save", "", "--protected-mode", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )
        client = redis.Redis(host=HOST, port=self.port, socket_connect_timeout=1)
        wait_for(lambda: _pings(client), timeout=20, what="the private redis-server")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)


def _pings(client) -> bool:
    try:
        return bool(client.ping())
    except Exception:
        return False


def redis_outage_phase(args, env: dict[str, str], sessions: list[str]) -> dict:
    import logging

    from annotate.models import (
        Assignment,
        AssignmentStatus,
        Campaign,
        MetricScore,
        Summary,
    )
    from factlab.celery import app
    from factlab.jobs import broker_available
    from metrics_service.models import JobStatus
    from metrics_service.scoring.jobs import submit_scoring_job
    from metrics_service.tasks import heal_scoring_jobs

    logging.getLogger("factlab.jobs").setLevel(logging.WARNING)  # show what could not be sent, and when
    port = free_port()
    private = PrivateRedis(port, Path(tempfile.mkdtemp(prefix="factlab-redis-outage-")))
    broker_url = f"redis://{HOST}:{port}/0"
    site_env = {**env, "REDIS_URL": broker_url, "CELERY_BROKER_URL": broker_url, "CELERY_RESULT_BACKEND": broker_url}
    campaign = Campaign.objects.get(slug="bench-frank")
    ids = list(Summary.objects.filter(document__campaign=campaign).values_list("id", flat=True))
    log_path = Path(tempfile.mkstemp(prefix="factlab-gunicorn-outage-", suffix=".log")[1])
    worker = CeleryWorker(broker_url=broker_url, database_url=env["DATABASE_URL"], queues=("cpu",), env={
        "FACTLAB_EXTRA_SCORERS": EXTRA_SCORERS_ENV, "FACTLAB_LOG_LEVEL": "WARNING"})
    timeline: dict[str, float] = {}
    outage_checks: dict[str, object] = {}
    private.start()
    # Celery reads CELERY_BROKER_URL from the environment before its configuration: point both here.
    previous_env_broker = os.environ.get("CELERY_BROKER_URL")
    os.environ["CELERY_BROKER_URL"] = broker_url
    app.conf.broker_url, app.conf.task_always_eager = broker_url, False
    _reset_producer_pool(app)
    try:
        worker.start()
        with Gunicorn(site_env, port=args.site_port or free_port(), workers=args.gunicorn_workers, threads=args.threads, log_path=log_path) as server:
            started = time.monotonic()
            down_at, up_at = started + args.duration / 3, started + args.duration / 3 + args.outage

            def outage() -> None:
                time.sleep(max(0.0, down_at - time.monotonic()))
                private.kill()
                timeline["down"] = time.time()
                outage_checks["broker_available_during"] = broker_available(timeout=1)
                # What an after-commit dispatch does while Redis is down: the job is stored, its message is not sent.
                outage_checks["job_id"] = submit_scoring_job(metric="test_words", campaign=campaign, chunk_size=args.chunk_size).pk
                time.sleep(max(0.0, up_at - time.monotonic()))
                private.start()
                timeline["up"] = time.time()

            thread = threading.Thread(target=outage, daemon=True)
            thread.start()
            base = f"http://{HOST}:{server.port}"
            stats = asyncio.run(run_annotators(base, sessions, args.duration, think=0.1, double_click=0.05, retries=5, seed=11))
            thread.join(timeout=args.outage + 30)
        from datetime import datetime

        down, up = (datetime.fromtimestamp(timeline[k], tz=UTC) for k in ("down", "up"))
        during = Assignment.objects.filter(item__campaign=campaign, status=AssignmentStatus.SUBMITTED, submitted_at__gte=down, submitted_at__lt=up).count()
        job_id = outage_checks["job_id"]
        from metrics_service.models import ScoringJob

        job = ScoringJob.objects.get(pk=job_id)
        undispatched = job.chunks.filter(dispatched_at__isnull=True).count()
        healed_at = time.monotonic()
        while time.monotonic() < healed_at + 180:
            job.refresh_from_db()
            if job.status in (JobStatus.DONE, JobStatus.FAILED, JobStatus.CANCELLED):
                break
            heal_scoring_jobs()
            time.sleep(args.heal_every)
        heal_s = time.monotonic() - healed_at
    finally:
        worker.stop()
        private.kill()
        if previous_env_broker is None:
            os.environ.pop("CELERY_BROKER_URL", None)
        else:
            os.environ["CELERY_BROKER_URL"] = previous_env_broker
        app.conf.broker_url = redis_url(args.broker_db)
        _reset_producer_pool(app)
    invariants = check_invariants(stats)
    rows = list(MetricScore.objects.filter(config_key=job.config_key, metric="test_words").values_list("summary_id", flat=True))
    server_errors = {k: v for k, v in stats.errors.items() if "HTTP 5" in k}
    ok = (
        invariants["ok"] and not server_errors and during > 0 and job.status == JobStatus.DONE
        and len(rows) == len(set(rows)) == len(ids) and outage_checks.get("broker_available_during") is False
    )
    return {
        "users": args.users, "outage_s": round(timeline["up"] - timeline["down"], 1),
        "submissions": len(stats.acknowledged), "submissions_during_outage": during,
        "http_errors": {k: v for k, v in stats.errors.items() if "HTTP" in k}, "server_errors": server_errors,
        "submit_latency": latency_summary(stats.submit_latencies),
        "job_submitted_during_outage": {"chunks": job.chunks.count(), "undispatched_after_outage": undispatched,
                                        "status": job.status, "scores_stored": len(rows), "seconds_to_done_after_restart": round(heal_s, 1)},
        "invariants": invariants, "ok": ok,
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    env = bench_env(
        database=args.database, redis_db=args.redis_db,
        extra={"FACTLAB_EXTRA_SCORERS": EXTRA_SCORERS_ENV, "CELERY_BROKER_URL": redis_url(args.broker_db), "CELERY_TASK_ALWAYS_EAGER": "0"},
    )
    _setup, sessions = prepare_site(env, args, documents=None)
    phases = [p.strip() for p in args.phases.split(",") if p.strip()]
    results: dict[str, dict] = {}
    if "gunicorn" in phases:
        results["gunicorn"] = gunicorn_phase(args, env, sessions)
        print(json.dumps(results["gunicorn"], indent=2), flush=True)
    if "celery" in phases:
        results["celery"] = celery_phase(args, env)
        print(json.dumps(results["celery"], indent=2), flush=True)
    if "worker-heal" in phases:
        results["worker_heal"] = worker_heal_phase(args, env)
        print(json.dumps(results["worker_heal"], indent=2), flush=True)
    if "redis-outage" in phases:
        results["redis_outage"] = redis_outage_phase(args, env, sessions)
        print(json.dumps(results["redis_outage"], indent=2), flush=True)
    ok = all(r["ok"] for r in results.values())
    lines = []
    if "gunicorn" in results:
        g = results["gunicorn"]
        lines.append(f"gunicorn: {g['workers_killed']} workers SIGKILLed, {g['submissions']} submissions, "
                     f"{sum(g['connection_errors'].values())} dropped connections, {g['submit_retries']} retries")
    if "celery" in results:
        c = results["celery"]
        lines.append(f"celery: chunk {c['killed_chunk']['index']} killed and retried, {c['scores_stored']}/{c['summaries']} scores once each")
    if "worker_heal" in results:
        w = results["worker_heal"]
        lines.append(f"whole worker killed (visibility 3600 s): job {w['job_status']} {w['seconds_from_kill_to_done']} s after the kill, "
                     f"{w['scores_stored']}/{w['summaries']} scores once each")
    if "redis_outage" in results:
        r = results["redis_outage"]
        j = r["job_submitted_during_outage"]
        lines.append(f"redis down {r['outage_s']} s: {r['submissions']} submissions ({r['submissions_during_outage']} during the outage), "
                     f"{sum(r['server_errors'].values())} server errors; job sent during the outage: {j['status']} with {j['scores_stored']} scores")
    print("\n" + "; ".join(lines) + f" -> {'OK' if ok else 'BROKEN'}")
    write_json_out(args.json_out, results)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
