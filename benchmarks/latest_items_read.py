"""The submit's read of a worker's latest items against the length of the worker's history.

Every FRANK submission reads the worker's latest ``RECENT_ITEMS`` submitted items in the campaign
(:func:`annotate.services.predictable_answers._recent_items_with_answers`, for the predictable-answers check).
For each history length a campaign is built in a fresh ``factlab_bench*`` database: one worker who has
submitted that many items, and other workers' submissions beside them (the table a study has), then
``ANALYZE``. The read is timed through the service's own function with the index it has now (assignments by
worker, status and submission time: the latest entries read from the index's end) and, as the baseline in the
same run on the same data, with the index the release before had instead (worker and status: every submitted
assignment of the worker read and sorted), swapped in a transaction that is rolled back.

Usage::

    .venv/bin/python benchmarks/latest_items_read.py --histories 100 1000 5000 --repeats 200
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._bench_common import bench_env, recreate_database, reference_loop_ms, use_env_here

OTHER_WORKERS = 5


def build(history: int):
    """A campaign of ``history`` items, each submitted by the measured worker and by ``OTHER_WORKERS`` others."""
    from datetime import timedelta

    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from annotate.models import Assignment, AssignmentStatus, Campaign, CampaignStatus, Document, Item, Participation, Worker

    campaign = Campaign.objects.create(slug=f"latest-{history}", name=f"latest {history}", kind="frank", status=CampaignStatus.RUNNING)
    document = Document.objects.create(campaign=campaign, external_id="d", text="A sentence.", sentences=["A sentence."])
    items = Item.objects.bulk_create([Item(campaign=campaign, document=document, position=i) for i in range(history)], batch_size=5000)
    User = get_user_model()
    users = User.objects.bulk_create([User(username=f"latest-{history}-{i}") for i in range(OTHER_WORKERS + 1)])
    workers = Worker.objects.bulk_create([Worker(user=user) for user in users])
    start = timezone.now() - timedelta(days=30)
    Assignment.objects.bulk_create([
        Assignment(item=item, worker=worker, status=AssignmentStatus.SUBMITTED, expires_at=start,
                   submitted_at=start + timedelta(seconds=60 * position + offset))
        for position, item in enumerate(items) for offset, worker in enumerate(workers)
    ], batch_size=5000)
    return Participation.objects.create(worker=workers[0], campaign=campaign)


def median_ms(read, repeats: int) -> float:
    read()  # the statement prepared and its plan chosen
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        read()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database", default="factlab_bench_latest")
    parser.add_argument("--redis-db", type=int, default=13)
    parser.add_argument("--histories", type=int, nargs="+", default=[100, 1000, 5000])
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()

    recreate_database(args.database)
    use_env_here(bench_env(database=args.database, redis_db=args.redis_db))
    from django.core.management import call_command
    from django.db import connection, transaction

    from annotate.services.predictable_answers import RECENT_ITEMS, _recent_items_with_answers

    call_command("migrate", verbosity=0, interactive=False)
    print(f"machine speed: reference loop {reference_loop_ms()} ms; latest {RECENT_ITEMS} items of one worker, "
          f"{OTHER_WORKERS} other workers on every item, median of {args.repeats} reads")
    for history in args.histories:
        participation = build(history)
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")

        def read():
            recent, _ = _recent_items_with_answers(participation, None)
            assert len(recent) == min(history, RECENT_ITEMS)

        now = median_ms(read, args.repeats)
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("DROP INDEX assignment_worker_latest")
                cursor.execute("CREATE INDEX bench_worker_status ON annotate_assignment (worker_id, status)")
                cursor.execute("ANALYZE annotate_assignment")
            before = median_ms(read, args.repeats)
            transaction.set_rollback(True)
        print(f"{history:>6} items in the worker's history: {now:6.2f} ms with the index by submission time, "
              f"{before:6.2f} ms with the index by worker and status (ratio {now / before:.2f})", flush=True)


if __name__ == "__main__":
    main()
