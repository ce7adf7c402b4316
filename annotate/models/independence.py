"""Independence of workers: pairs whose answers on unchecked sentences agree far beyond chance (copying)."""
from __future__ import annotations

from django.db import models

from .campaigns import Campaign
from .workers import Worker


class CopyFlag(models.Model):
    """Two workers of a campaign whose answers on non-control sentences agree far beyond what independent
    workers show (``annotate.services.independence``). Flags join into groups: a group's pay is held for
    review (``follower`` and every worker who answered after a partner), and label models count it once."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="copy_flags")
    # The pair, lower worker id first (one row per pair, whichever of them submitted last).
    worker_a = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="+")
    worker_b = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="+")
    shared_items = models.PositiveIntegerField()
    shared_sentences = models.PositiveIntegerField()
    identical_answers = models.PositiveIntegerField(help_text="Shared non-control sentences with the same label and categories.")
    kappa = models.FloatField(help_text="Cohen's kappa of the pair's factual labels on shared non-control sentences.")
    baseline_kappa = models.FloatField(null=True, blank=True, help_text="The same over the campaign's other pairs (None: too few).")
    # Shared items each submitted after the other did (the one who answers second can copy).
    a_after_b = models.PositiveIntegerField(default=0)
    b_after_a = models.PositiveIntegerField(default=0)
    evidence = models.CharField(max_length=300)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "worker_a", "worker_b"], name="copy_flag_once_per_pair"),
            models.CheckConstraint(condition=models.Q(worker_a__lt=models.F("worker_b")), name="copy_flag_pair_ordered"),
        ]

    def __str__(self) -> str:
        return f"copy flag {self.worker_a_id}~{self.worker_b_id} in {self.campaign_id}: {self.evidence}"


__all__ = ["CopyFlag"]
