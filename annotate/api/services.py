"""Write operations behind the API that have no home in the workflow services: uploads and global blocks."""
from __future__ import annotations

import logging
from pathlib import Path

from django.conf import settings
from django.core.cache import cache
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils import timezone

from annotate.importers.base import ImportFailed
from annotate.services.live_counts import close_assignments
from annotate.services.researchers import ResearcherError, check_import_allowed, grant_imported_campaign
from annotate.models import (
    Assignment,
    Campaign,
    AssignmentStatus,
    ImportJob,
    ImportStatus,
    Worker,
)

# Accepted file name endings per (kind, format): FRANK's folder travels as a zip.
UPLOAD_SUFFIXES: dict[tuple[str, str], tuple[str, ...]] = {
    ("dataset", "frank"): (".zip",),
    ("dataset", "bump"): (".json",),
    ("dataset", "qags"): (".jsonl",),
    ("dataset", "jsonl"): (".jsonl",),
    ("scores", "frank"): (".json",),
    ("scores", "jsonl"): (".jsonl",),
    ("scores", "csv"): (".csv",),
}
logger = logging.getLogger(__name__)
PROGRESS_KEY = "factlab:import-progress:{}"
PROGRESS_EVERY = 200  # records between progress writes


class UploadTooLarge(ValueError):
    """The upload is above ``settings.FACTLAB_MAX_UPLOAD_BYTES``."""


def max_upload_bytes() -> int:
    return int(settings.FACTLAB_MAX_UPLOAD_BYTES)


def check_upload_size(size: int | None) -> None:
    """Refuse uploads above the configured limit with a message naming both sizes."""
    limit = max_upload_bytes()
    if size is not None and size > limit:
        raise UploadTooLarge(f"the upload is {size} bytes; the limit is {limit} bytes (FACTLAB_MAX_UPLOAD_BYTES)")


def create_import_job(
    *, kind: str, fmt: str, campaign_slug: str, campaign_kind: str, upload: UploadedFile, user, options: dict | None = None
) -> ImportJob:
    """Store the uploaded file under MEDIA_ROOT, record the job, and queue its task once committed.

    Raises ``ValueError`` for a format/kind pair that does not exist or a file with the wrong ending,
    :class:`UploadTooLarge` above the size limit, and for researchers the refusals of
    ``annotate.services.researchers.check_import_allowed`` (nothing is stored then).
    """
    options = {k: v for k, v in (options or {}).items() if v}
    if options.get("dataset") and (kind, fmt) != ("dataset", "qags"):
        raise ValueError("dataset: applies to qags dataset imports only")
    check_import_allowed(user, kind=kind, campaign_slug=campaign_slug)
    suffixes = UPLOAD_SUFFIXES.get((kind, fmt))
    if suffixes is None:
        known = ", ".join(f"{k}/{f}" for k, f in UPLOAD_SUFFIXES)
        raise ValueError(f"no {kind} import in format {fmt!r}; expected one of {known}")
    name = Path(upload.name or "").name
    if not name.lower().endswith(suffixes):
        raise ValueError(f"a {kind} import in format {fmt!r} takes a {' or '.join(suffixes)} file, got {name!r}")
    check_upload_size(upload.size)
    from annotate.tasks import run_import_job

    with transaction.atomic():
        job = ImportJob(
            kind=kind, format=fmt, campaign_slug=campaign_slug, campaign_kind=campaign_kind or "",
            original_name=name[:255], size=upload.size or 0, created_by=user if user.is_authenticated else None,
            options=options,
        )
        job.file.save(name, upload, save=False)
        job.save()
        transaction.on_commit(lambda: run_import_job.delay(job.pk))
    return job


def import_progress(job: ImportJob) -> dict:
    """``done``/``total`` records: live from the cache while the job runs, else from the row."""
    if job.status == ImportStatus.RUNNING:
        live = cache.get(PROGRESS_KEY.format(job.pk))
        if live:
            return {"done": live[0], "total": live[1]}
    return {"done": job.done, "total": job.total}


def execute_import_job(job_id: int) -> ImportJob:
    """Run one import job: the import itself is atomic, so a failure stores nothing but the error report.

    Progress goes to the cache (the import's transaction hides row updates from other connections).
    """
    from annotate.services.imports import import_dataset, import_scores

    job = ImportJob.objects.get(pk=job_id)
    if job.status in (ImportStatus.SUCCEEDED, ImportStatus.FAILED):
        return job  # a re-delivered task: the outcome is already recorded
    ImportJob.objects.filter(pk=job.pk).update(status=ImportStatus.RUNNING, started_at=timezone.now())
    key = PROGRESS_KEY.format(job.pk)
    state = {"done": 0, "total": None}

    def progress(done: int, total: int | None) -> None:
        state["done"], state["total"] = done, total
        if done % PROGRESS_EVERY == 0 or (total is not None and done >= total):
            cache.set(key, (done, total), 24 * 3600)

    path = Path(job.file.path)
    try:
        with transaction.atomic():  # the researcher's grant commits with the import, or neither
            _check_job_allowed(job)
            if job.kind == "scores":
                report = import_scores(job.format, [path], campaign_slug=job.campaign_slug, progress=progress)
            else:
                report = import_dataset(
                    job.format, [path], campaign_slug=job.campaign_slug, campaign_kind=job.campaign_kind or None,
                    progress=progress, **job_options(job),
                )
                grant_imported_campaign(job.created_by, job.campaign_slug)
    except ImportFailed as exc:
        error = exc.as_dict()
        error["file"] = job.original_name if error.get("file") in (None, str(path)) else Path(error["file"]).name
        ImportJob.objects.filter(pk=job.pk).update(
            status=ImportStatus.FAILED, error=error, done=state["done"], total=state["total"], finished_at=timezone.now()
        )
    except Exception as exc:  # a bug or a lost database: record it so the job never stays "running"
        logger.exception("import job %s crashed", job.pk)
        ImportJob.objects.filter(pk=job.pk).update(
            status=ImportStatus.FAILED, finished_at=timezone.now(),
            error={"file": job.original_name, "record": None, "field": None, "message": f"internal error: {exc}", "error": str(exc)},
        )
    else:
        ImportJob.objects.filter(pk=job.pk).update(
            status=ImportStatus.SUCCEEDED, report=report.as_dict(), done=report.records or state["done"],
            total=state["total"] if state["total"] is not None else report.records, finished_at=timezone.now(),
        )
    cache.delete(key)
    job.refresh_from_db()
    return job


def _check_job_allowed(job: ImportJob) -> None:
    """Re-check a researcher's right at run time (a slug may have been taken since the upload)."""
    if job.created_by is None:
        return
    try:
        check_import_allowed(job.created_by, kind=job.kind, campaign_slug=job.campaign_slug)
    except (ResearcherError, Campaign.DoesNotExist) as exc:
        raise ImportFailed(str(exc), field="campaign") from exc


def job_options(job: ImportJob) -> dict:
    """Importer options recorded with the job (e.g. QAGS's ``dataset``), as ``import_dataset`` keywords."""
    return {k: v for k, v in (job.options or {}).items() if v}


def block_worker(worker: Worker, reason: str) -> Worker:
    """Block a worker from every campaign and release their unfinished assignments."""
    with transaction.atomic():
        Worker.objects.filter(pk=worker.pk).update(is_blocked=True, blocked_reason=reason[:300])
        close_assignments(Assignment.objects.filter(worker=worker), AssignmentStatus.RELEASED)
    worker.refresh_from_db()
    return worker


def unblock_worker(worker: Worker) -> Worker:
    Worker.objects.filter(pk=worker.pk).update(is_blocked=False, blocked_reason="")
    worker.refresh_from_db()
    return worker
