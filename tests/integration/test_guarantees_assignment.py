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
from django.db.models import F
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotate.models import Assignment, AssignmentStatus, Item, Participation
from annotate.services.assignments import request_assignment, submit_assignment
from annotate.services.participation import get_participation
from tests.factories import make_campaign, make_document, make_worker
from tests.guarantee_support import (
    duplicate_worker_items,
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
def row_locked_elsewhere(model, pk: int, while_locked=lambda: None):
    """Another transaction, in a thread of its own, holds the row lock of ``model``'s row ``pk`` (having run
    ``while_locked`` under it) until the block ends, then commits; yields the event that releases it sooner."""
    locked, release = threading.Event(), threading.Event()

    def hold():
        try:
            with transaction.atomic():
                model.objects.select_for_update().get(pk=pk)
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


def waits_for_the_lock(release: threading.Event, work) -> list:
    """Run ``work`` in a thread of its own (its own connection) while another transaction holds a row lock it needs:
    it must still be waiting half a second later; then the lock is released (``release``) and its result returned
    (in a list: empty when it raised)."""
    outcome: list = []

    def run():
        try:
            outcome.append(work())
        finally:
            connection.close()

    waiter = threading.Thread(target=run)
    waiter.start()
    time.sleep(0.5)
    assert waiter.is_alive()  # waiting for the lock
    release.set()
    waiter.join(10)
    return outcome


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
    with row_locked_elsewhere(Item, first.pk) as release:
        started = time.monotonic()
        assignment = request_assignment(make_worker(), campaign)
        assert assignment.item_id == second.pk and time.monotonic() - started < 5  # the holder keeps its lock 10 s
        # Now the only free item is the locked one: the next claim waits for its lock, then gets it.
        # (waiting, not answering "nothing left")
        claimed = waits_for_the_lock(release, lambda: request_assignment(make_worker(), campaign))
        assert claimed and claimed[0].item_id == first.pk


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
    with row_locked_elsewhere(Item, first.pk), CaptureQueriesContext(connection) as contended:
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

    with row_locked_elsewhere(Item, item.pk, fill_the_last_slot) as release:
        outcome = waits_for_the_lock(release, lambda: request_assignment(second_worker, campaign))
    assert outcome == [None]
    assert over_assigned_items(campaign) == []
    assert Assignment.objects.filter(item=item).count() == 1


def test_a_claim_that_waited_for_the_same_workers_other_claim_gets_its_assignment():
    """Two claims of one worker at once (two tabs): the second waits for the participation's lock while the first
    makes an assignment. The live assignment the waiting claim reads with that lock comes from a snapshot taken
    before it waited, so it misses the first claim's; but every claim writes the participation (its count of
    claims), so the row locked is not the one seen then, and the live assignment is looked for again: the worker
    is shown the first claim's item and holds one assignment."""
    from annotate.frank.prepared import prepare_campaign

    require_postgresql()
    campaign = _campaign(items=2, redundancy=1)
    prepare_campaign(campaign)
    worker = make_worker()
    participation = get_participation(worker, campaign)
    first_claim: list = []
    with row_locked_elsewhere(Participation, participation.pk, lambda: first_claim.append(request_assignment(worker, campaign))) as release:
        outcome = waits_for_the_lock(release, lambda: request_assignment(worker, campaign))
    assert first_claim[0] is not None and outcome and outcome[0] is not None
    assert outcome[0].pk == first_claim[0].pk
    assert Assignment.objects.filter(worker=worker).count() == 1
    assert workers_with_several_active(campaign) == []
    assert Participation.objects.get(pk=participation.pk).items_claimed == 1


def test_a_submission_that_waited_for_the_participation_sees_pay_held_meanwhile():
    """The submission's lock of the participation says whether pay held until the worker's score existed is still to
    be settled (so that almost every submit reads no pay decisions). A submission that waited for that lock while
    another of the worker's submissions held such pay back reads the held pay from a snapshot taken before: the row
    locked is not the one seen then, so it looks for held pay again instead of trusting the statement's answer."""
    from annotate.models import PayDecision, PayDecisionKind
    from annotate.services.assignments import lock_worker_assignment
    from annotate.services.pay_rules import PENDING_PAY_PREFIX, settle_pending_pay

    require_postgresql()
    campaign = _campaign(items=3, redundancy=1)
    worker = make_worker()
    first = request_assignment(worker, campaign)
    submit_assignment(first.pk, worker, frank_answers(first), submission_key="first")
    second = request_assignment(worker, campaign)
    participation = get_participation(worker, campaign)
    PayDecision.objects.filter(worker=worker).delete()

    def locked_view() -> bool:
        with transaction.atomic():
            locked, _ = lock_worker_assignment(second.pk, worker, campaign)
            return locked.may_have_pending_pay

    assert locked_view() is False  # nothing held: the settlement reads nothing
    held = dict(worker_id=worker.pk, campaign_id=campaign.pk, assignment_id=first.pk, amount="0.10", reason="held until the score exists")

    def hold_first_items_pay():  # as a submission holding its pay does: the decision, and the participation's counters written
        PayDecision.objects.create(key=f"{PENDING_PAY_PREFIX}:{first.pk}", kind=PayDecisionKind.HELD, **held)
        Participation.objects.filter(pk=participation.pk).update(items_submitted=F("items_submitted"))

    with row_locked_elsewhere(Participation, participation.pk, hold_first_items_pay) as release:
        assert waits_for_the_lock(release, locked_view) == [True]
    assert locked_view() is True  # uncontended, the statement itself finds the held pay
    with transaction.atomic():
        locked, _ = lock_worker_assignment(second.pk, worker, campaign)
        settle_pending_pay(locked)
    assert locked_view() is False  # settled: nothing left to read


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
