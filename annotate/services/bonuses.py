"""The bonus ledger: append-only entries with unique keys, so recomputing or retrying never pays twice.

Rules (campaign settings, FRANK's values by default): ``bonus_per_item`` for each item submitted while
the worker's balanced control score is at least ``bonus_min_score`` and that was not too fast (the
conditions and the hold of a consistently fast worker's pay: ``services/pay_rules.py``), and ``bonus_streak_amount``
more for every ``bonus_streak_size`` such items, decided with the score at the time of submission (the
ledger entry is written then and never revisited, so a later change of the score changes nothing).
BUMP edits earn ``bonus_per_item`` only once expert review accepts or corrects them
(``annotate.bump.pay.settle_edit_bonus``, held like any pay while the worker's pay is held);
a changed or undone decision appends a reversing entry. The base pay per item
is recorded in the same ledger at submission (reason "pay per item").
"""
from __future__ import annotations

import io
from decimal import Decimal

from django.db.models import Q, QuerySet, Sum

from annotate.models import (
    Assignment,
    BonusEntry,
    Campaign,
    Participation,
    Worker,
)
from annotate.protocols import protocol_for
from annotate.rows import CompiledQuery, add_to_column, insert_groups_unless_present
from annotate.safe_csv import SafeCsvWriter

from .ledger import add_ledger_entry, ledger_entry, owed_in_campaign
from .participation import reading_check_screen_outs
from .pay_rules import defer_pay, judge_submission


def award_submission_pay_and_bonus(participation: Participation, assignment: Assignment, *, just_submitted: bool = False) -> list[str]:
    """Record pay and bonuses earned by one submitted assignment (``just_submitted``: by the submission that
    stored it, see ``judge_submission``). Returns the keys written now."""
    campaign: Campaign = participation.campaign
    # Hold, too fast, balanced control score; the reasons recorded.
    verdict = judge_submission(participation, assignment, just_submitted=just_submitted)
    if verdict.held:
        return []
    pay_key = f"pay:{assignment.pk}"
    entries = []  # appended together: one statement for the pay and the item bonus
    deferral = protocol_for(campaign.kind).pay_deferral(participation, assignment)  # e.g. an edit beyond the unreviewed cap
    if deferral is not None:
        defer_pay(participation, assignment, deferral)
    else:
        entries.append(ledger_entry(key=pay_key, participation=participation, assignment=assignment, amount=campaign.pay_per_item,
                                    reason="pay per item"))
    # The protocol may settle the bonus later (an edit's after its review: settle_edit_bonus).
    item_key = f"item-bonus:{assignment.pk}"
    if protocol_for(campaign.kind).bonus_at_submission and verdict.bonus_allowed:
        quality = ("no quality checks in this campaign" if verdict.score is None
                   else f"balanced control score {verdict.score:.2f} >= {campaign.bonus_min_score:.2f}")
        entries.append(ledger_entry(key=item_key, participation=participation, assignment=assignment, amount=campaign.bonus_per_item,
                                    reason=f"item submitted with {quality}"[:200]))
    # The verdict's decisions (a bonus refused) and the entries: one statement.
    _, appended = insert_groups_unless_present([verdict.decisions, [entry for entry in entries if entry is not None]], by="key")
    written = [key for key in (pay_key, item_key) if key in appended]
    if item_key in appended:
        add_to_column(participation, "bonus_items", 1)
        if participation.bonus_items % campaign.bonus_streak_size == 0:
            streak = participation.bonus_items // campaign.bonus_streak_size
            streak_key = f"streak-bonus:{participation.pk}:{streak}"
            if add_ledger_entry(
                key=streak_key, participation=participation, assignment=assignment, amount=campaign.bonus_streak_amount,
                reason=f"{participation.bonus_items} items at the required quality",
            ):
                written.append(streak_key)
    return written


def ledger_totals(campaign: Campaign | None = None) -> QuerySet:
    """Per-worker totals of the ledger (optionally for one campaign): rows with worker id and total."""
    entries = BonusEntry.objects.all()
    if campaign is not None:
        entries = entries.filter(campaign=campaign)
    return entries.values("worker_id", "worker__provider", "worker__external_id", "worker__user__username").annotate(
        total=Sum("amount")
    ).order_by("worker_id")


def worker_total(worker: Worker | int, campaign: Campaign | None = None) -> Decimal:
    """What the ledger owes ``worker`` (a worker or its id), in ``campaign`` or in all campaigns."""
    worker_id = worker if isinstance(worker, int) else worker.pk
    if campaign is not None:  # every task page shows it: compiled once
        return _CAMPAIGN_TOTAL.row(worker_id=worker_id, campaign_id=campaign.pk) or Decimal("0.00")
    return BonusEntry.objects.filter(worker_id=worker_id).aggregate(total=Sum("amount"))["total"] or Decimal("0.00")


_CAMPAIGN_TOTAL = CompiledQuery(owed_in_campaign, worker_id=int, campaign_id=int)


PAYMENT_FORMATS = ("generic", "prolific", "mturk")


def ledger_csv(campaign: Campaign, *, prolific: bool = False, only_bonuses: bool = False, fmt: str = "generic") -> str:
    """Payment CSV in one of ``PAYMENT_FORMATS`` (every cell neutralised against formula injection):

    * ``generic``: worker, username, provider, external id, total (pay and bonuses);
    * ``prolific``: Prolific's bulk bonus, lines ``participant_id,amount`` (bonuses of Prolific workers, and the
      pay per item of those screened out by the reading check, whom the study reward does not pay);
    * ``mturk``: ``WorkerId,AssignmentId,BonusAmount,Reason``, one line per MTurk assignment that earned a
      bonus: what ``SendBonus`` needs (the HIT reward already paid the base pay).
    """
    fmt = "prolific" if prolific else fmt
    if fmt not in PAYMENT_FORMATS:
        raise ValueError(f"unknown payment format {fmt!r}; expected one of {', '.join(PAYMENT_FORMATS)}")
    entries = BonusEntry.objects.filter(campaign=campaign)
    if only_bonuses or fmt == "mturk":
        entries = entries.exclude(reason="pay per item")
    elif fmt == "prolific":
        # The study reward pays the items of an approved participant; one screened out by the reading check is
        # not approved, so the items they submitted are paid here (Prolific's way to pay partial work).
        entries = entries.exclude(Q(reason="pay per item") & ~Q(worker_id__in=reading_check_screen_outs(campaign).values("worker_id")))
    out = io.StringIO()
    writer = SafeCsvWriter(out)
    if fmt == "mturk":
        rows = (
            entries.filter(worker__provider="mturk").exclude(worker__external_id="")
            .values("worker__external_id", "assignment__external_assignment_id")
            .annotate(total=Sum("amount"))
            .order_by("worker__external_id", "assignment__external_assignment_id")
        )
        writer.writerow(["WorkerId", "AssignmentId", "BonusAmount", "Reason"])
        for row in rows:
            writer.writerow([row["worker__external_id"], row["assignment__external_assignment_id"] or "", f"{row['total']:.2f}",
                             f"Bonus for {campaign.name}"])
        return out.getvalue()
    rows = (
        entries.values("worker_id", "worker__provider", "worker__external_id", "worker__user__username")
        .annotate(total=Sum("amount"))
        .order_by("worker_id")
    )
    if fmt == "prolific":
        for row in rows:
            if row["worker__provider"] == "prolific" and row["worker__external_id"]:
                writer.writerow([row["worker__external_id"], f"{row['total']:.2f}"])
    else:
        writer.writerow(["worker_id", "username", "provider", "external_id", "total"])
        for row in rows:
            writer.writerow([row["worker_id"], row["worker__user__username"], row["worker__provider"], row["worker__external_id"], f"{row['total']:.2f}"])
    return out.getvalue()
