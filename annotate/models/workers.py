"""Workers and their standing in a campaign: participation (tutorial, qualification, quality, blocking, held pay), qualification attempts and crowd entry events."""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from .campaigns import Campaign


class Worker(models.Model):
    """An annotator. Crowd workers get a Django user created from their platform id."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="worker")
    provider = models.CharField(max_length=20, blank=True, help_text="'prolific', 'mturk' or empty for local accounts.")
    external_id = models.CharField(max_length=200, blank=True)
    is_blocked = models.BooleanField(default=False, help_text="Blocked from every campaign.")
    blocked_reason = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["provider", "external_id"], condition=~Q(external_id=""), name="worker_unique_external_id"
            )
        ]

    def __str__(self) -> str:
        return self.external_id or self.user.get_username()


class QualificationStatus(models.TextChoices):
    NOT_TAKEN = "not_taken", "Not taken"
    PASSED = "passed", "Passed"
    FAILED = "failed", "Failed"


class Participation(models.Model):
    """A worker's state in one campaign: tutorial, qualification, quality figures and blocking."""

    worker = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="participations")
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="participations")
    tutorial_done = models.BooleanField(default=False)
    qualification_status = models.CharField(max_length=10, choices=QualificationStatus.choices, default=QualificationStatus.NOT_TAKEN)
    qualification_attempts = models.PositiveSmallIntegerField(default=0)
    qualification_score = models.FloatField(null=True, blank=True)
    is_blocked = models.BooleanField(default=False)
    blocked_reason = models.CharField(max_length=300, blank=True)
    blocked_at = models.DateTimeField(null=True, blank=True)
    trap_total = models.PositiveIntegerField(default=0)
    trap_correct = models.PositiveIntegerField(default=0)
    entity_checks = models.PositiveIntegerField(default=0)
    entity_failures = models.PositiveIntegerField(default=0)
    items_submitted = models.PositiveIntegerField(default=0)
    # Written by every claim with its new assignment, under the participation's lock: the claim that waits for
    # that lock sees the row changed, so it knows to look again for the live assignment the other claim made.
    items_claimed = models.PositiveIntegerField(default=0, help_text="Items handed to the worker (claims); beside items submitted, those abandoned or in progress.")
    too_fast_items = models.PositiveIntegerField(default=0, help_text="Submitted items faster than the campaign's minimum time (server clock).")
    bonus_items = models.PositiveIntegerField(default=0, help_text="Items submitted while the trap score met the bonus threshold.")
    # Pay held for an admin's review (a consistently fast worker): see services/pay_rules.py.
    pay_held = models.BooleanField(default=False)
    pay_held_reason = models.CharField(max_length=300, blank=True)
    pay_held_at = models.DateTimeField(null=True, blank=True)
    # Counters at the last release, so that only items submitted since then can hold the pay again.
    released_items = models.PositiveIntegerField(default=0)
    released_too_fast_items = models.PositiveIntegerField(default=0)
    # From the campaign's label model (refitted off the request path): GLAD's ability, else the reliability.
    label_ability = models.FloatField(null=True, blank=True)
    label_reliability = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["worker", "campaign"], name="participation_unique")]

    def __str__(self) -> str:
        return f"{self.worker} in {self.campaign.slug}"

    @property
    def trap_score(self) -> float | None:
        """Continuous evaluation score: share of trap sentences judged correctly (None before any trap)."""
        return self.trap_correct / self.trap_total if self.trap_total else None

    #: "Consistently" too fast: at least this many items, and this share of them under the campaign's minimum.
    FAST_WORKER_MIN_ITEMS = 3
    FAST_WORKER_SHARE = 0.8

    @property
    def is_fast_worker(self) -> bool:
        """Items consistently faster than the campaign's ``min_seconds_per_sentence`` (server-measured)."""
        return self.items_submitted >= self.FAST_WORKER_MIN_ITEMS and self.too_fast_items >= self.FAST_WORKER_SHARE * self.items_submitted


class QualificationAttempt(models.Model):
    """One try at a campaign's qualification test, with its answers and score."""

    participation = models.ForeignKey(Participation, on_delete=models.CASCADE, related_name="qualification_tries")
    answers = models.JSONField(default=dict)
    score = models.FloatField()
    passed = models.BooleanField()
    # Keyed hash of the network address (services.participation.client_address): attempts per address.
    address = models.CharField(max_length=64, blank=True, default="", db_index=True)
    submitted_at = models.DateTimeField(auto_now_add=True)


class CrowdEventKind(models.TextChoices):
    IDENTITY_CREATED = "identity_created", "New crowd identity"
    IDENTITY_REUSED = "identity_reused", "Crowd id presented by another browser (refused)"
    RATE_LIMITED = "rate_limited", "New identity refused by a rate limit"
    BAD_LINK = "bad_link", "Study link without a valid token"


class CrowdEvent(models.Model):
    """What happened at a campaign's crowd entry that an admin should be able to see (and count)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="crowd_events")
    kind = models.CharField(max_length=20, choices=CrowdEventKind.choices)
    worker = models.ForeignKey(Worker, null=True, blank=True, on_delete=models.SET_NULL, related_name="crowd_events")
    provider = models.CharField(max_length=20, blank=True)
    external_id = models.CharField(max_length=200, blank=True)
    ip = models.GenericIPAddressField(null=True, blank=True)
    detail = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["campaign", "kind", "created_at"])]

    def __str__(self) -> str:
        return f"{self.kind} {self.provider}:{self.external_id} in {self.campaign.slug}"


__all__ = ["CrowdEvent", "CrowdEventKind", "Participation", "QualificationAttempt", "QualificationStatus", "Worker"]
