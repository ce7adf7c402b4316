"""Scoring jobs as the admin, the ``score`` command, the REST API and the BUMP workflow use them: submit
(validate a metric and its configuration, split the summaries into chunks and send one Celery task per
chunk: ``gpu`` queue for model-based scorers, ``cpu`` otherwise, or run them here with ``sync=True``),
progress, cancel and retry.

Locking order, everywhere: the job row first, then its chunk rows (no deadlock between a worker storing
a chunk and an admin cancelling the job); :func:`~metrics_service.scoring.chunks.lock` takes both.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from django.db import transaction
from django.utils import timezone

from annotate.models import Campaign, Summary
from metrics_service.models import (
    OPEN_CHUNK_STATUSES,
    ChunkStatus,
    JobStatus,
    Queue,
    ScoringChunk,
    ScoringJob,
)
from metrics_service.scoring import chunks
from metrics_service.scoring.chunks import process_chunk, refresh_job_state
from metrics_service.scoring.registry import build_scorer

MAX_CHUNK_SIZE = 10_000


def _target_summary_ids(campaign: Campaign | None, summary_ids: Sequence[int] | None) -> list[int]:
    if campaign is None and summary_ids is None:
        raise ValueError("give a campaign or a list of summary ids to score")
    queryset = Summary.objects.all()
    if campaign is not None:
        queryset = queryset.filter(document__campaign=campaign)
    if summary_ids is None:
        ids = list(queryset.order_by("id").values_list("id", flat=True))
        if not ids:
            raise ValueError(f"campaign {campaign.slug!r} has no summaries to score")
        return ids
    if isinstance(summary_ids, (str, bytes)) or not all(isinstance(i, int) and not isinstance(i, bool) for i in summary_ids):
        raise ValueError("summary_ids must be a list of integer summary ids")
    wanted = sorted(set(summary_ids))
    if not wanted:
        raise ValueError("summary_ids is empty: nothing to score")
    found = set(queryset.filter(pk__in=wanted).values_list("id", flat=True))
    missing = [i for i in wanted if i not in found]
    if missing:
        where = f" in campaign {campaign.slug!r}" if campaign is not None else ""
        shown = ", ".join(map(str, missing[:10])) + (" ..." if len(missing) > 10 else "")
        raise ValueError(f"{len(missing)} summary id(s) not found{where}: {shown}")
    return wanted


def submit_scoring_job(
    *,
    metric: str,
    config: dict | None = None,
    campaign: Campaign | None = None,
    summary_ids: list[int] | None = None,
    user=None,
    chunk_size: int = 64,
    sync: bool = False,
    progress: Callable[[ScoringJob], None] | None = None,
) -> ScoringJob:
    """Create a job scoring the campaign's summaries (or ``summary_ids``) with ``metric`` and dispatch it.

    Every summary of the campaign is scored, references included (BUMP minimal pairs need them); with
    both ``campaign`` and ``summary_ids``, the ids must belong to the campaign. ``sync=True`` processes
    the chunks in this process, one after the other, calling ``progress(job)`` after each; otherwise one
    Celery task per chunk is sent once the surrounding transaction commits. Raises ``ValueError`` for an
    unknown metric, a bad configuration, a bad chunk size or nothing to score (nothing is stored then).
    """
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or not 1 <= chunk_size <= MAX_CHUNK_SIZE:
        raise ValueError(f"chunk_size must be an integer between 1 and {MAX_CHUNK_SIZE}, got {chunk_size!r}")
    scorer = build_scorer(metric, config)
    ids = _target_summary_ids(campaign, summary_ids)
    with transaction.atomic():
        job = ScoringJob.objects.create(
            campaign=campaign,
            metric=metric,
            config=dict(config or {}),
            config_key=scorer.config_key(),
            queue=Queue.GPU if scorer.uses_model else Queue.CPU,
            total=len(ids),
            created_by=user if getattr(user, "is_authenticated", False) else None,
            message=f"0/{len(ids)} summaries scored",
        )
        ScoringChunk.objects.bulk_create(
            ScoringChunk(job=job, index=n, summary_ids=ids[start : start + chunk_size])
            for n, start in enumerate(range(0, len(ids), chunk_size))
        )
    if sync:
        run_job_in_process(job, progress=progress)
    else:
        chunk_ids = list(job.chunks.order_by("index").values_list("id", flat=True))
        chunks.dispatch_after_commit(job, chunk_ids)
    job.refresh_from_db()
    return job


def run_job_in_process(job: ScoringJob, progress: Callable[[ScoringJob], None] | None = None) -> ScoringJob:
    """Process every open chunk of ``job`` here, without a broker (``score --sync``)."""
    for chunk_id in job.chunks.filter(status__in=OPEN_CHUNK_STATUSES).order_by("index").values_list("id", flat=True):
        process_chunk(chunk_id, final_attempt=True)
        if progress is not None:
            job.refresh_from_db()
            progress(job)
    job.refresh_from_db()
    return job


def auto_score_summaries(campaign: Campaign, summary_ids: Sequence[int]) -> list[ScoringJob]:
    """Score new summaries with the campaign's ``auto_score_metrics`` (names, or {"metric", "config"} objects).

    Returns the submitted jobs (none when the campaign asks for no metric or ``summary_ids`` is empty).
    """
    metrics = campaign.auto_score_metrics or []
    if not metrics or not summary_ids:
        return []
    jobs = []
    for entry in metrics:
        if isinstance(entry, str):
            metric, config = entry, {}
        elif isinstance(entry, dict) and isinstance(entry.get("metric"), str):
            metric, config = entry["metric"], entry.get("config") or {}
        else:
            raise ValueError(
                f"campaign {campaign.slug!r}: auto_score_metrics entry {entry!r} is neither a metric name nor {{'metric', 'config'}}"
            )
        jobs.append(submit_scoring_job(metric=metric, config=config, campaign=campaign, summary_ids=list(summary_ids)))
    return jobs


def job_progress(job: ScoringJob) -> dict[str, Any]:
    """The job's progress as plain data: id, metric, configuration, status, counts, percent, message and
    its created / started / finished times (ISO 8601, ``None`` until reached)."""
    return {
        "id": job.pk,
        "metric": job.metric,
        "config": job.config,
        "config_key": job.config_key,
        "status": job.status,
        "done": job.done,
        "total": job.total,
        "failed": job.failed,
        "skipped": job.skipped,
        "percent": round(100.0 * job.done / job.total, 1) if job.total else 100.0,
        "message": job.message,
        "error": job.error,
        "created_at": job.created_at.isoformat() if job.created_at else None,
        "started_at": job.started_at.isoformat() if job.started_at else None,
        "finished_at": job.finished_at.isoformat() if job.finished_at else None,
    }


def campaign_scoring_jobs(campaign: Campaign, limit: int = 20) -> list[dict[str, Any]]:
    """Progress of the campaign's most recent scoring jobs (for the campaign page)."""
    return [job_progress(job) for job in ScoringJob.objects.filter(campaign=campaign).order_by("-created_at", "-id")[:limit]]


def cancel_scoring_job(job: ScoringJob) -> ScoringJob:
    """Cancel ``job``: its pending chunks are skipped, a running chunk stops before its next scorer call.

    Cancelling a cancelled job does nothing; a job that finished (done or failed) cannot be cancelled
    (``ValueError``).
    """
    with transaction.atomic():
        locked = ScoringJob.objects.select_for_update().get(pk=job.pk)
        if locked.status in (JobStatus.DONE, JobStatus.FAILED):
            raise ValueError(f"scoring job {locked.pk} already finished ({locked.status}); nothing to cancel")
        if locked.status != JobStatus.CANCELLED:
            locked.chunks.filter(status=ChunkStatus.PENDING).update(status=ChunkStatus.CANCELLED, finished_at=timezone.now())
            locked.status = JobStatus.CANCELLED
            locked.save(update_fields=["status"])
            refresh_job_state(locked)
    job.refresh_from_db()
    return job


def retry_scoring_job(job: ScoringJob) -> ScoringJob:
    """Score the failed and skipped (cancelled) chunks of a finished job again; done chunks are kept.

    ``ValueError`` while the job is still pending or running, or when it has nothing to retry.
    """
    from factlab.jobs import require_broker

    require_broker()
    with transaction.atomic():
        locked = ScoringJob.objects.select_for_update().get(pk=job.pk)
        if locked.status not in (JobStatus.FAILED, JobStatus.CANCELLED):
            raise ValueError(f"scoring job {locked.pk} is {locked.status}; only a failed or cancelled job can be retried")
        chunk_ids = list(
            locked.chunks.filter(status__in=[ChunkStatus.FAILED, ChunkStatus.CANCELLED]).values_list("id", flat=True)
        )
        if not chunk_ids:
            raise ValueError(f"scoring job {locked.pk} has no failed or skipped chunk to retry")
        ScoringChunk.objects.filter(pk__in=chunk_ids).update(
            status=ChunkStatus.PENDING, attempts=0, error="", started_at=None, finished_at=None, dispatched_at=None
        )
        locked.status = JobStatus.RUNNING if locked.started_at else JobStatus.PENDING
        locked.finished_at = None
        locked.save(update_fields=["status", "finished_at"])
        refresh_job_state(locked)
        chunks.dispatch_after_commit(locked, chunk_ids)
    job.refresh_from_db()
    return job
