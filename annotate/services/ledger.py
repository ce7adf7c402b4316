"""The append-only bonus ledger's one writer: unique keys make a double payment impossible.

Used by the bonus rules (``bonuses``) and by the release of held pay (``pay_rules``).
"""
from __future__ import annotations

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
    *, key: str, participation: Participation, assignment: Assignment | int | None, amount: Decimal, reason: str,
    reversal: bool = False,
) -> BonusEntry | None:
    """The entry :func:`add_ledger_entry` would append (``assignment``: the assignment or its id), unwritten
    (None for an amount it refuses), for :func:`append_ledger_entries` to write with others."""
    if amount == 0 or (amount < 0) != reversal:
        return None
    assignment_id = assignment.pk if isinstance(assignment, Assignment) else assignment
    return BonusEntry(key=key, worker_id=participation.worker_id, campaign_id=participation.campaign_id,
                      assignment_id=assignment_id, amount=amount, reason=reason)


def append_ledger_entries(entries: list[BonusEntry | None]) -> set[str]:
    """Append the entries (None: nothing) in one statement; the keys appended now (keys already in the ledger
    are skipped)."""
    return insert_all_unless_present([e for e in entries if e is not None], by="key")


def owed_in_campaign(worker_id, campaign_id) -> QuerySet:
    """What the ledger owes a worker in a campaign, as a one-row query of its total (no row: nothing owed).
    The values may be ids or outer references (the task page reads it as a subquery of the participation)."""
    return BonusEntry.objects.filter(worker_id=worker_id, campaign_id=campaign_id).values("worker_id").annotate(
        total=Sum("amount")).values_list("total", flat=True)
