"""The live-assignment count of each item (``Item.live_count``), which makes a claim index-backed.

A claim reads the next items with a free slot from the index on (campaign, for_experts, live count,
position) instead of counting every item's assignments, so its cost does not grow with the campaign.
The count is a denormalised copy of "assignments of the item that are active or submitted":

* a claim sets it under the item's row lock from the real count (``assignments._claim_item``);
* every change of an assignment from live to expired or released goes through :func:`close_assignments`,
  which locks the items (in id order) and recomputes their counts from the assignments in the same
  transaction, so the last writer of an item's count always wrote the real number.

The claim re-counts under the lock before it hands out a slot, so a count can never let an item overfill.
"""
from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction
from django.db.models import Count, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from annotate.models import LIVE_ASSIGNMENT_STATUSES, Assignment, AssignmentStatus, Item


def refresh_live_counts(item_ids: Iterable[int]) -> None:
    """Recompute the live counts of these items from their assignments (call inside a transaction)."""
    ids = sorted(set(item_ids))
    if not ids:
        return
    # Lock first, in id order (no deadlock between two refreshes), so the update's snapshot sees every
    # claim that committed before the lock was granted.
    list(Item.objects.select_for_update().filter(pk__in=ids).order_by("pk").values_list("pk", flat=True))
    live = (
        Assignment.objects.filter(item=OuterRef("pk"), status__in=LIVE_ASSIGNMENT_STATUSES)
        .order_by()
        .values("item")
        .annotate(n=Count("pk"))
        .values("n")
    )
    Item.objects.filter(pk__in=ids).update(live_count=Coalesce(Subquery(live), Value(0)))


def close_assignments(assignments: QuerySet[Assignment], status: str, *, skip_locked: bool = False) -> int:
    """Move the active assignments of ``assignments`` to ``status`` (expired or released); returns how many.

    ``skip_locked`` leaves out assignments another transaction holds (the periodic expiry: a concurrent
    submit of that assignment decides its fate).
    """
    assert status in (AssignmentStatus.EXPIRED, AssignmentStatus.RELEASED)
    with transaction.atomic():
        rows = list(
            assignments.filter(status=AssignmentStatus.ACTIVE)
            .select_for_update(of=("self",), skip_locked=skip_locked)
            .order_by("pk")
            .values_list("pk", "item_id")
        )
        if not rows:
            return 0
        changed = Assignment.objects.filter(pk__in=[pk for pk, _ in rows]).update(status=status)
        refresh_live_counts(item_id for _, item_id in rows)
    return changed
