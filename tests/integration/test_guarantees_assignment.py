"""Guarantee: no over-assignment. Many threads hammer ``request_assignment`` on PostgreSQL at once.

An item never has more than ``redundancy`` live (active or submitted) assignments, a worker never gets an
item twice, and a worker holds at most one active assignment per campaign; yet every slot gets filled.
"""
from __future__ import annotations

import threading
import time
from collections import Counter
from contextlib import contextmanager
from datetime import timedelta

import pytest
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotate.models import Assignment, AssignmentStatus, Item
from annotate.services.assignments import request_assignment, submit_assignment
from tests.factories import make_campaign, make_document, make_worker
from tests.guarantee_support import (
    duplicate_worker_items,
    fast_password_hashing,  # noqa: F401 - autouse fixture
    frank_answers,
    over_assigned_items,
    require_postgresql,
    run_in_threads,
    workers_with_several_active,
)

pytestmark = [pytest.mark.django_db(transaction=True)]


def _campaign(items: int, redundancy: int):
    campaign = make_campaign(redundancy=redundancy, entity_check_enabled=False, trap_rate=0.0)
    for _ in range(items):
        make_document(campaign, summaries=[["One sentence."]])
    return campaign


@contextmanager
def item_locked_elsewhere(item_id: int, while_locked=lambda: None):
    """Another transaction, in a thread of its own, holds the item's row lock (having run ``while_locked`` under it)
    until the block ends, then commits; yields the event that releases it sooner."""
    locked, release = threading.Event(), threading.Event()

    def hold():
        try:
            with transaction.atomic():
                Item.objects.select_for_update().get(pk=item_id)
                while_locked()
                locked.set()
                release.wait(10)
        finally:
            connection.close()

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert locked.wait(10)
        yield release
    finally:
        release.set()
        holder.join(10)


def test_concurrent_requests_never_exceed_redundancy_and_fill_every_slot():
    """16 threads, 8 workers (two threads each), 3 items x redundancy 2: claim, submit, claim again."""
    require_postgresql()
    campaign = _campaign(items=3, redundancy=2)
    workers = [make_worker() for _ in range(8)]
    claimed: list[list[int]] = []

    def hammer(worker):
        def run():
            mine = []
            for _ in range(12):  # bounded: more rounds than there are items
                assignment = request_assignment(worker, campaign)
                if assignment is None:
                    break
                mine.append(assignment.pk)
                try:
                    submit_assignment(assignment.pk, worker, frank_answers(assignment), submission_key=f"k{assignment.pk}")
                except Exception as exc:  # the twin thread may have submitted this assignment first
                    from annotate.services.errors import AssignmentClosed

                    if not isinstance(exc, AssignmentClosed):
                        raise
            claimed.append(mine)
            return len(mine)
        return run

    results, errors = run_in_threads([hammer(w) for w in workers for _ in range(2)])
    assert errors == []
    assert over_assigned_items(campaign) == []
    assert duplicate_worker_items(campaign) == []
    assert workers_with_several_active(campaign) == []
    # Every slot was filled exactly once: 3 items x 2 = 6 submitted assignments, none left active.
    statuses = Counter(Assignment.objects.filter(item__campaign=campaign).values_list("status", flat=True))
    assert statuses == {AssignmentStatus.SUBMITTED: 6}
    per_item = Counter(Assignment.objects.filter(item__campaign=campaign).values_list("item_id", flat=True))
    assert sorted(per_item.values()) == [2, 2, 2]
    assert sum(results) >= 6  # the two threads of a worker may both have been handed the same assignment


def test_concurrent_first_requests_of_many_workers_respect_redundancy():
    """16 workers ask for their first item at the same moment; 2 items x redundancy 3 = 6 claims at most."""
    require_postgresql()
    campaign = _campaign(items=2, redundancy=3)
    workers = [make_worker() for _ in range(16)]
    results, errors = run_in_threads([lambda w=w: request_assignment(w, campaign) for w in workers])
    assert errors == []
    got = [a for a in results if a is not None]
    assert len(got) == 6
    assert len({a.worker_id for a in got}) == 6
    assert over_assigned_items(campaign) == []
    assert sorted(Counter(a.item_id for a in got).values()) == [3, 3]


def test_one_worker_in_many_tabs_gets_one_assignment():
    require_postgresql()
    campaign = _campaign(items=5, redundancy=3)
    worker = make_worker()
    results, errors = run_in_threads([lambda: request_assignment(worker, campaign) for _ in range(12)])
    assert errors == []
    assert Assignment.objects.filter(worker=worker).count() == 1
    assert {a.pk for a in results} == {Assignment.objects.get(worker=worker).pk}


def test_expired_assignments_free_their_slot_but_not_for_the_same_worker():
    require_postgresql()
    campaign = _campaign(items=1, redundancy=1)
    first, second = make_worker(), make_worker()
    a = request_assignment(first, campaign)
    assert request_assignment(second, campaign) is None  # the only slot is taken
    Assignment.objects.filter(pk=a.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    b = request_assignment(second, campaign)
    assert b is not None and b.item_id == a.item_id
    assert Assignment.objects.get(pk=a.pk).status == AssignmentStatus.EXPIRED
    # The first worker never gets the item again, even with the slot free.
    Assignment.objects.filter(pk=b.pk).update(status=AssignmentStatus.RELEASED)
    assert request_assignment(first, campaign) is None


def test_claims_look_for_abandoned_slots_now_and_then_but_always_before_saying_no_work_is_left(settings):
    """With the production throttle a claim skips the sweep while work is left, yet a worker is never
    told that no work is left while an expired assignment holds the last slot."""
    settings.FACTLAB_SLOT_SWEEP_SECONDS = 3600
    campaign = _campaign(items=2, redundancy=1)
    first, second, third = make_worker(), make_worker(), make_worker()
    a = request_assignment(first, campaign)  # the campaign's first claim in this process sweeps
    Assignment.objects.filter(pk=a.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    b = request_assignment(second, campaign)  # work is left: no sweep
    assert b is not None and b.item_id != a.item_id
    assert Assignment.objects.get(pk=a.pk).status == AssignmentStatus.ACTIVE
    c = request_assignment(third, campaign)  # nothing free: the sweep runs at once and frees a's slot
    assert c is not None and c.item_id == a.item_id
    assert Assignment.objects.get(pk=a.pk).status == AssignmentStatus.EXPIRED
    assert request_assignment(make_worker(), campaign) is None


def test_database_refuses_a_second_assignment_of_the_same_item_to_a_worker():
    campaign = _campaign(items=1, redundancy=5)
    worker = make_worker()
    a = request_assignment(worker, campaign)
    with pytest.raises(IntegrityError), transaction.atomic():
        Assignment.objects.create(item_id=a.item_id, worker=worker, expires_at=timezone.now() + timedelta(hours=1))


def test_no_false_out_of_work_when_the_candidate_window_fills_up():
    """32 workers at once, 32 single-slot items: the first candidates fill up under the others' feet,
    yet every worker gets an item (nobody is told "no work left" while slots are free)."""
    require_postgresql()
    campaign = _campaign(items=32, redundancy=1)
    workers = [make_worker() for _ in range(32)]
    results, errors = run_in_threads([lambda w=w: request_assignment(w, campaign) for w in workers])
    assert errors == []
    assert sum(a is None for a in results) == 0
    assert len({a.item_id for a in results}) == 32
    assert over_assigned_items(campaign) == []


def test_a_claim_skips_an_item_another_request_is_claiming_and_waits_only_when_nothing_else_is_free():
    """SKIP LOCKED: while another transaction holds the first item's row, a claim takes the second item at
    once; with only the locked item left it waits for it rather than saying no work is left."""
    require_postgresql()
    from annotate.frank.prepared import prepare_campaign

    campaign = _campaign(items=2, redundancy=1)
    prepare_campaign(campaign)  # as after an import: the claim itself then does no NLP
    first, second = list(campaign.items.order_by("position", "id"))
    with item_locked_elsewhere(first.pk) as release:
        started = time.monotonic()
        assignment = request_assignment(make_worker(), campaign)
        assert assignment.item_id == second.pk and time.monotonic() - started < 5  # the holder keeps its lock 10 s
        # Now the only free item is the locked one: the next claim waits for its lock, then gets it.
        waiter_result: list = []
        waiter = threading.Thread(target=lambda: waiter_result.append(_claim_and_close(campaign)))
        waiter.start()
        time.sleep(0.5)
        assert waiter.is_alive()  # waiting, not answering "nothing left"
        release.set()
        waiter.join(10)
        assert waiter_result and waiter_result[0] == first.pk


def test_a_claim_whose_first_candidate_is_busy_leaves_nothing_of_its_first_try():
    """The worker's first candidate is claimed without a savepoint; when another transaction holds its row, the
    whole claim is rolled back and tried again candidate by candidate: the worker gets another item at once, one
    assignment in all, and every item's stored live count equals its real count. Uncontended, the claim takes no
    savepoint at all."""
    from annotate.frank.prepared import prepare_campaign
    from annotate.services.assignments import _ordered_candidates

    require_postgresql()
    campaign = _campaign(items=3, redundancy=1)
    prepare_campaign(campaign)
    worker = make_worker()
    first = _ordered_candidates(worker, campaign)[0]
    with item_locked_elsewhere(first.pk), CaptureQueriesContext(connection) as contended:
        assignment = request_assignment(worker, campaign)
    assert assignment is not None and assignment.item_id != first.pk
    assert Assignment.objects.filter(worker=worker).count() == 1
    assert {item.pk: item.live_count for item in Item.objects.filter(campaign=campaign)} == {
        item.pk: int(item.pk == assignment.item_id) for item in Item.objects.filter(campaign=campaign)}
    statements = [q["sql"] for q in contended.captured_queries]
    assert any(sql.startswith("SAVEPOINT") for sql in statements), statements  # the second try's, around each candidate

    other = make_worker()
    with CaptureQueriesContext(connection) as uncontended:
        claimed = request_assignment(other, campaign)
    assert claimed is not None
    assert not any("SAVEPOINT" in q["sql"] for q in uncontended.captured_queries), [q["sql"][:60] for q in uncontended.captured_queries]


def test_a_claim_that_waited_for_another_claim_of_the_last_slot_counts_that_claim():
    """A claim waiting for the row lock of an item whose last slot another transaction is filling: once that one
    commits, the waiting claim's count of live assignments (read with the lock, from a snapshot taken before it
    waited) misses the new assignment, while the stored count (the row's latest version) has it. The two
    disagree, so the real count is read again: the item is full, and nobody gets a second slot."""
    from annotate.frank.prepared import prepare_campaign

    require_postgresql()
    campaign = _campaign(items=1, redundancy=1)
    prepare_campaign(campaign)
    (item,) = campaign.items.all()
    first_worker, second_worker = make_worker(), make_worker()

    def fill_the_last_slot():
        Assignment.objects.create(item=item, worker=first_worker, expires_at=timezone.now() + timedelta(minutes=30))
        Item.objects.filter(pk=item.pk).update(live_count=1)

    outcome: list = []

    def claim():
        try:
            outcome.append(request_assignment(second_worker, campaign))
        finally:
            connection.close()

    with item_locked_elsewhere(item.pk, fill_the_last_slot) as release:
        claimer = threading.Thread(target=claim)
        claimer.start()
        time.sleep(0.5)
        assert claimer.is_alive()  # waiting for the item's lock
        release.set()
        claimer.join(10)
    assert outcome == [None]
    assert over_assigned_items(campaign) == []
    assert Assignment.objects.filter(item=item).count() == 1


def _claim_and_close(campaign) -> int | None:
    try:
        assignment = request_assignment(make_worker(), campaign)
        return assignment.item_id if assignment else None
    finally:
        connection.close()


def test_an_assignment_is_only_submitted_through_its_own_campaign():
    """The page's campaign must be the assignment's: another campaign's URL answers like a missing id."""
    from annotate.services.errors import NotYourAssignment

    mine, other = _campaign(items=1, redundancy=1), _campaign(items=1, redundancy=1)
    worker = make_worker()
    assignment = request_assignment(worker, mine)
    request_assignment(worker, other)
    with pytest.raises(NotYourAssignment):
        submit_assignment(assignment.pk, worker, frank_answers(assignment), submission_key="k", campaign=other)
    assert Assignment.objects.get(pk=assignment.pk).status == AssignmentStatus.ACTIVE
    outcome = submit_assignment(assignment.pk, worker, frank_answers(assignment), submission_key="k", campaign=mine)
    assert outcome.assignment.status == AssignmentStatus.SUBMITTED
