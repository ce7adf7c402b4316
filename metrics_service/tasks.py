"""Celery tasks of the metrics service: thin wrappers around ``metrics_service.scoring`` (chunks, healing, jobs).

``score_chunk`` is sent to the ``gpu`` queue for model-based scorers and to ``cpu`` otherwise (see
``scoring.jobs.submit_scoring_job``); it is acknowledged late, so a worker killed mid-chunk leaves the
message to be re-delivered, and it retries failed chunks with exponential backoff.
"""
from __future__ import annotations

from celery import shared_task

from .scoring import chunks, healing

MAX_RETRIES = 3
BACKOFF_BASE_SECONDS = 5
BACKOFF_MAX_SECONDS = 300


def backoff_seconds(retries: int) -> int:
    """Delay before retry number ``retries + 1``: 5 s, 10 s, 20 s ... capped at 5 minutes."""
    return min(BACKOFF_MAX_SECONDS, BACKOFF_BASE_SECONDS * 2**retries)


@shared_task(
    bind=True, name="metrics_service.tasks.score_chunk", acks_late=True, reject_on_worker_lost=True,
    max_retries=MAX_RETRIES, ignore_result=True,  # progress lives in the job rows, not in a result backend
)
def score_chunk(self, chunk_id: int) -> str:
    """Score and store one chunk; retried with backoff while attempts are left."""
    # Eager runs (no broker, tests) cannot wait for a retry: their first failure is final.
    final = bool(self.request.is_eager) or self.request.retries >= self.max_retries
    try:
        return chunks.process_chunk(chunk_id, final_attempt=final)
    except chunks.RetryableChunkError as exc:
        raise self.retry(exc=exc, countdown=backoff_seconds(self.request.retries)) from exc


@shared_task(name="metrics_service.tasks.requeue_stale_chunks", ignore_result=True)
def requeue_stale_chunks_task(older_than_seconds: int | None = None) -> list[int]:
    """Periodic backstop (e.g. from celery beat): re-dispatch chunks stuck in "running"."""
    from datetime import timedelta

    older_than = timedelta(seconds=older_than_seconds) if older_than_seconds is not None else None
    return healing.requeue_stale_chunks(older_than)


@shared_task(name="metrics_service.tasks.heal_scoring_jobs", ignore_result=True)
def heal_scoring_jobs() -> dict[str, list[int]]:
    """Beat (every minute): chunks of dead workers, chunks whose message never reached the broker or was
    lost there (pending ``FACTLAB_HEAL_PENDING_SECONDS`` after it was sent), and
    (last resort) chunks running longer than ``FACTLAB_SCORING_STALE_SECONDS`` are sent again."""
    from datetime import timedelta

    from django.conf import settings

    grace = timedelta(seconds=settings.FACTLAB_HEAL_GRACE_SECONDS)
    return {
        "orphaned": healing.requeue_orphaned_chunks(grace),
        "undispatched": healing.resend_undispatched_chunks(
            grace, timedelta(seconds=settings.FACTLAB_HEAL_PENDING_SECONDS)
        ),
        "stale": healing.requeue_stale_chunks(),
    }
