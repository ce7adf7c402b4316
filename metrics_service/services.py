"""Scoring jobs: submit, process chunk by chunk, report progress, cancel, and re-dispatch stale chunks.

Entry points (used by the admin, the ``score`` command, the REST API and the BUMP workflow):

* :func:`submit_scoring_job` — validate a metric and its configuration, split the summaries into chunks
  and dispatch one Celery task per chunk (``gpu`` queue for model-based scorers, ``cpu`` otherwise), or
  run them in-process with ``sync=True``.
* :func:`process_chunk` — what a task runs: score one chunk and upsert its scores in ONE transaction,
  so a killed worker leaves no partial rows and a re-delivered chunk never duplicates a score.
* :func:`job_progress`, :func:`cancel_scoring_job`, :func:`requeue_stale_chunks`, :func:`auto_score_summaries`.

Over 400 lines on purpose: submitting, processing, cancelling and healing share one locking protocol on
the same two tables, which is easier to check in one place.

Locking order, everywhere: the job row first, then its chunk rows (no deadlock between a worker storing
a chunk and an admin cancelling the job).
"""
from __future__ import annotations

import importlib
import json
import math
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from annotate.models import Campaign, MetricScore, MetricSource, Summary
from factlab.jobs import (
    SCORING_CHUNK_LOCK,
    JobCancelled,
    cancel_checkpoint,
    is_running,
    running_lock,
    send_after_commit,
    task_named,
)
from metrics_service.scorers import REGISTRY, Scorer, ScorerError, scorer_class

from .models import (
    OPEN_CHUNK_STATUSES,
    ChunkStatus,
    JobStatus,
    Queue,
    ScoringChunk,
    ScoringJob,
)
from .stored_figures import schedule_figures

MAX_CHUNK_SIZE = 10_000


class RetryableChunkError(RuntimeError):
    """A chunk failed with attempts left; the Celery task retries it with backoff."""


def _register_extra_scorers() -> None:
    """Add scorers named in ``settings.FACTLAB_EXTRA_SCORERS`` (name -> "module:Class") to the registry.

    Used for deployment-specific scorers and by the worker tests (a deliberately slow scorer).
    """
    for name, target in getattr(settings, "FACTLAB_EXTRA_SCORERS", {}).items():
        REGISTRY.setdefault(name, target)


_register_extra_scorers()

#: Metrics whose chunks store more than scores: name -> "module:function", a function
#: ``(job, summary_ids) -> (rows, skipped, store)`` whose ``store()`` (or None) runs in the transaction that
#: stores the rows and marks the chunk done. The LLM annotator stores sentence judgements this way.
CHUNK_HANDLERS: dict[str, str] = {"llm_frank": "metrics_service.llm_annotation:annotate_chunk"}


# --------------------------------------------------------------------------- validation


def build_scorer(metric: str, config: dict[str, Any] | None = None) -> Scorer:
    """Return the scorer ``metric`` built with ``config``; ``ValueError`` naming what is wrong otherwise."""
    if not isinstance(metric, str) or not metric.strip():
        raise ValueError("metric must be a non-empty scorer name")
    try:
        cls = scorer_class(metric)
    except ImportError as exc:
        raise ValueError(f"metric {metric!r} cannot be loaded: {exc}") from exc
    if config is None:
        config = {}
    if not isinstance(config, dict):
        raise ValueError(f"config for metric {metric!r} must be an object of options, not {type(config).__name__}")
    bad_keys = [k for k in config if not isinstance(k, str) or not k]
    if bad_keys:
        raise ValueError(f"config for metric {metric!r} has invalid option names: {bad_keys!r}")
    try:
        json.dumps(config)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"config for metric {metric!r} is not JSON-serialisable: {exc}") from exc
    try:
        return cls(**config)
    except (TypeError, ValueError, ScorerError) as exc:
        raise ValueError(f"invalid configuration for metric {metric!r}: {exc}") from exc


_SCORER_CACHE: OrderedDict[tuple[str, str], Scorer] = OrderedDict()
_SCORER_CACHE_SIZE = 3


def _cached_scorer(job: ScoringJob) -> Scorer:
    """One scorer per (metric, configuration) per worker process: model weights load once, not per chunk."""
    key = (job.metric, job.config_key)
    if key in _SCORER_CACHE:
        _SCORER_CACHE.move_to_end(key)
        return _SCORER_CACHE[key]
    scorer = build_scorer(job.metric, job.config)
    _SCORER_CACHE[key] = scorer
    while len(_SCORER_CACHE) > _SCORER_CACHE_SIZE:
        _SCORER_CACHE.popitem(last=False)
    return scorer


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


# --------------------------------------------------------------------------- submission


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
        _dispatch_after_commit(job, chunk_ids)
    job.refresh_from_db()
    return job


def _dispatch_after_commit(job: ScoringJob, chunk_ids: Iterable[int]) -> None:
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


# --------------------------------------------------------------------------- references


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


# --------------------------------------------------------------------------- chunk processing


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
    scorer = _cached_scorer(job)
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


def _lock(job_id: int, chunk_id: int) -> tuple[ScoringJob, ScoringChunk]:
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
        job, chunk = _lock(job_id, chunk_id)
        if chunk.status not in OPEN_CHUNK_STATUSES:
            return chunk.status
        if job.status == JobStatus.CANCELLED:
            chunk.status, chunk.finished_at = ChunkStatus.CANCELLED, now
            chunk.save(update_fields=["status", "finished_at"])
            _refresh_job(job)
            return chunk.status
        if chunk.attempts >= _max_attempts():
            # Each start counts, redeliveries after a killed worker included: a chunk that kills its
            # worker every time must not loop forever.
            chunk.status, chunk.finished_at = ChunkStatus.FAILED, now
            chunk.error = f"gave up after {chunk.attempts} attempts (last error: {chunk.error or 'worker lost'})"
            chunk.save(update_fields=["status", "finished_at", "error"])
            _refresh_job(job)
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
            job, chunk = _lock(job_id, chunk_id)
            if chunk.status == ChunkStatus.RUNNING and chunk.attempts == attempt:
                chunk.status, chunk.finished_at = ChunkStatus.CANCELLED, timezone.now()
                chunk.save(update_fields=["status", "finished_at"])
                _refresh_job(job)
        return ChunkStatus.CANCELLED
    except Exception as exc:
        permanent = isinstance(exc, ScorerError)
        error = f"attempt {attempt}: {type(exc).__name__}: {exc}"
        with transaction.atomic():
            job, chunk = _lock(job_id, chunk_id)
            if chunk.status == ChunkStatus.RUNNING and chunk.attempts == attempt:
                if final_attempt or permanent:
                    chunk.status, chunk.finished_at = ChunkStatus.FAILED, timezone.now()
                else:
                    chunk.status = ChunkStatus.PENDING
                chunk.error = error[:5000]
                chunk.save(update_fields=["status", "finished_at", "error"])
                _refresh_job(job)
        if final_attempt or permanent:
            return ChunkStatus.FAILED
        raise RetryableChunkError(error) from exc

    with transaction.atomic():
        job, chunk = _lock(job_id, chunk_id)
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
        _refresh_job(job)
    return ChunkStatus.DONE


# --------------------------------------------------------------------------- progress


def _refresh_job(job: ScoringJob) -> None:
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
        _refresh_job(locked)
    job.refresh_from_db()
    return job


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


# --------------------------------------------------------------------------- cancel and requeue


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
            _refresh_job(locked)
    job.refresh_from_db()
    return job


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
            job, chunk = _lock(job_id, chunk_id)
            if chunk.status != ChunkStatus.RUNNING or not still(chunk):
                continue
            chunk.status = ChunkStatus.PENDING
            chunk.error = "re-queued: " + reason.format(started=chunk.started_at.isoformat() if chunk.started_at else "?")
            chunk.dispatched_at = None  # set again once the new message reaches the broker
            chunk.save(update_fields=["status", "error", "dispatched_at"])
            requeued.append((job, chunk_id))
    for job, chunk_id in requeued:
        _dispatch_after_commit(job, [chunk_id])
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
    chunks = list(
        ScoringChunk.objects.filter(lost, status=ChunkStatus.PENDING, job__status__in=[JobStatus.PENDING, JobStatus.RUNNING])
        .select_related("job")
    )
    by_job: dict[int, list[int]] = {}
    for chunk in chunks:
        by_job.setdefault(chunk.job_id, []).append(chunk.pk)
    jobs = {chunk.job_id: chunk.job for chunk in chunks}
    for job_id, chunk_ids in by_job.items():
        _dispatch_after_commit(jobs[job_id], chunk_ids)
    return [chunk.pk for chunk in chunks]


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
        _refresh_job(locked)
        _dispatch_after_commit(locked, chunk_ids)
    job.refresh_from_db()
    return job
