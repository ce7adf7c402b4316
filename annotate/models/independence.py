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


class PairTally(models.Model):
    """What two workers' answers on the items both submitted in a campaign add up to, as of the campaign's
    ``checks_version`` (what is a non-control sentence changes with gold): the counts a pair's statistics
    (``annotate.services.independence.PairCounts``) are computed from. A submission adds its own item to the
    tallies of the pairs it joins instead of comparing their whole history again; tallies of an older version
    (``checks_version`` None: being counted inside the submission that created it) are counted again from it."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="+")
    # The pair, lower worker id first.
    worker_a = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="+")
    worker_b = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="+")
    checks_version = models.PositiveIntegerField(null=True)
    shared_items = models.PositiveIntegerField(default=0)
    a_after_b = models.PositiveIntegerField(default=0)
    b_after_a = models.PositiveIntegerField(default=0)
    # On the shared non-control sentences: how many, how many with the same label, each worker's "Yes", the
    # same label and categories, the same per-sentence time.
    shared_sentences = models.PositiveIntegerField(default=0)
    agree = models.PositiveIntegerField(default=0)
    a_yes = models.PositiveIntegerField(default=0)
    b_yes = models.PositiveIntegerField(default=0)
    identical = models.PositiveIntegerField(default=0)
    same_times = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "worker_a", "worker_b"], name="pair_tally_once_per_pair"),
            models.CheckConstraint(condition=models.Q(worker_a__lt=models.F("worker_b")), name="pair_tally_pair_ordered"),
            models.CheckConstraint(
                condition=models.Q(a_after_b__lte=models.F("shared_items"), b_after_a__lte=models.F("shared_items"),
                                   agree__lte=models.F("shared_sentences"), identical__lte=models.F("agree")),
                name="pair_tally_counts_consistent",
            ),
        ]

    def __str__(self) -> str:
        return f"pair tally {self.worker_a_id}~{self.worker_b_id} in {self.campaign_id}: {self.shared_items} shared items"


__all__ = ["CopyFlag", "PairTally"]
