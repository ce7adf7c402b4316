"""Scoring jobs: one metric with one configuration over a set of summaries, split into chunks.

A job's progress is derived from its chunks (``metrics_service.scoring.chunks.refresh_job``), never incremented, so a
retried or re-delivered chunk cannot count twice. Scores themselves live in ``annotate.MetricScore``.
"""
from __future__ import annotations

from django.conf import settings
from django.db import models


class JobStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


FINISHED_JOB_STATUSES = (JobStatus.DONE, JobStatus.FAILED, JobStatus.CANCELLED)


class ChunkStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Skipped (job cancelled)"


OPEN_CHUNK_STATUSES = (ChunkStatus.PENDING, ChunkStatus.RUNNING)


class Queue(models.TextChoices):
    CPU = "cpu", "CPU"
    GPU = "gpu", "GPU (model-based scorers)"


class ScoringJob(models.Model):
    """A request to score summaries with one metric and configuration (``config_key`` is the scorer's hash)."""

    campaign = models.ForeignKey(
        "annotate.Campaign", null=True, blank=True, on_delete=models.CASCADE, related_name="scoring_jobs"
    )
    metric = models.CharField(max_length=50, help_text="Scorer name, e.g. rouge or coco.")
    config = models.JSONField(default=dict, blank=True)
    config_key = models.CharField(max_length=64)
    queue = models.CharField(max_length=10, choices=Queue.choices, default=Queue.CPU)
    status = models.CharField(max_length=10, choices=JobStatus.choices, default=JobStatus.PENDING)
    total = models.PositiveIntegerField(default=0, help_text="Summaries to score.")
    done = models.PositiveIntegerField(default=0, help_text="Summaries of finished chunks.")
    failed = models.PositiveIntegerField(default=0, help_text="Summaries of chunks that failed for good.")
    skipped = models.PositiveIntegerField(default=0, help_text="Summaries without a reference (reference-based outputs not computed).")
    message = models.TextField(blank=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["campaign", "status"]), models.Index(fields=["metric", "config_key"])]

    def __str__(self) -> str:
        return f"scoring job {self.pk} ({self.metric}, {self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in FINISHED_JOB_STATUSES


class ScoringChunk(models.Model):
    """A slice of a job's summaries, processed (and retried) as one Celery task and stored in one transaction."""

    job = models.ForeignKey(ScoringJob, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()
    summary_ids = models.JSONField(default=list)
    status = models.CharField(max_length=10, choices=ChunkStatus.choices, default=ChunkStatus.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    skipped = models.PositiveIntegerField(default=0)
    stored = models.PositiveIntegerField(default=0, help_text="Score rows written by the last successful run.")
    error = models.TextField(blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    dispatched_at = models.DateTimeField(null=True, blank=True, help_text="When its task message last reached the broker.")

    class Meta:
        ordering = ["job", "index"]
        constraints = [models.UniqueConstraint(fields=["job", "index"], name="scoring_chunk_unique_index")]
        indexes = [models.Index(fields=["status", "started_at"])]

    def __str__(self) -> str:
        return f"chunk {self.index} of job {self.job_id} ({self.status})"


class CampaignFigures(models.Model):
    """Figures of a campaign that a worker computed after its data changed (the analysis report per set of
    options, the workers' label reliability), so that the admin pages only read them and say how fresh they are.

    ``state`` names the campaign's data the figures were computed from; a page compares it with the current
    state to tell current figures from stale ones (then it queues a recomputation and shows the stale ones).
    """

    campaign = models.ForeignKey("annotate.Campaign", on_delete=models.CASCADE, related_name="stored_figures")
    name = models.CharField(max_length=100, help_text="worker_reliability, or report: with the hash of the report's options.")
    state = models.CharField(max_length=200, help_text="The campaign's data state the figures were computed from.")
    data = models.JSONField()
    started_at = models.DateTimeField(help_text="When the computation started: an older one never replaces a newer one.")
    computed_at = models.DateTimeField(help_text="When they were stored (since started_at: how long the worker took).")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["campaign", "name"], name="campaign_figures_once_per_name")]

    def __str__(self) -> str:
        return f"{self.name} of campaign {self.campaign_id} ({self.computed_at:%Y-%m-%d %H:%M})"
