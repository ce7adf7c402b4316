"""Money: the append-only bonus ledger and every decision not to pay (refused or held) with its reason."""
from __future__ import annotations

from django.conf import settings
from django.db import models

from .campaigns import Campaign
from .work import Assignment
from .workers import Worker


class PayDecisionKind(models.TextChoices):
    REFUSED = "refused", "Bonus refused"
    HELD = "held", "Held for review"
    RELEASED = "released", "Released after review"


class PayDecision(models.Model):
    """Append-only record of every pay or bonus NOT paid at submission, and of releases, with the reason.

    Money owed is only ever in :class:`BonusEntry`; this table says why an amount is not there (yet).
    """

    key = models.CharField(max_length=200, unique=True)
    kind = models.CharField(max_length=10, choices=PayDecisionKind.choices)
    # Found by the index by worker, campaign and kind below (a second index by worker alone let the planner read
    # the worker's decisions of every campaign).
    worker = models.ForeignKey(Worker, on_delete=models.PROTECT, related_name="pay_decisions", db_index=False)
    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="pay_decisions")
    assignment = models.ForeignKey(Assignment, null=True, blank=True, on_delete=models.PROTECT, related_name="pay_decisions")
    amount = models.DecimalField(max_digits=8, decimal_places=2)
    reason = models.CharField(max_length=300)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [
            # Every submission's lock of the participation asks whether the worker has pay held in the campaign
            # (``pay_rules.unsettled_pending_pay``); its key prefix is a parameter, which a generic plan cannot
            # turn into an index range, so without this index that question read the whole ledger of every
            # campaign (2 ms at 1,800 decisions, growing with the ledger).
            models.Index(fields=["worker", "campaign", "kind"], name="paydecision_worker_campaign"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.amount} for {self.worker_id} in {self.campaign_id}: {self.reason}"


class BonusEntry(models.Model):
    """Append-only bonus ledger. ``key`` is unique so recomputing or retrying never pays twice."""

    key = models.CharField(max_length=200, unique=True)
    # Found by the index by worker, campaign and amount below (a second index by worker alone let the planner read
    # the worker's entries of every campaign).
    worker = models.ForeignKey(Worker, on_delete=models.PROTECT, related_name="bonuses", db_index=False)
    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="bonuses")
    assignment = models.ForeignKey(Assignment, null=True, blank=True, on_delete=models.PROTECT, related_name="bonuses")
    amount = models.DecimalField(max_digits=8, decimal_places=2)
    reason = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)
    paid_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "bonus entries"
        ordering = ["created_at"]
        indexes = [
            # Every task page shows what the ledger owes the worker in the campaign (``ledger.owed_in_campaign``):
            # by worker alone that sum read the worker's entries of every campaign; with the amount in the index
            # it reads this campaign's entries from the index alone.
            models.Index(fields=["worker", "campaign", "amount"], name="bonusentry_worker_campaign"),
        ]


__all__ = ["BonusEntry", "PayDecision", "PayDecisionKind"]
