"""Background jobs a campaign runs: dataset and score imports, page preparations."""
from __future__ import annotations

from django.conf import settings
from django.db import models

from annotate.kinds import kind_choices

from .campaigns import Campaign


class ImportStatus(models.TextChoices):
    DETECTED = "detected", "Waiting for the admin to confirm the detected format"
    PENDING = "pending", "Waiting for a worker"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed (nothing was stored)"
    CANCELLED = "cancelled", "Cancelled (nothing was stored)"


class ImportJob(models.Model):
    """An uploaded dataset or metric-score file, imported by a Celery task (``annotate.tasks.run_import_job``)."""

    kind = models.CharField(max_length=10, choices=[("dataset", "Dataset"), ("scores", "Metric scores")], default="dataset")
    format = models.CharField(max_length=10)
    campaign_slug = models.SlugField(max_length=80)
    campaign_kind = models.CharField(max_length=20, choices=kind_choices, blank=True)
    file = models.FileField(upload_to="imports/%Y/%m/")
    original_name = models.CharField(max_length=255, blank=True)
    size = models.PositiveBigIntegerField(default=0)
    status = models.CharField(max_length=10, choices=ImportStatus.choices, default=ImportStatus.PENDING)
    done = models.PositiveIntegerField(default=0, help_text="Records read so far.")
    total = models.PositiveIntegerField(null=True, blank=True, help_text="Records in the file when known.")
    report = models.JSONField(default=dict, blank=True, help_text="What the import created (ImportReport.as_dict()).")
    error = models.JSONField(default=dict, blank=True, help_text="ImportFailed.as_dict(): file, record, field, message.")
    options = models.JSONField(default=dict, blank=True, help_text="Importer options, e.g. {\"dataset\": \"xsum\"} for QAGS.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0, help_text="Starts so far (a lost worker's re-delivery counts).")
    dispatched_at = models.DateTimeField(null=True, blank=True, help_text="When its task message reached the broker.")

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"import {self.pk} ({self.format} into {self.campaign_slug}, {self.status})"


class PagePreparation(models.Model):
    """One run of the job that prepares a campaign's task pages (``annotate.prepare_campaign_pages``).

    The row lets the beat find a preparation whose message was lost or whose worker died, and lets an
    admin watch, cancel and retry it; ``done``/``total`` count documents.
    """

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="page_preparations")
    status = models.CharField(max_length=10, choices=ImportStatus.choices, default=ImportStatus.PENDING)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    code_version = models.CharField(
        max_length=40, blank=True,
        help_text="The version of the page code it was queued under (the protocol's pages_version): while a run of the "
                  "current version is under way, failed or cancelled, the beat queues no other for its campaign.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    dispatched_at = models.DateTimeField(null=True, blank=True, help_text="When its task message last reached the broker.")
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["status", "created_at"])]

    def __str__(self) -> str:
        return f"page preparation {self.pk} of campaign {self.campaign_id} ({self.status})"


__all__ = ["ImportJob", "ImportStatus", "PagePreparation"]
