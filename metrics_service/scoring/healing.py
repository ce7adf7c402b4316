"""Healing of scoring jobs (the beat schedule): chunks whose worker died are requeued, chunks never sent
(the broker was down) are sent again.

Locking order, everywhere: the job row first, then its chunk rows (no deadlock between a worker storing
a chunk and an admin cancelling the job); :func:`~metrics_service.scoring.chunks.lock` takes both.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from factlab.jobs import (
    SCORING_CHUNK_LOCK,
    is_running,
)
from metrics_service.models import (
    ChunkStatus,
    JobStatus,
    ScoringChunk,
    ScoringJob,
)
from metrics_service.scoring import chunks
from metrics_service.scoring.chunks import lock


def _stale_after() -> timedelta:
    return timedelta(seconds=int(getattr(settings, "FACTLAB_SCORING_STALE_SECONDS", 3 * 3600)))


def requeue_stale_chunks(older_than: timedelta | None = None) -> list[int]:
    """Send again the chunks "running" for longer than ``older_than`` (default: the stale setting).

    A backstop for lost workers whose message the broker did not re-deliver. A chunk that still
    completes twice stores its scores once (upsert; the second run sees the chunk done). Returns the
    ids of the chunks sent.
    """
    cutoff = timezone.now() - (older_than if older_than is not None else _stale_after())
    stale = ScoringChunk.objects.filter(status=ChunkStatus.RUNNING, started_at__lt=cutoff).values_list("job_id", "id")
    return _requeue(stale, lambda chunk: chunk.started_at < cutoff, "running since {started}")


def _requeue(candidates: Iterable[tuple[int, int]], still: Callable[[ScoringChunk], bool], reason: str) -> list[int]:
    requeued: list[tuple[ScoringJob, int]] = []
    for job_id, chunk_id in list(candidates):
        with transaction.atomic():
            job, chunk = lock(job_id, chunk_id)
            if chunk.status != ChunkStatus.RUNNING or not still(chunk):
                continue
            chunk.status = ChunkStatus.PENDING
            chunk.error = "re-queued: " + reason.format(started=chunk.started_at.isoformat() if chunk.started_at else "?")
            chunk.dispatched_at = None  # set again once the new message reaches the broker
            chunk.save(update_fields=["status", "error", "dispatched_at"])
            requeued.append((job, chunk_id))
    for job, chunk_id in requeued:
        chunks.dispatch_after_commit(job, [chunk_id])
    return [chunk_id for _, chunk_id in requeued]


def requeue_orphaned_chunks(grace: timedelta) -> list[int]:
    """Chunks "running" for more than ``grace`` whose worker is gone (nobody holds their running lock).

    A killed worker's message waits for the broker's visibility timeout (an hour by default) before it
    is delivered again; this finds the chunk within a beat interval instead.
    """
    cutoff = timezone.now() - grace
    candidates = ScoringChunk.objects.filter(status=ChunkStatus.RUNNING, started_at__lt=cutoff).values_list("job_id", "id")
    orphaned = [(job_id, chunk_id) for job_id, chunk_id in candidates if not is_running(SCORING_CHUNK_LOCK, chunk_id)]
    return _requeue(
        orphaned, lambda chunk: not is_running(SCORING_CHUNK_LOCK, chunk.pk), "its worker was lost (running since {started})"
    )


def resend_undispatched_chunks(grace: timedelta, pending_after: timedelta | None = None) -> list[int]:
    """Pending chunks whose message never reached the broker (it was down when the job was submitted), and,
    with ``pending_after``, those sent longer ago than that and not picked up since (the message was lost
    in the broker; a duplicate of one still waiting is harmless: a finished chunk is left alone)."""
    now = timezone.now()
    lost = Q(dispatched_at__isnull=True, job__created_at__lt=now - grace)
    if pending_after is not None:
        cutoff = now - pending_after
        lost |= Q(dispatched_at__lt=cutoff) & (Q(started_at__isnull=True) | Q(started_at__lt=cutoff))
    pending = list(
        ScoringChunk.objects.filter(lost, status=ChunkStatus.PENDING, job__status__in=[JobStatus.PENDING, JobStatus.RUNNING])
        .select_related("job")
    )
    by_job: dict[int, list[int]] = {}
    for chunk in pending:
        by_job.setdefault(chunk.job_id, []).append(chunk.pk)
    jobs = {chunk.job_id: chunk.job for chunk in pending}
    for job_id, chunk_ids in by_job.items():
        chunks.dispatch_after_commit(jobs[job_id], chunk_ids)
    return [chunk.pk for chunk in pending]
