"""What workers produce and what is known about it: assignments, sentence judgements, trap answers, metric scores, expert and gold labels, fitted sentence labels."""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from .documents import Item, Summary, Trap
from .workers import Worker


class AssignmentStatus(models.TextChoices):
    ACTIVE = "active", "In progress"
    SUBMITTED = "submitted", "Submitted"
    EXPIRED = "expired", "Expired"
    RELEASED = "released", "Released"


LIVE_ASSIGNMENT_STATUSES = (AssignmentStatus.ACTIVE, AssignmentStatus.SUBMITTED)


class Assignment(models.Model):
    """A worker's claim on an item. At most ``campaign.redundancy`` live ones per item; never twice per worker."""

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="assignments")
    worker = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="assignments")
    status = models.CharField(max_length=10, choices=AssignmentStatus.choices, default=AssignmentStatus.ACTIVE)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    submitted_at = models.DateTimeField(null=True, blank=True)
    submission_key = models.CharField(max_length=64, blank=True, help_text="Client key of the accepted submission (idempotency).")
    lead_time_seconds = models.FloatField(null=True, blank=True)
    too_fast = models.BooleanField(default=False)
    # What the page showed, as the campaign's protocol records it when the item is claimed (server-side only; e.g.
    # FRANK's order of summaries, where traps went and the reading check's options). What the worker answered is
    # the protocol's own rows (e.g. FRANK's EntityAnswer, BUMP's Edit and Checkpoint), never this.
    layout = models.JSONField(default=dict, blank=True)
    # Platform details (MTurk assignment id, Prolific session id...).
    external_assignment_id = models.CharField(max_length=200, blank=True)
    # Last heartbeat of the task page (None: the page never reported being open); see release_unattended_assignments.
    last_seen_at = models.DateTimeField(null=True, blank=True)
    # What the page reported of the worker's attention with the submission (focus time, tab switches, copy and
    # paste events) and the words it gave to read: shown to the admin, never a reason to refuse (services/attention.py).
    signals = models.JSONField(default=dict, blank=True)
    # Keyed hash of the claiming request's network (services.participation.client_address): claims prefer items
    # no one from the same network has judged, so an item's workers come from different networks where possible.
    network = models.CharField(max_length=64, blank=True, default="")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["item", "worker"], name="assignment_once_per_worker")]
        indexes = [
            # An item's assignments by status, and by network: every claim asks, of each of its 100 candidate items,
            # whether someone from the claiming network holds or judged it; with the network in the index that is
            # a probe of the index alone, where reading each live assignment's row to compare networks was most
            # of the claim's database work.
            models.Index(fields=["item", "status", "network"], name="assignment_item_status_network"),
            # A worker's assignments by status, latest submitted last: the submit's predictable-answers check reads a
            # worker's latest submissions from its end (a few index entries), not the whole history sorted.
            models.Index(fields=["worker", "status", "submitted_at"], name="assignment_worker_latest"),
            # Expiry runs on every claim: find the active ones past their deadline without a scan.
            models.Index(fields=["expires_at"], condition=Q(status="active"), name="assignment_active_expiry"),
        ]

    def __str__(self) -> str:
        return f"assignment {self.pk} ({self.status})"


class JudgementSource(models.TextChoices):
    COLLECTED = "collected", "Collected here"
    IMPORTED = "imported", "Imported"
    # An LLM doing the human task (a pseudo-worker with provider "llm"): kept out of human aggregates.
    MODEL = "model", "Model annotator (LLM)"


class SentenceJudgement(models.Model):
    """A worker's answer for one summary sentence: factual or not, and the error categories."""

    summary = models.ForeignKey(Summary, on_delete=models.CASCADE, related_name="judgements")
    sentence_index = models.PositiveIntegerField()
    worker = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="judgements")
    assignment = models.ForeignKey(Assignment, null=True, blank=True, on_delete=models.CASCADE, related_name="judgements")
    factual = models.BooleanField()
    categories = models.JSONField(default=list, blank=True, help_text="FRANK category codes (empty when factual).")
    lead_time_seconds = models.FloatField(null=True, blank=True)
    source = models.CharField(max_length=10, choices=JudgementSource.choices, default=JudgementSource.COLLECTED)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["summary", "sentence_index", "worker"], name="judgement_once_per_worker"),
        ]
        indexes = [models.Index(fields=["summary", "sentence_index"])]


class TrapAnswer(models.Model):
    """A worker's answer on a trap sentence: quality control only, never part of the collected data."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="trap_answers")
    trap = models.ForeignKey(Trap, on_delete=models.CASCADE, related_name="answers")
    factual = models.BooleanField()
    categories = models.JSONField(default=list, blank=True)
    correct = models.BooleanField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["assignment", "trap"], name="trap_answer_once")]


class ReviewStatus(models.TextChoices):
    PENDING = "pending", "Awaiting review"
    ACCEPTED = "accepted", "Accepted"
    CORRECTED = "corrected", "Type corrected"
    REJECTED = "rejected", "Rejected"


class MetricSource(models.TextChoices):
    IMPORTED = "imported", "Imported"
    COMPUTED = "computed", "Computed here"


class MetricScore(models.Model):
    """A metric's value for a summary, unique per (summary, metric, configuration)."""

    summary = models.ForeignKey(Summary, on_delete=models.CASCADE, related_name="metric_scores")
    metric = models.CharField(max_length=100, help_text="Output name, e.g. rouge2, coco_sent, BARTScore.")
    config_key = models.CharField(max_length=64, blank=True, default="", help_text="Hash of the scorer configuration.")
    value = models.FloatField()
    source = models.CharField(max_length=10, choices=MetricSource.choices, default=MetricSource.COMPUTED)
    job_id = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["summary", "metric", "config_key"], name="metric_score_unique")]
        indexes = [models.Index(fields=["metric"])]


class ExpertLabel(models.Model):
    """An expert's label for a summary sentence (crowd-vs-expert agreement)."""

    summary = models.ForeignKey(Summary, on_delete=models.CASCADE, related_name="expert_labels")
    sentence_index = models.PositiveIntegerField()
    expert = models.CharField(max_length=150)
    factual = models.BooleanField()
    categories = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["summary", "sentence_index", "expert"], name="expert_label_unique")]


class GoldSource(models.TextChoices):
    IMPORTED = "imported", "Imported human labels"
    ADMIN = "admin", "Set by an admin or reviewer"
    CROWD = "crowd", "Certain crowd label"


class GoldLabel(models.Model):
    """The known label of one summary sentence: what control items are scored against (never sent to a page)."""

    summary = models.ForeignKey(Summary, on_delete=models.CASCADE, related_name="gold_labels")
    sentence_index = models.PositiveIntegerField()
    factual = models.BooleanField()
    category = models.CharField(max_length=10, blank=True, help_text="FRANK category code of the error, when known.")
    source = models.CharField(max_length=10, choices=GoldSource.choices)
    set_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    note = models.CharField(max_length=300, blank=True, help_text="Where the label comes from (rule or admin's note).")
    public = models.BooleanField(
        default=False,
        help_text="Published (e.g. a released benchmark's label, or marked public by an admin): a worker may hold it, "
        "so it earns no bonus unless the campaign accepts public labels.",
    )
    #: Word overlap of the sentence with its closest article sentence (services/overlap.sentence_overlap), computed
    #: when the label is set: the quality score is balanced within overlap bands, so a page rule earns nothing.
    overlap = models.FloatField(null=True, blank=True, help_text="Word overlap with the closest article sentence (0 to 1).")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["summary", "sentence_index"], name="gold_label_once_per_sentence")]

    def __str__(self) -> str:
        return f"gold {'factual' if self.factual else 'erroneous'} for sentence {self.sentence_index} of summary {self.summary_id}"


class SentenceLabel(models.Model):
    """The aggregated label of one summary sentence under the campaign's label model, with its uncertainty
    (metrics_service.stats.label_aggregation): rewritten by every refit, read by exports, API and pages."""

    summary = models.ForeignKey(Summary, on_delete=models.CASCADE, related_name="labels")
    sentence_index = models.PositiveIntegerField()
    method = models.CharField(max_length=20)
    n = models.PositiveIntegerField()
    factual = models.BooleanField()
    p_factual = models.FloatField()
    posterior = models.FloatField()
    posterior_low = models.FloatField()
    posterior_high = models.FloatField()
    categories = models.JSONField(default=list, blank=True)
    categories_posterior = models.FloatField()
    categories_low = models.FloatField()
    categories_high = models.FloatField()
    difficulty = models.FloatField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["summary", "sentence_index"], name="sentence_label_unique")]

    def __str__(self) -> str:
        return f"label of sentence {self.sentence_index} of summary {self.summary_id}"


__all__ = ["LIVE_ASSIGNMENT_STATUSES", "Assignment", "AssignmentStatus", "ExpertLabel", "GoldLabel", "GoldSource", "JudgementSource", "MetricScore", "MetricSource", "ReviewStatus", "SentenceJudgement", "SentenceLabel", "TrapAnswer"]
