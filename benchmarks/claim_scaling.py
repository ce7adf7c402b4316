"""Claim latency against campaign size: the claim must cost the same with 1k, 10k or 100k items.

For each size a FRANK campaign is built in a fresh ``factlab_bench*`` database with half of its items
already complete (``redundancy`` submitted assignments each, as mid-way through a campaign), then
``--claims`` qualified workers claim an item each through ``request_assignment`` (the service the task
page calls), one at a time. Printed per size: claim p50/p95, and, as the baseline in the same run, the
old candidate query (every item's live assignments counted per claim) timed on the same data.

Usage::

    .venv/bin/python benchmarks/claim_scaling.py --database factlab_bench_15_claims --sizes 1000 10000 100000
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._bench_common import bench_env, percentile, recreate_database, use_env_here

REDUNDANCY = 3


def build(size: int, workers: int) -> tuple:
    from datetime import timedelta

    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from annotate.models import (
        Assignment,
        AssignmentStatus,
        Campaign,
        CampaignStatus,
        Document,
        Item,
        Participation,
        QualificationStatus,
        Worker,
    )

    campaign = Campaign.objects.create(
        slug=f"claims-{size}", name=f"claims {size}", kind="frank", status=CampaignStatus.RUNNING,
        redundancy=REDUNDANCY, assignment_timeout_minutes=30,
    )
    doc = Document.objects.create(campaign=campaign, external_id="d", text="A sentence.", sentences=["A sentence."])
    Item.objects.bulk_create([Item(campaign=campaign, document=doc, position=i) for i in range(size)], batch_size=5000)
    User = get_user_model()
    crowd = User.objects.bulk_create([User(username=f"c{size}-{i}") for i in range(REDUNDANCY)])
    crowd_workers = Worker.objects.bulk_create([Worker(user=u) for u in crowd])
    done = list(Item.objects.filter(campaign=campaign).order_by("position").values_list("pk", flat=True)[: size // 2])
    now = timezone.now()
    Assignment.objects.bulk_create(
        [
            Assignment(item_id=item_id, worker=w, status=AssignmentStatus.SUBMITTED, expires_at=now + timedelta(minutes=30), submitted_at=now)
            for item_id in done
            for w in crowd_workers
        ],
        batch_size=5000,
    )
    Item.objects.filter(pk__in=done).update(live_count=REDUNDANCY)
    users = User.objects.bulk_create([User(username=f"w{size}-{i}") for i in range(workers)])
    claimers = Worker.objects.bulk_create([Worker(user=u) for u in users])
    Participation.objects.bulk_create(
        [Participation(worker=w, campaign=campaign, tutorial_done=True, qualification_status=QualificationStatus.PASSED) for w in claimers]
    )
    return campaign, claimers


def old_candidate_query(worker, campaign):
    """The candidate query before the stored live count: counts every item's assignments on each claim."""
    from django.db.models import Count, Q

    from annotate.models import LIVE_ASSIGNMENT_STATUSES, Item

    live = Count("assignments", filter=Q(assignments__status__in=LIVE_ASSIGNMENT_STATUSES))
    return list(
        Item.objects.filter(campaign=campaign, for_experts=False)
        .exclude(assignments__worker=worker)
        .annotate(live=live)
        .filter(live__lt=campaign.redundancy)
        .order_by("-live", "position", "id")[:25]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database", default="factlab_bench_claims")
    parser.add_argument("--redis-db", type=int, default=12)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--claims", type=int, default=200)
    parser.add_argument("--old-samples", type=int, default=10)
    args = parser.parse_args()

    recreate_database(args.database)
    use_env_here(bench_env(database=args.database, redis_db=args.redis_db))
    from django.core.management import call_command
    from django.db import connection
    from django.db.models import Count

    from annotate.models import LIVE_ASSIGNMENT_STATUSES, Assignment, Item
    from annotate.services.assignments import request_assignment

    call_command("migrate", verbosity=0, interactive=False)
    results = {}
    for size in args.sizes:
        campaign, workers = build(size, args.claims)
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        request_assignment(workers[0], campaign)  # warm: first query plans and caches
        timings = []
        for worker in workers[1:]:
            started = time.perf_counter()
            assignment = request_assignment(worker, campaign)
            timings.append((time.perf_counter() - started) * 1000)
            assert assignment is not None
        old = []
        for worker in workers[: args.old_samples]:
            started = time.perf_counter()
            old_candidate_query(worker, campaign)
            old.append((time.perf_counter() - started) * 1000)
        overfull = (
            Item.objects.filter(campaign=campaign)
            .filter(assignments__status__in=LIVE_ASSIGNMENT_STATUSES)
            .values("pk").annotate(n=Count("assignments"))
            .filter(n__gt=campaign.redundancy).count()
        )
        results[size] = (percentile(timings, 50), percentile(timings, 95), percentile(old, 50), percentile(old, 95))
        print(
            f"{size:>7} items: claim p50 {results[size][0]:6.1f} ms  p95 {results[size][1]:6.1f} ms   "
            f"old candidate query alone p50 {results[size][2]:7.1f} ms  p95 {results[size][3]:7.1f} ms   "
            f"claims {len(timings) + 1}, overfull items {overfull}, assignments {Assignment.objects.filter(item__campaign=campaign).count()}",
            flush=True,
        )
    smallest, largest = min(results), max(results)
    print(f"claim p95 at {largest} items / at {smallest} items: {results[largest][1] / results[smallest][1]:.2f}x (target <= 2x); "
          f"old query p95 ratio {results[largest][3] / results[smallest][3]:.1f}x")


if __name__ == "__main__":
    main()
