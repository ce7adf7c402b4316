"""The append-only bonus ledger's one writer: unique keys make a double payment impossible.

Used by the bonus rules (``bonuses``) and by the release of held pay (``pay_rules``).
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from django.db.models import QuerySet, Sum

from annotate.models import Assignment, BonusEntry, Participation
from annotate.rows import insert_all_unless_present, insert_unless_present


def add_ledger_entry(
    *, key: str, participation: Participation, assignment: Assignment | None, amount: Decimal, reason: str,
    reversal: bool = False,
) -> bool:
    """Append one entry; False (and nothing written) when an entry with this key exists.

    Amounts are positive, except a ``reversal`` (negative: it cancels an earlier entry of the ledger).
    """
    entry = ledger_entry(key=key, participation=participation, assignment=assignment, amount=amount, reason=reason, reversal=reversal)
    return entry is not None and insert_unless_present(entry)


def ledger_entry(
    *, key: str, participation: Participation, assignment: Assignment | None, amount: Decimal, reason: str,
    reversal: bool = False,
) -> BonusEntry | None:
    """The entry :func:`add_ledger_entry` would append, unwritten (None for an amount it refuses), for
    :func:`append_ledger_entries` to write with others."""
    if amount == 0 or (amount < 0) != reversal:
        return None
    return BonusEntry(key=key, worker_id=participation.worker_id, campaign_id=participation.campaign_id,
                      assignment=assignment, amount=amount, reason=reason)


def append_ledger_entries(entries: list[BonusEntry | None]) -> set[str]:
    """Append the entries (None: nothing) in one statement; the keys appended now (the others were there)."""
    return insert_all_unless_present([e for e in entries if e is not None], by="key")


def owed_in_campaign(worker_id, campaign_id) -> QuerySet:
    """What the ledger owes a worker in a campaign, as a one-row query of its total (no row: nothing owed).
    The values may be ids or outer references (the task page reads it as a subquery of the participation)."""
    return BonusEntry.objects.filter(worker_id=worker_id, campaign_id=campaign_id).values("worker_id").annotate(
        total=Sum("amount")).values_list("total", flat=True)


@dataclass(frozen=True)
class LedgerEntry:
    """One positive amount to append for an assignment (see :func:`add_ledger_entries`)."""

    key: str
    assignment_id: int | None
    amount: Decimal
    reason: str


def add_ledger_entries(entries: list[LedgerEntry], *, participation: Participation) -> Decimal:
    """Append many positive entries of one worker in two queries; keys already in the ledger are skipped.

    For callers holding the participation's lock (no other writer of these keys meanwhile). Returns the
    amount appended now.
    """
    entries = [e for e in entries if e.amount > 0]
    if not entries:
        return Decimal("0.00")
    present = set(BonusEntry.objects.filter(key__in=[e.key for e in entries]).values_list("key", flat=True))
    new = [e for e in entries if e.key not in present]
    BonusEntry.objects.bulk_create([
        BonusEntry(key=e.key, worker_id=participation.worker_id, campaign_id=participation.campaign_id,
                   assignment_id=e.assignment_id, amount=e.amount, reason=e.reason)
        for e in new
    ], ignore_conflicts=True)
    return sum((e.amount for e in new), Decimal("0.00"))
