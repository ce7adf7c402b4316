"""One chunk of a scoring job: what a Celery task runs (:func:`process_chunk`), how its scores are computed
and stored in ONE transaction (a killed worker leaves no partial rows, a re-delivered chunk never
duplicates a score), how chunks are sent to the workers after the commit, and a job's state derived
from its chunks (:func:`refresh_job`).

Locking order, everywhere: the job row first, then its chunk rows (no deadlock between a worker storing
a chunk and an admin cancelling the job); :func:`~metrics_service.scoring.chunks.lock` takes both.
"""
from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Iterable, Sequence

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotate.models import MetricScore, MetricSource, Summary
from factlab.jobs import (
    SCORING_CHUNK_LOCK,
    JobCancelled,
    cancel_checkpoint,
    running_lock,
    send_after_commit,
    task_named,
)
from metrics_service.models import (
    OPEN_CHUNK_STATUSES,
    ChunkStatus,
    JobStatus,
    ScoringChunk,
    ScoringJob,
)
from metrics_service.scorers import Scorer, ScorerError
from metrics_service.scoring.registry import cached_scorer
from metrics_service.stored_figures import schedule_figures


class RetryableChunkError(RuntimeError):
    """A chunk failed with attempts left; the Celery task retries it with backoff."""


#: Metrics whose chunks store more than scores: name -> "module:function", a function
#: ``(job, summary_ids) -> (rows, skipped, store)`` whose ``store()`` (or None) runs in the transaction that
#: stores the rows and marks the chunk done. The LLM annotator stores sentence judgements this way.
CHUNK_HANDLERS: dict[str, str] = {"llm_frank": "metrics_service.llm_annotation:annotate_chunk"}


def dispatch_after_commit(job: ScoringJob, chunk_ids: Iterable[int]) -> None:
    """Queue the chunks once committed; with the broker down they stay undispatched for the beat to resend."""
    score_chunk = task_named("metrics_service.tasks.score_chunk")
    chunk_ids = list(chunk_ids)

    def send() -> None:
        for chunk_id in chunk_ids:
            score_chunk.apply_async(args=[chunk_id], queue=job.queue)

    def sent() -> None:
        ScoringChunk.objects.filter(pk__in=chunk_ids).update(dispatched_at=timezone.now())

    # A worker must not receive a chunk before its rows are committed (eager mode runs it here, inside).
    send_after_commit(send, what=f"{len(chunk_ids)} chunk(s) of scoring job {job.pk}", on_sent=sent)


def resolve_references(summaries: Sequence[Summary]) -> dict[int, Summary | None]:
    """Map each summary id to its reference: the ``is_reference`` summary of its document.

    An edited summary takes the reference of the document of the summary it was edited from. A
    reference has no reference (scoring it against itself is meaningless), nor does a summary whose
    document has none. The lowest-id reference wins if a document has several.
    """
    def source_document_id(summary: Summary) -> int:
        return summary.edited_from.document_id if summary.edited_from_id else summary.document_id

    doc_ids = {source_document_id(s) for s in summaries}
    by_document: dict[int, Summary] = {}
    for ref in Summary.objects.filter(document_id__in=doc_ids, is_reference=True, edited_from__isnull=True).order_by("id"):
        by_document.setdefault(ref.document_id, ref)
    result: dict[int, Summary | None] = {}
    for summary in summaries:
        ref = None if summary.is_reference else by_document.get(source_document_id(summary))
        result[summary.pk] = ref if ref is not None and ref.pk != summary.pk else None
    return result


def _run_scorer(scorer: Scorer, summaries: list[Summary], references: list[str] | None) -> dict[str, list[float]]:
    outputs = scorer.score([s.document.text for s in summaries], [s.text for s in summaries], references=references)
    for name, values in outputs.items():
        if len(values) != len(summaries):
            raise ValueError(f"scorer {scorer.name!r} returned {len(values)} values of {name!r} for {len(summaries)} summaries")
    return outputs


MIN_SLICE = 8  # summaries per scorer call at least (a model-based scorer's own batch size when larger)


def compute_chunk_scores(
    job: ScoringJob, summary_ids: Sequence[int], checkpoint: Callable[[], None] | None = None,
) -> tuple[list[MetricScore], int]:
    """Score the summaries of one chunk; return unsaved ``MetricScore`` rows and the number skipped.

    Summaries with a reference are scored with it; the others without, and for a scorer that
    ``needs_references`` not at all. A summary counts as skipped when it got fewer outputs than the
    scorer names (its reference-based outputs). Summaries deleted since submission are ignored.
    The scorer is called on slices of the chunk, with ``checkpoint()`` (which raises to stop: a cancel)
    before each, so a cancelled job stops after the slice under way rather than after the whole chunk.
    """
    scorer = cached_scorer(job)
    summaries = list(Summary.objects.filter(pk__in=summary_ids).select_related("document", "edited_from").order_by("id"))
    references = resolve_references(summaries)
    with_ref = [s for s in summaries if references[s.pk] is not None]
    without_ref = [s for s in summaries if references[s.pk] is None]
    values: dict[int, dict[str, float]] = {s.pk: {} for s in summaries}
    groups = [(with_ref, [references[s.pk].text for s in with_ref])]
    if not scorer.needs_references:
        groups.append((without_ref, None))
    size = max(MIN_SLICE, int(getattr(scorer, "batch_size", 0) or 0))
    slices = [
        (group[start:start + size], None if refs is None else refs[start:start + size])
        for group, refs in groups for start in range(0, len(group), size)
    ]
    for group, refs in slices:
        if checkpoint:
            checkpoint()
        for name, column in _run_scorer(scorer, group, refs).items():
            for summary, value in zip(group, column):
                if value is not None and not (isinstance(value, float) and math.isnan(value)):
                    values[summary.pk][name] = float(value)
    expected = set(scorer.output_names)
    skipped = sum(1 for s in summaries if not expected <= set(values[s.pk]))
    rows = [
        MetricScore(summary_id=sid, metric=name, config_key=job.config_key, value=value, source=MetricSource.COMPUTED, job_id=job.pk)
        for sid, outputs in values.items()
        for name, value in outputs.items()
    ]
    return rows, skipped


def lock(job_id: int, chunk_id: int) -> tuple[ScoringJob, ScoringChunk]:
    job = ScoringJob.objects.select_for_update().get(pk=job_id)
    chunk = ScoringChunk.objects.select_for_update().get(pk=chunk_id)
    return job, chunk


def _max_attempts() -> int:
    return int(getattr(settings, "FACTLAB_SCORING_MAX_ATTEMPTS", 5))


def process_chunk(chunk_id: int, *, final_attempt: bool = True) -> str:
    """Score chunk ``chunk_id`` and store its scores; return the chunk's outcome.

    Idempotent: a finished chunk is left alone (re-delivered messages), a cancelled job's chunk is
    skipped, and scores are upserted on (summary, metric output, config_key) in the same transaction
    that marks the chunk done. On an error the chunk goes back to pending and ``RetryableChunkError``
    is raised, unless ``final_attempt`` is set or the scorer cannot run at all (``ScorerError``): then
    the chunk is marked failed with the error.
    """
    job_id = ScoringChunk.objects.filter(pk=chunk_id).values_list("job_id", flat=True).first()
    if job_id is None:
        return "missing"
    now = timezone.now()
    with transaction.atomic():
        job, chunk = lock(job_id, chunk_id)
        if chunk.status not in OPEN_CHUNK_STATUSES:
            return chunk.status
        if job.status == JobStatus.CANCELLED:
            chunk.status, chunk.finished_at = ChunkStatus.CANCELLED, now
            chunk.save(update_fields=["status", "finished_at"])
            refresh_job_state(job)
            return chunk.status
        if chunk.attempts >= _max_attempts():
            # Each start counts, redeliveries after a killed worker included: a chunk that kills its
            # worker every time must not loop forever.
            chunk.status, chunk.finished_at = ChunkStatus.FAILED, now
            chunk.error = f"gave up after {chunk.attempts} attempts (last error: {chunk.error or 'worker lost'})"
            chunk.save(update_fields=["status", "finished_at", "error"])
            refresh_job_state(job)
            return chunk.status
        chunk.status, chunk.started_at, chunk.finished_at = ChunkStatus.RUNNING, now, None
        chunk.attempts += 1
        chunk.save(update_fields=["status", "started_at", "finished_at", "attempts"])
        if job.status == JobStatus.PENDING:
            job.status, job.started_at = JobStatus.RUNNING, now
            job.save(update_fields=["status", "started_at"])
    attempt = chunk.attempts
    # The lock tells the beat this chunk has a live worker; a killed worker's connection drops it.
    with running_lock(SCORING_CHUNK_LOCK, chunk_id):
        return _compute_and_store(job_id, chunk_id, job, chunk, attempt, final_attempt)


def _compute_chunk(job: ScoringJob, summary_ids: Sequence[int]) -> tuple[list[MetricScore], int, Callable[[], None] | None]:
    target = CHUNK_HANDLERS.get(job.metric)
    if target is None:
        checkpoint = cancel_checkpoint(lambda: ScoringJob.objects.filter(pk=job.pk, status=JobStatus.CANCELLED).exists())
        rows, skipped = compute_chunk_scores(job, summary_ids, checkpoint)
        return rows, skipped, None
    module_name, function = target.split(":")
    return getattr(importlib.import_module(module_name), function)(job, summary_ids)


def _compute_and_store(job_id: int, chunk_id: int, job: ScoringJob, chunk: ScoringChunk, attempt: int, final_attempt: bool) -> str:
    try:
        rows, skipped, store = _compute_chunk(job, chunk.summary_ids)
    except JobCancelled:
        # The job was cancelled while this chunk ran: it stops between two scorer calls, storing nothing.
        with transaction.atomic():
            job, chunk = lock(job_id, chunk_id)
            if chunk.status == ChunkStatus.RUNNING and chunk.attempts == attempt:
                chunk.status, chunk.finished_at = ChunkStatus.CANCELLED, timezone.now()
                chunk.save(update_fields=["status", "finished_at"])
                refresh_job_state(job)
        return ChunkStatus.CANCELLED
    except Exception as exc:
        permanent = isinstance(exc, ScorerError)
        error = f"attempt {attempt}: {type(exc).__name__}: {exc}"
        with transaction.atomic():
            job, chunk = lock(job_id, chunk_id)
            if chunk.status == ChunkStatus.RUNNING and chunk.attempts == attempt:
                if final_attempt or permanent:
                    chunk.status, chunk.finished_at = ChunkStatus.FAILED, timezone.now()
                else:
                    chunk.status = ChunkStatus.PENDING
                chunk.error = error[:5000]
                chunk.save(update_fields=["status", "finished_at", "error"])
                refresh_job_state(job)
        if final_attempt or permanent:
            return ChunkStatus.FAILED
        raise RetryableChunkError(error) from exc

    with transaction.atomic():
        job, chunk = lock(job_id, chunk_id)
        if chunk.status == ChunkStatus.DONE:
            return "duplicate"  # another delivery of this chunk stored the same scores first
        if rows:
            MetricScore.objects.bulk_create(
                rows,
                update_conflicts=True,
                unique_fields=["summary", "metric", "config_key"],
                update_fields=["value", "source", "job_id", "updated_at"],
            )
        if store is not None:
            store()
        chunk.status, chunk.finished_at, chunk.error = ChunkStatus.DONE, timezone.now(), ""
        chunk.skipped, chunk.stored = skipped, len(rows)
        if rows and job.campaign_id is not None:
            schedule_figures(job.campaign)  # scores arrived: the admin pages' figures are recomputed (debounced)
        chunk.save(update_fields=["status", "finished_at", "error", "skipped", "stored"])
        refresh_job_state(job)
    return ChunkStatus.DONE


def refresh_job_state(job: ScoringJob) -> None:
    """Derive the job's counts, status and message from its chunks (call with the job row locked)."""
    chunks = list(job.chunks.values_list("status", "summary_ids", "skipped", "error"))
    done = sum(len(ids) for status, ids, _, _ in chunks if status == ChunkStatus.DONE)
    failed = sum(len(ids) for status, ids, _, _ in chunks if status == ChunkStatus.FAILED)
    skipped = sum(n for status, _, n, _ in chunks if status == ChunkStatus.DONE)
    open_chunks = sum(1 for status, *_ in chunks if status in OPEN_CHUNK_STATUSES)
    errors = [error for status, _, _, error in chunks if status == ChunkStatus.FAILED and error]
    job.done, job.failed, job.skipped = done, failed, skipped
    if not open_chunks and job.status in (JobStatus.PENDING, JobStatus.RUNNING):
        job.status = JobStatus.FAILED if failed else JobStatus.DONE
    if not open_chunks and job.finished_at is None:
        job.finished_at = timezone.now()
    parts = [f"{done}/{job.total} summaries scored"]
    if skipped:
        parts.append(
            f"{skipped} without a reference (reference-based {job.metric} outputs not computed for them)"
        )
    if failed:
        failed_chunks = sum(1 for status, *_ in chunks if status == ChunkStatus.FAILED)
        parts.append(f"{failed} in {failed_chunks} failed chunk(s)")
    if job.status == JobStatus.CANCELLED:
        parts.append("cancelled")
    job.message = "; ".join(parts)
    job.error = errors[0][:5000] if errors else ""
    job.save(update_fields=["done", "failed", "skipped", "status", "finished_at", "message", "error"])


def refresh_job(job: ScoringJob) -> ScoringJob:
    """Recompute ``job``'s progress from its chunks and return it reloaded."""
    with transaction.atomic():
        locked = ScoringJob.objects.select_for_update().get(pk=job.pk)
        refresh_job_state(locked)
    job.refresh_from_db()
    return job
