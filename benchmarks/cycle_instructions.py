"""Instructions a FRANK item cycle costs the web side, counted by valgrind: a figure the machine's load does not move.

On a shared machine the CPU time per cycle of ``benchmarks/load_test.py`` moves by a tenth between runs, and its
reference loop by half, so a change worth a few percent cannot be told from the noise. This script runs task page +
submit cycles through Django's test client in one process (the views, services, ORM, psycopg and the Redis client,
without gunicorn) under ``valgrind --tool=callgrind``, twice: once with ``--short`` measured cycles and once with
``--long``; the difference of the two runs' instruction counts over the difference of their cycles is what one cycle
costs, start-up and warm-up cancelled out. ``--baseline-tree`` does the same, in the same run, with another
checkout's code (a ``git worktree`` of the previous release, with its own database seeded by ``load_test.py``
since prepared pages belong to the code that prepared them), and prints the ratio.

Each run works on a new copy of the seed ``load_test.py --reuse-seed`` kept (``<database>_seed``, the campaign
before any load), so every run of either tree starts from the same rows. The count grows with the history already
there (a new worker's first pairs with the item's earlier workers, the fullest items the claim leads it to), and on
databases that load runs had left at lengths of their own one tree's count moved by half between two runs. Without
a seed the database is used as it is, and the script says so. Each run also starts from empty Redis dbs of its own
(:data:`COUNTING_REDIS_DB` and the next, for the cache: what a run kept under a worker's ids would otherwise be read
by the next run's worker of the same ids) and with one secret key (it salts each worker's order of items: a key per
run gave each run other items to claim).

PostgreSQL's and Redis's own work and the kernel's (each round trip's system calls) are not counted: count
statements and round trips for those (``tests/integration/test_prepared_pages.py``).

    .venv/bin/python benchmarks/load_test.py --users 8 --duration 10 --reuse-seed --database factlab_bench_new
    git worktree add ../previous <commit> && ln -s "$PWD/.venv" ../previous/.venv
    (cd ../previous && .venv/bin/python benchmarks/load_test.py --users 8 --duration 10 --reuse-seed --database factlab_bench_prev)
    .venv/bin/python benchmarks/cycle_instructions.py --database factlab_bench_new \\
        --baseline-tree ../previous --baseline-database factlab_bench_prev

Each run under valgrind takes minutes (Python runs some fifty times slower there).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
TASK_DATA = re.compile(r'<script id="task-data" type="application/json">(.*?)</script>', re.DOTALL)
COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")
# The counted runs' Redis dbs (this one for the broker, the next for the cache), emptied before each run.
COUNTING_REDIS_DB = 14


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database", default="factlab_bench", help="a database load_test.py seeded with this tree's code")
    parser.add_argument("--baseline-tree", type=Path, default=None, help="another checkout to count the same way")
    parser.add_argument("--baseline-database", default=None, help="its database, seeded with its code")
    parser.add_argument("--workers", type=int, default=3, help="annotators, each with its own session")
    parser.add_argument("--warm", type=int, default=5, help="cycles per annotator before counting (caches, prepared statements)")
    parser.add_argument("--short", type=int, default=2, help="measured cycles per annotator in the first run")
    parser.add_argument("--long", type=int, default=8, help="measured cycles per annotator in the second run")
    parser.add_argument("--cycles-only", action="store_true", help=argparse.SUPPRESS)  # the child: run the cycles
    parser.add_argument("--measured", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.baseline_tree is not None and not args.baseline_database:
        parser.error("--baseline-tree needs --baseline-database (a database seeded with that tree's code)")
    if args.long <= args.short:
        parser.error("--long must be more than --short")
    return args


def seeded_campaign_for_cycles():
    """The running FRANK campaign of a database ``load_test.py`` seeded, opened so that nobody runs out of items or is
    blocked (as in the load benchmark), and its task page's URL. Defined here, not in ``_bench_common``: this file's
    cycles also run inside other checkouts, whose helpers may predate it."""
    from django.conf import settings
    from django.urls import reverse

    from annotate.models import Campaign

    settings.ALLOWED_HOSTS = ["*"]
    campaign = Campaign.objects.filter(kind="frank", status="running").order_by("id").first()
    if campaign is None:
        sys.exit("no running FRANK campaign in this database: seed it with benchmarks/load_test.py --database NAME")
    Campaign.objects.filter(pk=campaign.pk).update(redundancy=1000, trap_block_threshold=0.0, control_block_threshold=0.0)
    return campaign, reverse("annotate:frank-task", args=[campaign.slug])


def run_cycles(args: argparse.Namespace) -> int:
    """The child: ``--warm`` then ``--measured`` cycles for each of ``--workers`` new annotators."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "factlab.settings")
    import django

    django.setup()
    from django.test import Client

    from tests.factories import make_worker, qualify

    campaign, task_url = seeded_campaign_for_cycles()
    rng = random.Random(1)

    def cycle(client: Client) -> bool:
        found = TASK_DATA.search(client.get(task_url).content.decode())
        if found is None:
            return False
        data = json.loads(found.group(1))
        # The load benchmark's annotators: mostly "yes", sometimes an entity error, so the checks that read a
        # worker's answers against known labels run as they do there.
        body = {"submission_key": data["submission_key"], "summaries": [
            {"answers": [{"factual": True, "categories": []} if rng.random() < 0.8 else {"factual": False, "categories": ["EntE"]}
                         for _ in summary["sentences"]]} for summary in data["summaries"]]}
        if data.get("entity_options"):
            article = " ".join(data["article"]).lower()
            body["entity_choice"] = next((i for i, o in enumerate(data["entity_options"]) if o.lower() not in article), 0)
        return client.post(data["urls"]["submit"], body, content_type="application/json").status_code == 200

    clients = []
    for _ in range(args.workers):
        worker = make_worker(f"instructions-{uuid.uuid4().hex[:12]}")
        qualify(worker, campaign)
        client = Client()
        client.force_login(worker.user)
        clients.append(client)
    for client in clients:
        for _ in range(args.warm):
            cycle(client)
    started, done = time.process_time(), 0
    for _ in range(args.measured):
        for client in clients:
            done += cycle(client)
    print(json.dumps({"cycles": done, "cpu_ms_per_cycle": round(1000 * (time.process_time() - started) / max(done, 1), 2)}))
    return 0


def counted(tree: Path, database: str, args: argparse.Namespace, measured: int) -> tuple[int, int]:
    """(instructions, cycles) of one child run under callgrind in ``tree`` against a new copy of ``database``'s
    seed (``database`` itself where it has none)."""
    from benchmarks._bench_common import copy_seed, drop_copy

    copy = f"{database}_counted"
    if not copy_seed(database, copy):
        print(f"{database} has no seed kept by load_test.py --reuse-seed: counting on it as it is", file=sys.stderr)
        copy = None
    try:
        return _counted_on(tree, copy or database, args, measured)
    finally:
        if copy is not None:
            drop_copy(copy)


def _counted_on(tree: Path, database: str, args: argparse.Namespace, measured: int) -> tuple[int, int]:
    from benchmarks._bench_common import bench_env, flush_redis

    env = bench_env(database=database, redis_db=COUNTING_REDIS_DB)
    env.update(
        # One key for every run: the key salts each worker's order of items (the claim's candidates), so a key of
        # its own gave each run other items, other pages and counts a tenth apart on the same seed and code.
        DJANGO_SECRET_KEY="instructions-" + "k" * 50,
        PYTHONWARNINGS="ignore", PYTHONHASHSEED="0",  # the same string hashes (set and dict orders) in every run
    )
    # As the database, the cache starts empty: what an earlier run kept under the same keys (the copy of the seed
    # gives each run's workers the same ids) made a run's count depend on the run before it.
    flush_redis(COUNTING_REDIS_DB, with_cache=True)
    with tempfile.TemporaryDirectory() as out:
        command = [
            "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}/callgrind.out", str(tree / ".venv/bin/python"),
            str(tree / "benchmarks/cycle_instructions.py") if (tree / "benchmarks/cycle_instructions.py").exists() else __file__,
            "--cycles-only", f"--measured={measured}", f"--workers={args.workers}", f"--warm={args.warm}",
        ]
        run = subprocess.run(command, cwd=tree, env={**env, "PYTHONPATH": str(tree)}, capture_output=True, text=True)
    found = COLLECTED.search(run.stderr)
    results = [line for line in run.stdout.splitlines() if line.startswith("{")]
    if run.returncode != 0 or found is None or not results:
        sys.exit(f"the run in {tree} failed ({run.returncode}):\n{run.stderr[-3000:]}")
    return int(found.group(1)), json.loads(results[-1])["cycles"]


def per_cycle(tree: Path, database: str, args: argparse.Namespace) -> float:
    short_count, short_cycles = counted(tree, database, args, args.short)
    long_count, long_cycles = counted(tree, database, args, args.long)
    if long_cycles <= short_cycles:
        sys.exit(f"no more cycles in the long run than in the short one ({tree})")
    return (long_count - short_count) / (long_cycles - short_cycles)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.cycles_only:
        sys.path.insert(0, os.getcwd())
        return run_cycles(args)
    sys.path.insert(0, str(REPO_ROOT))  # this tree's helpers for the parent; each child runs its own tree's code
    this = per_cycle(REPO_ROOT, args.database, args)
    print(f"this tree ({REPO_ROOT}): {this / 1e6:.1f} M instructions per item cycle")
    if args.baseline_tree is not None:
        baseline = per_cycle(args.baseline_tree.resolve(), args.baseline_database, args)
        print(f"baseline ({args.baseline_tree}): {baseline / 1e6:.1f} M instructions per item cycle")
        print(f"ratio this / baseline: {this / baseline:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
