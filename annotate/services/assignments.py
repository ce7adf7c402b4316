"""Handing out items and accepting submissions: the mechanism shared by FRANK and BUMP campaigns.

Guarantees (tested against PostgreSQL under concurrency):

* an item never has more than ``campaign.redundancy`` live (active or submitted) assignments (adaptive
  campaigns: its current worker target, ``services/adaptive.py``): the item row is locked
  (``SELECT ... FOR UPDATE``) while its live assignments are counted and one is added;
* a claim costs the same in a campaign of 1k or 100k items: candidates come from an index on the item's
  stored live count (``services/live_counts.py`` keeps it; see ``benchmarks/claim_scaling.py``);
* a worker never gets the same item twice: a unique constraint on (item, worker);
* a submission is stored once: the assignment row is locked, a repeated submit with the same
  ``submission_key`` returns the stored result, any other submit of a closed assignment is refused;
* a submit after expiry, after blocking or for someone else's assignment is refused and stores nothing.
"""
from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connections, router, transaction
from django.db.models import BooleanField, CharField, Count, Exists, F, Func, OuterRef, Q, Subquery, Value
from django.db.models.functions import MD5, Cast, Coalesce, Concat
from django.utils import timezone

from annotate.models import (
    LIVE_ASSIGNMENT_STATUSES,
    Assignment,
    AssignmentStatus,
    Campaign,
    Item,
    Participation,
    Worker,
)
from annotate.protocols import Protocol, SubmissionResult, protocol_for
from annotate.rows import CompiledQueries, CompiledQuery, LockedRowAsSeen, unique_row, write_together
from factlab.jobs import ITEM_SUBMISSIONS_LOCK

from .adaptive import open_items_filter, schedule_refit, slot_limit
from .attention import with_reading_words
from .bonuses import award_submission_pay_and_bonus
from .check_counts import count_submission
from .control_items import arrange_candidates
from .errors import AssignmentClosed, InvalidSubmission, NotEligible, NotYourAssignment
from .independence import tally_submission_pairs
from .live_counts import close_assignments
from .participation import apply_quality_rules, block_participation, eligibility_problem, get_participation, reading_check_block_reason
from .pay_rules import refuse_pay_of_blocking_submission, unsettled_pending_pay

CANDIDATE_WINDOW = 25
CANDIDATE_ROUNDS = 4
#: Items at the head of the campaign's order among which each worker's own order picks (a bounded range scan).
CLAIM_BAND = CANDIDATE_WINDOW * 4


def _unattended(campaign: Campaign) -> Q:
    cutoff = timezone.now() - timedelta(minutes=campaign.unattended_release_minutes)
    return Q(last_seen_at__isnull=True, created_at__lt=cutoff) | Q(last_seen_at__lt=cutoff)


# When each campaign's abandoned slots were last looked for by a claim in this process (time.monotonic()).
_last_sweep: dict[int, float] = {}


def _claim_sweep_due(campaign: Campaign) -> bool:
    """Whether a claim should look for abandoned slots now: at most once per ``FACTLAB_SLOT_SWEEP_SECONDS``
    per campaign and process (always when it is 0)."""
    interval = settings.FACTLAB_SLOT_SWEEP_SECONDS
    now = time.monotonic()
    last = _last_sweep.get(campaign.pk)
    if interval > 0 and last is not None and now - last < interval:
        return False
    _last_sweep[campaign.pk] = now
    return True


def free_abandoned_slots(campaign: Campaign) -> int:
    """Expire the campaign's active assignments past their deadline or unattended (see below), in one
    query when there are none (most calls); returns how many were expired."""
    active = Assignment.objects.filter(item__campaign=campaign, status=AssignmentStatus.ACTIVE)
    if not active.filter(Q(expires_at__lt=timezone.now()) | _unattended(campaign)).exists():
        return 0
    return expire_stale_assignments(campaign) + release_unattended_assignments(campaign)


def expire_stale_assignments(campaign: Campaign) -> int:
    """Mark active assignments past their deadline as expired, freeing their slot. Returns how many."""
    stale = Assignment.objects.filter(item__campaign=campaign, status=AssignmentStatus.ACTIVE, expires_at__lt=timezone.now())
    # The partial index on active deadlines answers this at no cost when nothing is stale (most calls).
    if not stale.exists():
        return 0
    return close_assignments(stale, AssignmentStatus.EXPIRED, skip_locked=True)


def mark_assignment_seen(assignment_id: int, user_id: int, campaign_slug: str) -> bool:
    """The task page of the user's active assignment ``assignment_id`` in the campaign ``campaign_slug`` is open
    (its heartbeat): the assignment's ``last_seen_at`` becomes now, which keeps it from being released as
    unattended. False when no such active assignment is the user's.

    One statement whose SQL is built once per database: every open task page sends a heartbeat every 15 to 60 s,
    and building the ORM's update with its two joins cost more CPU than the rest of that request.
    """
    connection = connections[router.db_for_write(Assignment)]
    sql = _SEEN_STATEMENTS.get(connection.alias)
    if sql is None:
        quote = connection.ops.quote_name

        def table(model) -> str:
            return quote(model._meta.db_table)

        def column(model, name: str) -> str:
            return quote(model._meta.get_field(name).column)

        sql = (
            f"UPDATE {table(Assignment)} SET {column(Assignment, 'last_seen_at')} = %s "
            f"WHERE {column(Assignment, 'id')} = %s AND {column(Assignment, 'status')} = %s "
            f"AND {column(Assignment, 'worker')} = "
            f"(SELECT w.{column(Worker, 'id')} FROM {table(Worker)} w WHERE w.{column(Worker, 'user')} = %s) "
            f"AND EXISTS (SELECT 1 FROM {table(Item)} i JOIN {table(Campaign)} c ON c.{column(Campaign, 'id')} = i.{column(Item, 'campaign')} "
            f"WHERE i.{column(Item, 'id')} = {table(Assignment)}.{column(Assignment, 'item')} AND c.{column(Campaign, 'slug')} = %s)"
        )
        _SEEN_STATEMENTS[connection.alias] = sql
    now = Assignment._meta.get_field("last_seen_at").get_db_prep_save(timezone.now(), connection)
    with connection.cursor() as cursor:
        cursor.execute(sql, [now, assignment_id, AssignmentStatus.ACTIVE.value, user_id, campaign_slug])
        return cursor.rowcount > 0


_SEEN_STATEMENTS: dict[str, str] = {}


def release_unattended_assignments(campaign: Campaign) -> int:
    """Expire active assignments whose page never sent a heartbeat, or stopped sending them, for
    ``campaign.unattended_release_minutes``: claimed-and-abandoned slots (hoarding) go back to others."""
    unattended = Assignment.objects.filter(item__campaign=campaign, status=AssignmentStatus.ACTIVE).filter(_unattended(campaign))
    if not unattended.exists():
        return 0
    # Through close_assignments, so the items' stored live counts free the slots too.
    return close_assignments(unattended, AssignmentStatus.EXPIRED, skip_locked=True)


def current_assignment(worker: Worker, campaign: Campaign) -> Assignment | None:
    """The worker's live assignment in the campaign (at most one: claims are serialised per participation)."""
    # Most claims find none (the worker submitted the last item): a probe of ids first, which is cheap to
    # build, and the assignment with its relations only when there is one.
    found = _LIVE_ASSIGNMENT_ID.row(worker_id=worker.pk, campaign_id=campaign.pk, now=timezone.now())
    if found is None:
        return None
    return _assignment_query(campaign.kind).row(assignment_id=found)


def _live_assignments(worker_id, campaign_id, now):
    """The worker's live assignments in the campaign: active and not expired at ``now`` (the values may be outer
    references: the claim's lock of the participation reads the id with it)."""
    return Assignment.objects.filter(worker_id=worker_id, item__campaign_id=campaign_id, status=AssignmentStatus.ACTIVE, expires_at__gte=now)


_LIVE_ASSIGNMENT_ID = CompiledQuery(
    lambda worker_id, campaign_id, now: _live_assignments(worker_id, campaign_id, now).values_list("pk", flat=True)[:1],
    worker_id=int, campaign_id=int, now=datetime,
)
_ASSIGNMENT = CompiledQueries()


def _assignment_query(kind: str) -> CompiledQuery:
    """An assignment with its item and the protocol's relations (compiled once per campaign kind)."""
    return _ASSIGNMENT.get(kind, lambda: _assignment_with(protocol_for(kind).assignment_relations))


def _assignment_with(relations: tuple[str, ...]) -> CompiledQuery:
    return CompiledQuery(
        lambda assignment_id: Assignment.objects.filter(pk=assignment_id).select_related("item", *relations)[:1],
        assignment_id=int,
    )


def _candidate_items(worker: Worker, campaign: Campaign, network: str = "") -> Callable[[int], list[Item]]:
    """Items the worker has not had, with a free slot: the campaign's next ``CLAIM_BAND`` items (most advanced
    first, then in campaign order), served in an order of the worker's own; returned as a function of how many
    to read (``first(n)``: the protocol's order decides).

    The band is an index range scan on (campaign, for_experts, -live_count, position, id) with one unique-index
    probe per row for the worker's own assignments: the cost does not grow with the campaign. Within it, items
    that someone claiming from the worker's network (``network``) holds or judged come last, and the rest in
    :func:`worker_item_rank` order: no two workers share an order, so a second identity is not led onto the
    items the first has just answered (as "most advanced first" alone did), and an item's workers come from
    different networks where the band allows.

    Every claim runs it: compiled once per campaign, slot settings, shape (with a network or without) and count
    (:class:`~annotate.rows.CompiledQuery`), with the worker, the worker's order key and the network as values.
    """
    rank_key = f"{_rank_salt(campaign)}:{worker.pk}:"

    def first(n: int) -> list[Item]:
        settings_key = (campaign.pk, campaign.adaptive_redundancy, campaign.redundancy, campaign.min_workers, campaign.max_workers)
        key = (*settings_key, bool(network), n)
        query = _CANDIDATES.get(key, lambda: _candidates_query(campaign, with_network=bool(network), n=n))
        values = {"worker_id": worker.pk, "rank_key": rank_key}
        if network:
            values["network"] = network
        return query.rows(**values)

    return first


_CANDIDATES = CompiledQueries()


def _candidates_query(campaign: Campaign, *, with_network: bool, n: int) -> CompiledQuery:
    open_items = open_items_filter(campaign)  # the campaign's slot settings, compiled in (they are in the key)

    def build(worker_id, rank_key, network=""):
        # A scalar subquery, not NOT EXISTS: PostgreSQL turns NOT EXISTS into an anti-join, and its generic plan
        # (a prepared statement's after a few runs) read all of the worker's assignments for every candidate
        # (3 ms at 230 items, growing with the worker's history); a scalar subquery stays a per-row probe of
        # the unique (item, worker) index whatever the statistics say (0.75 ms).
        had = Subquery(Assignment.objects.filter(item=OuterRef("pk"), worker_id=worker_id).values("pk")[:1])
        band = (
            Item.objects.filter(open_items, campaign_id=campaign.pk, for_experts=False)
            .alias(had=had).filter(had__isnull=True)
            .order_by("-live_count", "position", "id")
            .values("pk")[:CLAIM_BAND]
        )
        order = [worker_item_rank(rank_key).asc(), "id"]
        if with_network:
            same_network = Exists(Assignment.objects.filter(item=OuterRef("pk"), network=network, status__in=LIVE_ASSIGNMENT_STATUSES))
            order.insert(0, same_network.asc())
        # What the claim reads of a candidate (a protocol's order may read its document or summary): the rest of an
        # item's columns, built into 25 models a claim, would be work for nothing.
        return Item.objects.filter(pk__in=band).order_by(*order).only("id", "is_control", "document_id", "summary_id")[:n]

    params = {"worker_id": int, "rank_key": str, **({"network": str} if with_network else {})}
    return CompiledQuery(build, **params)


def _rank_salt(campaign: Campaign) -> str:
    """The campaign's salt of :func:`worker_item_rank`, keyed with the server's secret, so the order cannot be
    computed, nor identities picked that share one."""
    return hmac.new(settings.SECRET_KEY.encode(), f"claim-order:{campaign.pk}".encode(), hashlib.sha256).hexdigest()[:24]


def worker_item_rank(rank_key) -> MD5:
    """A stable order of items of its own for each worker: the MD5 of the campaign's salt, the worker
    (``rank_key``: ``"{salt}:{worker id}:"``) and the item."""
    return MD5(Concat(Value(rank_key), Cast("id", output_field=CharField())))


def request_assignment(
    worker: Worker, campaign: Campaign, participation: Participation | None = None, *, network: str = "",
) -> Assignment | None:
    """Give the worker their unfinished assignment, or claim a new item for them; None when no work is left.

    Raises ``NotEligible`` when the worker may not work on the campaign now. ``participation``: the
    worker's in this campaign when the caller has it already. ``network``: the keyed hash of the request's
    network (``services.participation.client_address``), stored on the claim; items judged from it come last.
    """
    participation = participation or get_participation(worker, campaign)
    problem = eligibility_problem(participation)
    if problem:
        raise NotEligible(problem)
    # Abandoned slots are looked for at most every few seconds while there is work to hand out; before
    # telling a worker that none is left, always (a stale slot may be the last free one).
    swept = _claim_sweep_due(campaign)
    if swept:
        free_abandoned_slots(campaign)
    assignment = _claim(worker, campaign, participation, network)
    if assignment is None and not swept and free_abandoned_slots(campaign) > 0:
        assignment = _claim(worker, campaign, participation, network)
    return assignment


# The claim's lock of the participation, with the claims counted so far and the id of the worker's live assignment
# in the campaign. That id is read as the statement began, so it is trusted only when the row locked is the one
# seen then (every claim writes the row with its new assignment: a claim that committed while this one waited
# changed it); otherwise the claim looks again in a statement of its own.
_PARTICIPATION_LOCK = CompiledQuery(
    lambda participation_id, now: Participation.objects.select_for_update(of=("self",)).annotate(
        live_assignment=Subquery(_live_assignments(OuterRef("worker_id"), OuterRef("campaign_id"), now).values("pk")[:1]),
        as_seen=LockedRowAsSeen(Participation),
    ).filter(pk=participation_id).values_list("items_claimed", "live_assignment", "as_seen"),
    participation_id=int, now=datetime,
)


def _claim(worker: Worker, campaign: Campaign, participation: Participation, network: str = "") -> Assignment | None:
    """The worker's live assignment, or a newly claimed item; None when no item has a slot for them."""
    try:
        return _claim_in_transaction(worker, campaign, participation, network, first_try=True)
    except _Contended:
        # The first candidate was taken, full or being claimed: the whole claim again, each candidate in its own savepoint.
        return _claim_in_transaction(worker, campaign, participation, network, first_try=False)


def _claim_in_transaction(
    worker: Worker, campaign: Campaign, participation: Participation, network: str, *, first_try: bool,
) -> Assignment | None:
    """:func:`_claim` in one transaction. ``first_try``: the worker's first candidate is claimed without a savepoint of
    its own (two round trips fewer, on every page), and anything but a claimed item raises :class:`_Contended`,
    which rolls the whole transaction back (every lock it took released) for a second try that takes the
    candidates in turn, each in a savepoint."""
    protocol = protocol_for(campaign.kind)
    with transaction.atomic():
        # One claim at a time per worker and campaign (the participation row lock): requests from several
        # tabs at once would otherwise each claim a different item and hold several slots.
        participation.worker, participation.campaign = worker, campaign
        locked = _PARTICIPATION_LOCK.row(participation_id=participation.pk, now=timezone.now())
        if locked is None:  # removed since it was read (its campaign deleted): the entry page says what is left
            raise NotEligible("Your place in this campaign no longer exists.")
        participation.items_claimed, live_assignment, as_seen = locked
        if not as_seen:
            existing = current_assignment(worker, campaign)
        elif live_assignment is not None:
            existing = _assignment_query(campaign.kind).row(assignment_id=live_assignment)
        else:
            existing = None
        if existing is not None:
            return existing
        # Under load the whole window can fill up between the query and the row locks (other workers
        # took the last slots); the next query no longer lists those items, so look again, a bounded
        # number of times, rather than telling the worker that no work is left.
        for _ in range(CANDIDATE_ROUNDS):
            ordered = _ordered_candidates(worker, campaign, network)
            if not ordered:
                return None
            if first_try:
                try:
                    outcome = _claim_item_unguarded(ordered[0].pk, participation, protocol, wait=False, network=network)
                except IntegrityError as exc:  # the same worker's other request claimed it at the same moment
                    raise _Contended from exc
                if isinstance(outcome, Assignment):
                    return outcome
                raise _Contended
            # Items another request is claiming right now are skipped, not waited for: concurrent claims
            # spread over the window instead of queueing on its first row. Only when every other candidate
            # is full are those items tried again, waiting for their lock.
            busy = []
            for candidate in ordered:
                outcome = _claim_item(candidate.pk, participation, protocol, wait=False, network=network)
                if isinstance(outcome, Assignment):
                    return outcome
                if outcome is _BUSY:
                    busy.append(candidate.pk)
            for item_id in busy:
                outcome = _claim_item(item_id, participation, protocol, wait=True, network=network)
                if isinstance(outcome, Assignment):
                    return outcome
    return None


class _Contended(Exception):
    """Raised out of a claim's first try (:func:`_claim_in_transaction`) to roll it back and try again with savepoints."""


def _ordered_candidates(worker: Worker, campaign: Campaign, network: str = "") -> list[Item]:
    """The next window of items the worker may take, best first."""
    ordered = protocol_for(campaign.kind).order_candidates(worker, campaign, _candidate_items(worker, campaign, network), CANDIDATE_WINDOW)
    # Control items come at random turns, whatever the protocol's order (a worker cannot tell them by position).
    return arrange_candidates(campaign, ordered)


_LOCKED_ITEM = CompiledQueries()


def _locked_item_query(kind: str, *, wait: bool) -> CompiledQuery:
    """An item locked for a claim, waiting for another claim's lock (``wait``) or skipping it, with its document
    (without its long texts and its metadata, FRANK's entity pools of ~10 kB: the prepared page has what the
    layout needs) and the protocol's
    ``claimed_item_relations`` (compiled once per kind and way)."""
    def make() -> CompiledQuery:
        relations = protocol_for(kind).claimed_item_relations
        live_now = Assignment.objects.filter(item=OuterRef("pk"), status__in=LIVE_ASSIGNMENT_STATUSES).order_by().values("item").annotate(
            n=Count("pk")).values("n")
        return CompiledQuery(
            lambda item_id: Item.objects.select_for_update(of=("self",), skip_locked=not wait).select_related("document", *relations)
            .defer("document__text", "document__sentences", "document__entities", "document__metadata")
            .annotate(live_now=Coalesce(Subquery(live_now), Value(0))).filter(pk=item_id)[:1],
            item_id=int,
        )

    return _LOCKED_ITEM.get((kind, wait), make)
# How many assignments hold a slot of the item (no row: none).
_LIVE_SLOTS = CompiledQuery(
    lambda item_id: Assignment.objects.filter(item_id=item_id, status__in=LIVE_ASSIGNMENT_STATUSES)
    .values("item_id").annotate(live=Count("pk")).values_list("live", flat=True),
    item_id=int,
)

_BUSY = object()  # _claim_item: the item's row is locked by another claim (and ``wait`` was False)
_FULL = object()  # _claim_item_unguarded: the item has no free slot and its row is locked


def _claim_item(
    item_id: int, participation: Participation, protocol: Protocol, *, wait: bool = True, network: str = "",
) -> Assignment | object | None:
    """Assign the item to the worker under its row lock; None when it is full, gone or already theirs,
    ``_BUSY`` when another request holds its lock and ``wait`` is False (``SELECT … FOR UPDATE SKIP LOCKED``)."""
    try:
        with transaction.atomic():
            outcome = _claim_item_unguarded(item_id, participation, protocol, wait=wait, network=network)
            if outcome is _FULL:
                raise _ReleaseRowLock
            return outcome
    except _ReleaseRowLock:
        # Full, nothing written: rolling back to the savepoint releases the item's row lock, so a claim never
        # holds a lock on one item while it waits for another's (two claims doing so in turn would deadlock).
        return None
    except IntegrityError:
        # The same worker claimed this item from another request at the same moment.
        return None


def _claim_item_unguarded(
    item_id: int, participation: Participation, protocol: Protocol, *, wait: bool, network: str = "",
) -> Assignment | object | None:
    """:func:`_claim_item` without its savepoint: the caller releases what it locked (``_FULL``: the item was full
    and its row stays locked) and handles a unique conflict (``IntegrityError``: the same worker's other request).
    ``participation``: the worker's, locked by the claim, with its ``items_claimed`` as read under that lock."""
    worker, campaign = participation.worker, participation.campaign
    # The document comes along (without its long texts and metadata: the prepared page has what the layout needs).
    item = _locked_item_query(campaign.kind, wait=wait).row(item_id=item_id)
    if item is None:
        return None if wait or not Item.objects.filter(pk=item_id).exists() else _BUSY
    item.campaign = campaign
    # The real count under the lock decides; the stored count only found the candidate. The count read with the
    # lock is that of the statement's snapshot, taken before the row was locked (a claim that committed while this
    # one waited is missing from it), while the stored count comes from the row's latest version, and every writer
    # of the stored count writes the real number under this lock. So when the two agree the count is the real one;
    # when they differ (a claim or close since the snapshot, or a stored count gone astray) the real count is read
    # again in a statement of its own, with a fresh snapshot.
    live = item.live_now if item.live_now == item.live_count else (_LIVE_SLOTS.row(item_id=item.pk) or 0)
    if live >= slot_limit(campaign, item):
        if item.live_count == live:
            return _FULL
        Item.objects.filter(pk=item.pk).update(live_count=live)
        return None
    assignment = Assignment(
        item=item,
        worker=worker,
        expires_at=timezone.now() + timedelta(minutes=campaign.assignment_timeout_minutes),
        network=network,
    )
    protocol.prepare_assignment(assignment)
    item.live_count = live + 1
    # One round trip; a unique conflict (the same worker's other request) raises, as save() does. The participation's
    # count of claims is written too, which tells a claim that waited for its lock to look again (_PARTICIPATION_LOCK).
    claimed = Participation(pk=participation.pk, items_claimed=participation.items_claimed + 1)
    write_together(insert=[[assignment]], update=[(item, ["live_count"]), (claimed, ["items_claimed"])])
    participation.items_claimed = claimed.items_claimed
    protocol.assignment_claimed(assignment)
    return assignment


class _ReleaseRowLock(Exception):
    """Raised inside a claim's savepoint to roll it back (and so release the row lock taken in it)."""


def record_external_assignment_id(assignment: Assignment, external_id: str) -> None:
    """Remember the crowd platform's id for the assignment (first one wins; used for payment files)."""
    if external_id and not assignment.external_assignment_id:
        Assignment.objects.filter(pk=assignment.pk).update(external_assignment_id=external_id[:200])


def release_assignment(assignment: Assignment) -> None:
    """Give an unfinished assignment back (the worker skipped it); the slot goes to someone else."""
    close_assignments(Assignment.objects.filter(pk=assignment.pk), AssignmentStatus.RELEASED)


# The participation's counts of checked answers come along (not locked: only its holders write them), and
# whether pay held until its score existed is still to be settled (read as the statement began: trusted only
# when the row locked is the one seen then, since each submission, the only writer of such pay, also writes
# the participation).
_LOCKED_PARTICIPATION = CompiledQuery(
    lambda worker_id, campaign_id: Participation.objects.select_for_update(of=("self",)).select_related("checked_counts")
    .annotate(pending_pay_seen=unsettled_pending_pay(), as_seen=LockedRowAsSeen(Participation))
    .filter(worker_id=worker_id, campaign_id=campaign_id)[:1],
    worker_id=int, campaign_id=int,
)
_LOCKED_ASSIGNMENT = CompiledQueries()


class _ItemSubmissionTurn(Func):
    """True once the submission holds its item's turn: on PostgreSQL a lock on the item (``item_id``), held to
    the commit, so that submissions of one item take turns and the second sees the first (each shared item is
    added once to the tallies of the pairs of workers who share it: ``services.independence``). The demo's
    SQLite has one writer at a time: nothing to take there."""

    output_field = BooleanField()

    def as_sql(self, compiler, connection, **extra):
        return "1", []

    def as_postgresql(self, compiler, connection, **extra):
        item, params = compiler.compile(self.source_expressions[0])
        return f"(pg_advisory_xact_lock({ITEM_SUBMISSIONS_LOCK}, CAST(mod({item}, 2147483647) AS integer)) IS NOT NULL)", params


def _locked_assignment_query(kind: str) -> CompiledQuery:
    """The worker's assignment in a campaign of this kind, locked, with its item, campaign, the protocol's
    relations and its ``submission_annotations`` (compiled once per kind); for a protocol with sentence answers,
    the item's turn taken in the same statement (no round trip of its own)."""
    protocol = protocol_for(kind)
    return _LOCKED_ASSIGNMENT.get(kind, lambda: _locked_assignment_with(
        protocol.assignment_relations, item_turn=protocol.labels_sentences, annotations=protocol.submission_annotations()))


def _locked_assignment_with(relations: tuple[str, ...], *, item_turn: bool, annotations: dict[str, Any]) -> CompiledQuery:
    def build(assignment_id, worker_id, campaign_id):
        locked = Assignment.objects.select_for_update(of=("self",)).select_related("item__campaign", *relations)
        if annotations:
            locked = locked.annotate(**annotations)
        if item_turn:
            locked = locked.annotate(item_turn=_ItemSubmissionTurn(F("item_id")))
        return locked.filter(pk=assignment_id, worker_id=worker_id, item__campaign_id=campaign_id)[:1]

    return CompiledQuery(build, assignment_id=int, worker_id=int, campaign_id=int)


def lock_worker_assignment(assignment_id: int, worker: Worker, campaign: Campaign | None = None) -> tuple[Participation, Assignment]:
    """Lock the worker's participation, then their assignment and its item's turn to be submitted (call inside a
    transaction).

    Every writer takes these locks in this one order (participation, then assignment or item), as claiming
    and blocking do, so concurrent submits, claims and blocks queue up instead of deadlocking; only submissions
    take an item's turn, and they take it last. Raises
    ``NotYourAssignment`` (404) for a missing assignment, for someone else's and for one of another
    campaign than ``campaign`` (the page's) alike, so ids cannot be probed.
    """
    missing = NotYourAssignment("You have no task with this id; your answers were not stored.")
    if campaign is None:
        owner = unique_row(Assignment.objects.filter(pk=assignment_id).values("worker_id", "item__campaign_id", "item__campaign__kind"))
        if owner is None or owner["worker_id"] != worker.pk:
            raise missing
        campaign_id, kind = owner["item__campaign_id"], owner["item__campaign__kind"]
    else:
        campaign_id, kind = campaign.pk, campaign.kind
    participation = _LOCKED_PARTICIPATION.row(worker_id=worker.pk, campaign_id=campaign_id)
    if participation is None:  # no participation: no assignment of this worker in that campaign
        raise missing
    participation.may_have_pending_pay = participation.pending_pay_seen or not participation.as_seen
    assignment = _locked_assignment_query(kind).row(assignment_id=assignment_id, worker_id=worker.pk, campaign_id=campaign_id)
    if assignment is None:
        raise missing
    participation.worker, participation.campaign = worker, assignment.item.campaign
    return participation, assignment


@dataclass
class SubmitOutcome:
    assignment: Assignment
    result: SubmissionResult | None
    duplicate: bool = False
    blocked_reason: str | None = None


def submit_assignment(
    assignment_id: int, worker: Worker, payload: dict[str, Any], *, submission_key: str = "", campaign: Campaign | None = None,
    signals: dict[str, Any] | None = None,
) -> SubmitOutcome:
    """Store a worker's answers for an assignment exactly once.

    ``submission_key`` is a client-generated key (one per page load): a retried or double-clicked submit
    with the same key returns the first outcome without storing anything again. ``campaign``: the page's
    campaign (an assignment of another one is refused like a missing one). ``signals``: what the task page
    reported of the worker's attention, as ``services.attention.clean_signals`` keeps it (never a reason to
    refuse), stored with the item's reading words; None for a submission that came from no page.
    """
    if not isinstance(payload, dict):
        raise InvalidSubmission("The submission must be a JSON object.")
    submission_key = (submission_key or "")[:64]
    with transaction.atomic():
        participation, assignment = lock_worker_assignment(assignment_id, worker, campaign)
        if assignment.status == AssignmentStatus.SUBMITTED:
            if submission_key and submission_key == assignment.submission_key:
                return SubmitOutcome(assignment=assignment, result=None, duplicate=True)
            raise AssignmentClosed("This task was already submitted.")
        problem = eligibility_problem(participation)
        if assignment.status == AssignmentStatus.RELEASED and problem:
            # Blocking releases the worker's assignments: tell them why, not just that the task is gone.
            raise NotEligible(problem + " Your answers were not stored.")
        if assignment.status != AssignmentStatus.ACTIVE:
            raise AssignmentClosed(
                "This task expired before it was submitted; your answers were not stored."
                if assignment.status == AssignmentStatus.EXPIRED
                else "This task was released and can no longer be submitted."
            )
        campaign = assignment.item.campaign
        if problem:
            raise NotEligible(problem + " Your answers were not stored.")
        now = timezone.now()
        if assignment.expires_at < now:
            # Nothing is written here: the refusal rolls back, and expire_stale_assignments frees the slot.
            raise AssignmentClosed("This task expired before it was submitted; your answers were not stored.")

        # Set before the protocol runs so that its server-side elapsed time ends at the stored submission time.
        assignment.submitted_at = now
        result = protocol_for(campaign.kind).store_submission(assignment, payload)

        assignment.status = AssignmentStatus.SUBMITTED
        assignment.submission_key = submission_key
        assignment.lead_time_seconds = (now - assignment.created_at).total_seconds()
        # Not the layout: the claim stored it and no protocol changes it at submission (rewriting it cost a
        # submission its largest value to encode and the database a new copy of it).
        written = ["status", "submitted_at", "submission_key", "lead_time_seconds", "too_fast"]
        if signals is not None:
            assignment.signals = with_reading_words(assignment, signals)
            written.append("signals")

        participation.items_submitted += 1
        participation.trap_correct += result.traps_correct
        participation.trap_total += result.traps_total
        participation.too_fast_items += int(result.too_fast)  # feeds the fast-worker flag
        participation.entity_checks += result.reading_checks
        participation.entity_failures += result.reading_check_failures
        # Both rows are locked by this submission: written in one round trip.
        write_together(update=[
            (assignment, written),
            (participation, ["items_submitted", "trap_correct", "trap_total", "too_fast_items", "entity_checks", "entity_failures"]),
        ])
        count_submission(participation, assignment)  # what the block and pay rules below score, kept per participation
        tally_submission_pairs(participation, assignment)  # what the review of copied answers compares, kept per pair
        blocked_reason = reading_check_block_reason(participation, campaign) if result.reading_check_failures else None
        if blocked_reason is not None:
            # Screened out by this item's check: its answers are kept (as a blocking submission's are) and it
            # is not paid; the items submitted before are.
            block_participation(participation, blocked_reason)
        else:
            blocked_reason = apply_quality_rules(participation)
        if blocked_reason is None:
            award_submission_pay_and_bonus(participation, assignment, just_submitted=True)
        else:
            refuse_pay_of_blocking_submission(participation, assignment, blocked_reason)
        schedule_refit(campaign)  # adaptive redundancy: the label model is refitted off the request path
        from annotate.signals import campaign_data_changed

        campaign_data_changed.send(sender=Campaign, campaign=campaign)  # the admin pages' figures: once per burst, by a worker
    return SubmitOutcome(assignment=assignment, result=result, blocked_reason=blocked_reason)
