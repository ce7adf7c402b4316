"""Load benchmark: N simulated annotators work through a FRANK campaign on gunicorn + PostgreSQL + Redis.

The script recreates the benchmark database (``factlab_bench``), migrates it, imports FRANK
(``../shared/data/frank`` or ``data/frank-subset``) into a running campaign, creates N pre-qualified
annotators, starts gunicorn on 127.0.0.1 and lets every annotator, for ``--duration`` seconds: request
the next item and submit judgements for every sentence with the entity question's answer (some submits are
double clicks). It prints submissions per second, p50/p95/p99 latency of the submit endpoint and of the
task page, the errors, and then checks in the database that every acknowledged submission is stored
exactly once and that no item exceeded its redundancy, the CPU an item cycle cost (against the same run's reference
loop) and the web workers' memory after the load. Exit status 1 when an invariant is broken.

    .venv/bin/python benchmarks/load_test.py --users 50 --duration 60
    .venv/bin/python benchmarks/load_test.py --users 200 --duration 60 --json-out test-output/load-200.json
    .venv/bin/python benchmarks/load_test.py --users 50 --duration 300 --reading 60   # people reading a minute per item
    .venv/bin/python benchmarks/load_test.py --users 50 --duration 300 --reading 60 --as-browser   # and every request their browser makes
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._bench_common import (
    HOST,
    CpuMeter,
    Gunicorn,
    add_common_arguments,
    bench_env,
    check_invariants,
    free_port,
    latency_summary,
    prepare_site,
    reference_loop_ms,
    run_annotators,
    worker_memory_mb,
    write_json_out,
)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=50, help="concurrent simulated annotators")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of load (the script stops by itself)")
    parser.add_argument("--gunicorn-workers", type=int, default=max(2, (os.cpu_count() or 2) * 2), help="gunicorn worker processes")
    parser.add_argument("--threads", type=int, default=4, help="threads per gunicorn worker (gthread)")
    parser.add_argument("--worker-class", choices=("gthread", "sync"), default="gthread", help="gunicorn worker class")
    parser.add_argument("--keep-alive", type=int, default=2, help="gunicorn keep-alive seconds (0: a connection per request)")
    parser.add_argument("--redundancy", type=int, default=5, help="annotations per item")
    parser.add_argument("--documents", type=int, default=None, help="use only the first N items (default: all)")
    parser.add_argument("--think", type=float, default=0.2, help="max pause between items, seconds (0.2: a bot)")
    parser.add_argument(
        "--reading", type=float, default=None, metavar="SECONDS",
        help="model people reading: each annotator pauses 0.75-1.25 times SECONDS after each item (e.g. 60) and starts "
             "within the first SECONDS; replaces --think",
    )
    parser.add_argument(
        "--as-browser", action="store_true",
        help="make every request the task page's browser makes: its keep-alive while the page is open (the pause comes "
             "before the submit), the page after each submit and its link to the next item; a cycle's CPU then covers them too",
    )
    parser.add_argument("--double-click", type=float, default=0.05, help="share of submits sent twice at once")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--port", type=int, default=0, help="gunicorn port (default: a free one)")
    add_common_arguments(parser)
    args = parser.parse_args(argv)
    if not 1 <= args.users <= 2000 or not 1 <= args.duration <= 600:
        parser.error("--users must be 1..2000 and --duration 1..600 seconds")
    return args


def think_times(args: argparse.Namespace) -> dict[str, float]:
    """The annotators' pauses: up to ``--think`` between items, or ``--reading`` seconds give or take a quarter."""
    if args.reading:
        return {"think_min": 0.75 * args.reading, "think": 1.25 * args.reading, "stagger": args.reading}
    return {"think": args.think}


def cycle_ratios(per_cycle: dict[str, float], loop_ms: float) -> dict[str, float]:
    """CPU per item cycle over the reference loop's milliseconds: all of it, and the server's share (web workers
    and PostgreSQL, without the simulated annotators that share the machine)."""
    server = per_cycle.get("web_workers", 0.0) + per_cycle.get("postgres", 0.0)
    return {"total": round(per_cycle["total"] / loop_ms, 3), "server": round(server / loop_ms, 3)}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    env = bench_env(database=args.database, redis_db=args.redis_db)
    setup, sessions = prepare_site(env, args, documents=args.documents)
    # The loop is timed before and after the load, and the ratio read against their mean: on a shared machine a
    # single timing moved by half between runs whose CPU per cycle moved by a tenth.
    loop_before_ms = reference_loop_ms()
    port = args.port or free_port()
    log_path = Path(tempfile.mkstemp(prefix="factlab-gunicorn-", suffix=".log")[1])
    with Gunicorn(env, port=port, workers=args.gunicorn_workers, threads=args.threads, log_path=log_path, worker_class=args.worker_class, keep_alive=args.keep_alive) as server:
        started = time.monotonic()
        with CpuMeter(server, database=args.database) as cpu:
            stats = asyncio.run(
                run_annotators(
                    f"http://{HOST}:{port}", sessions, args.duration,
                    **think_times(args), double_click=args.double_click, retries=3, seed=args.seed, as_browser=args.as_browser,
                )
            )
        elapsed = time.monotonic() - started
        memory = worker_memory_mb(server)
    invariants = check_invariants(stats)
    accepted = len(stats.acknowledged)
    loop_after_ms = reference_loop_ms()
    loop_ms = round((loop_before_ms + loop_after_ms) / 2, 1)
    results = {
        "users": args.users,
        "pause_between_items_s": think_times(args),
        "duration_s": round(elapsed, 1),
        "gunicorn": f"{args.gunicorn_workers} {args.worker_class} workers" + (f" x {args.threads} threads" if args.worker_class == "gthread" else ""),
        "cpus": os.cpu_count(),
        "reference_loop_ms": loop_ms,
        "reference_loop_ms_before_and_after": [loop_before_ms, loop_after_ms],
        "setup": setup,
        "logged_in": stats.logged_in,
        "submissions": accepted,
        "submissions_per_s": round(accepted / elapsed, 2),
        "double_click_duplicates_answered": stats.duplicates_acknowledged,
        "submit_latency": latency_summary(stats.submit_latencies),
        "task_page_latency": latency_summary(stats.task_latencies),
        "as_browser": args.as_browser,
        "page_after_submit_latency": latency_summary(stats.done_latencies),
        "heartbeat_latency": latency_summary(stats.heartbeat_latencies),
        "next_item_link_latency": latency_summary(stats.next_item_latencies),
        "cpu_seconds": cpu.used,
        "cpu_ms_per_item_cycle": cpu.per_cycle_ms(accepted),
        # CPU per cycle in units of the machine's reference loop: the figure to compare across machines.
        "cpu_per_cycle_to_reference_loop": cycle_ratios(cpu.per_cycle_ms(accepted), loop_ms),
        "web_worker_memory_mb": memory,
        "errors": dict(stats.errors),
        "retries": stats.retries,
        "annotators_out_of_work": stats.out_of_work,
        "annotators_reading_at_the_end": stats.reading_at_end,
        "annotators_blocked": stats.blocked,
        "invariants": invariants,
    }
    print(json.dumps(results, indent=2))
    print(
        f"\n{args.users} annotators, {elapsed:.0f} s: {accepted} submissions ({accepted / elapsed:.1f}/s); "
        f"submit p50 {results['submit_latency']['p50_ms']} ms, p95 {results['submit_latency']['p95_ms']} ms, "
        f"p99 {results['submit_latency']['p99_ms']} ms; task page p50 {results['task_page_latency']['p50_ms']} ms, "
        f"p95 {results['task_page_latency']['p95_ms']} ms; "
        + (f"page after submit p50 {results['page_after_submit_latency']['p50_ms']} ms, p95 "
           f"{results['page_after_submit_latency']['p95_ms']} ms; its next-item link p95 "
           f"{results['next_item_link_latency']['p95_ms']} ms; {len(stats.heartbeat_latencies)} keep-alives, p95 "
           f"{results['heartbeat_latency']['p95_ms']} ms; " if args.as_browser else "")
        + f"errors {sum(stats.errors.values())}; "
        f"invariants {'OK' if invariants['ok'] else 'BROKEN'}\n"
        f"CPU per item cycle{' (as a browser makes it)' if args.as_browser else ''}: {results['cpu_ms_per_item_cycle']['total']} ms (web workers "
        f"{results['cpu_ms_per_item_cycle']['web_workers']}, PostgreSQL {results['cpu_ms_per_item_cycle']['postgres']}, "
        f"simulated annotators {results['cpu_ms_per_item_cycle']['load_generator']}): at most "
        f"{results['cpu_ms_per_item_cycle']['cycles_per_s_if_cpu_bound']} cycles/s on {os.cpu_count()} cores; "
        f"machine speed: reference loop {results['reference_loop_ms']} ms (benchmarks._bench_common.reference_loop_ms; "
        f"{loop_before_ms} ms before the load, {loop_after_ms} ms after)\n"
        f"CPU per cycle / reference loop: {results['cpu_per_cycle_to_reference_loop']['total']} "
        f"(the server alone, web workers and PostgreSQL: {results['cpu_per_cycle_to_reference_loop']['server']})\n"
        f"Memory per web worker after the load (median): {memory['uss']} MB its own (USS), {memory['pss']} MB "
        f"with its share of the pages it shares with the master (PSS)"
    )
    write_json_out(args.json_out, results)
    log_tail = log_path.read_text(errors="replace")[-2000:]
    if log_tail.strip():
        print(f"\ngunicorn log tail ({log_path}):\n{log_tail}")
    return 0 if invariants["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
