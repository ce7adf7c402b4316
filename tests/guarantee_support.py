"""Helpers of the guarantee tests: valid FRANK answers, threads that hit PostgreSQL at once, invariant queries."""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from django.db import connection, connections
from django.db.models import Count, Q

from annotate.models import (
    LIVE_ASSIGNMENT_STATUSES,
    Assignment,
    AssignmentStatus,
    Campaign,
)


def frank_answers(assignment: Assignment, *, factual: bool = True) -> dict[str, Any]:
    """A complete FRANK submission for ``assignment`` (every sentence, traps included, answered alike).

    Reads only the sentence counts of the layout, as the page does; the trap positions are not used.
    """
    answer = {"factual": True, "categories": [], "seconds": 5} if factual else {"factual": False, "categories": ["EntE"], "seconds": 5}
    rows = []
    for spec in assignment.layout["summaries"]:
        n = spec["sentences"] + (1 if spec["trap"] else 0)
        rows.append({"answers": [dict(answer) for _ in range(n)]})
    return {"summaries": rows}


def require_postgresql() -> None:
    """Concurrency guarantees rest on PostgreSQL row locks; SQLite would serialise and prove nothing."""
    assert connection.vendor == "postgresql", "the guarantee tests run against PostgreSQL (set DATABASE_URL)"


def run_in_threads(targets: list[Callable[[], Any]], *, timeout: float = 60) -> tuple[list[Any], list[BaseException]]:
    """Start every target at the same moment (a barrier), each in its own thread with its own DB connection.

    Returns (results, errors) in target order / arrival order. Each thread closes its connection at the end
    so the test database can be flushed afterwards.
    """
    barrier = threading.Barrier(len(targets))
    results: list[Any] = [None] * len(targets)
    errors: list[BaseException] = []
    lock = threading.Lock()

    def runner(i: int, target: Callable[[], Any]) -> None:
        try:
            barrier.wait(timeout=timeout)
            results[i] = target()
        except BaseException as exc:
            with lock:
                errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=runner, args=(i, t), daemon=True) for i, t in enumerate(targets)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    assert not any(t.is_alive() for t in threads), "a thread did not finish in time"
    return results, errors


def over_assigned_items(campaign: Campaign) -> list[tuple[int, int]]:
    """(item id, live assignments) for every item of the campaign above its redundancy."""
    rows = (
        campaign.items.annotate(live=Count("assignments", filter=Q(assignments__status__in=LIVE_ASSIGNMENT_STATUSES)))
        .filter(live__gt=campaign.redundancy)
        .values_list("id", "live")
    )
    return list(rows)


def duplicate_worker_items(campaign: Campaign) -> list[dict]:
    return list(
        Assignment.objects.filter(item__campaign=campaign)
        .values("item_id", "worker_id")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
    )


def workers_with_several_active(campaign: Campaign) -> list[dict]:
    return list(
        Assignment.objects.filter(item__campaign=campaign, status=AssignmentStatus.ACTIVE)
        .values("worker_id")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
    )
