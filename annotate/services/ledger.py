"""The append-only bonus ledger's one writer: unique keys make a double payment impossible.

Used by the bonus rules (``bonuses``) and by the release of held pay (``pay_rules``).
"""
from __future__ import annotations

from decimal import Decimal

from django.db import IntegrityError, transaction

from annotate.models import Assignment, BonusEntry, Participation


def add_ledger_entry(
    *, key: str, participation: Participation, assignment: Assignment | None, amount: Decimal, reason: str,
    reversal: bool = False,
) -> bool:
    """Append one entry; False (and nothing written) when an entry with this key exists.

    Amounts are positive, except a ``reversal`` (negative: it cancels an earlier entry of the ledger).
    """
    if amount == 0 or (amount < 0) != reversal:
        return False
    try:
        with transaction.atomic():
            BonusEntry.objects.create(
                key=key, worker_id=participation.worker_id, campaign_id=participation.campaign_id,
                assignment=assignment, amount=amount, reason=reason,
            )
        return True
    except IntegrityError:
        return False
