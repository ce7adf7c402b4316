"""The import-job lifecycle: an upload is stored, queued, run by a Celery task, healed and purged."""
from __future__ import annotations

import logging
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.core.cache import cache
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from annotate.importers.base import ImportFailed
from annotate.importers.sniff import Detection, Sample, describe, read_sample, recognize
from annotate.models import Campaign, ImportJob, ImportStatus
from annotate.protocols import dataset_formats
from annotate.services.job_state import JobStateError, lost_pending
from annotate.services.researchers import (
    ResearcherError,
    check_import_allowed,
    grant_imported_campaign,
)
from factlab.jobs import (
    IMPORT_JOB_LOCK,
    is_running,
    require_broker,
    running_lock,
    send_after_commit,
    task_named,
)

# Accepted file name endings of metric-score uploads (dataset formats name theirs in their protocol).
SCORE_SUFFIXES: dict[str, tuple[str, ...]] = {"frank": (".json",), "jsonl": (".jsonl",), "csv": (".csv",)}
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


def upload_suffixes() -> dict[tuple[str, str], tuple[str, ...]]:
    """Accepted file name endings per (import kind, format): the protocols' dataset formats, then the score formats."""
    found = {("dataset", name): fmt.suffixes for name, (fmt, _) in dataset_formats().items()}
    return found | {("scores", name): suffixes for name, suffixes in SCORE_SUFFIXES.items()}


def dataset_option_formats() -> list[str]:
    return [name for name, (fmt, _) in dataset_formats().items() if "dataset" in fmt.options]


#: The format (and kind) to take from the file's content (annotate.importers.sniff).
DETECT = "auto"


def detect_dataset(upload: UploadedFile) -> tuple[list[Detection], Sample]:
    """The dataset formats whose recognizers accept the upload's head, and the sample they read."""
    upload.seek(0)
    sample = read_sample(Path(upload.name or "").name, upload.file if hasattr(upload, "file") else upload)
    upload.seek(0)
    recognizers = {name: fmt.recognize for name, (fmt, _) in dataset_formats().items() if fmt.recognize}
    return recognize(sample, recognizers), sample


def resolve_detection(
    upload: UploadedFile, *, fmt: str, campaign_kind: str, existing_kind: str | None = None,
) -> tuple[str, str, str]:
    """``(format, campaign kind, what was detected and why)`` for a dataset upload: ``auto`` takes the format
    (and, for a new campaign without a chosen kind, the kind) from the content; a choice the content
    contradicts is refused naming what the file looks like, never imported as a silent guess."""
    detections, sample = detect_dataset(upload)
    name = Path(upload.name or "").name
    if fmt == DETECT:
        if not detections:
            known = ", ".join(f for f, (dataset_format, _) in dataset_formats().items() if dataset_format.recognize)
            raise ValueError(f"format: {name!r} fits no dataset format this platform reads ({known}): it is "
                             f"{describe(sample)}; choose the format by name if you know it")
        chosen = detections[0]
    else:
        matching = [d for d in detections if d.format == fmt]
        if detections and not matching:
            other = detections[0]
            raise ValueError(f"format: {fmt!r} was chosen, but {name!r} looks like {other.format}: {other.reason}; "
                             f"choose {other.format!r} (or 'auto')")
        chosen = matching[0] if matching else None
    if chosen is None:
        return fmt, campaign_kind, ""
    wanted = campaign_kind or existing_kind
    if chosen.kind and wanted and wanted != chosen.kind:
        where = "the campaign is" if existing_kind and not campaign_kind else "the kind chosen is"
        raise ValueError(f"campaign_kind: {where} {wanted!r}, but {name!r} is {chosen.reason}; "
                         f"import it into a {chosen.kind!r} campaign")
    kind = campaign_kind or ("" if existing_kind else (chosen.kind or ""))
    return chosen.format, kind, f"{chosen.format}{f' ({chosen.kind})' if chosen.kind else ''}: {chosen.reason}"


def create_import_job(
    *, kind: str, fmt: str, campaign_slug: str, campaign_kind: str, upload: UploadedFile, user, options: dict | None = None,
    confirm_first: bool = False,
) -> ImportJob:
    """Store the uploaded file under MEDIA_ROOT, record the job, and queue its task once committed.

    A dataset upload's content is recognised first (:func:`resolve_detection`): ``fmt="auto"`` takes the format
    and kind from it, a contradicted choice is refused. With ``confirm_first`` (the browser's new-campaign form)
    the job waits, status ``detected``, until the admin confirms what was detected (:func:`confirm_import_job`).

    Raises ``ValueError`` for a format/kind pair that does not exist or a file with the wrong ending,
    :class:`UploadTooLarge` above the size limit, and for researchers the refusals of
    ``annotate.services.researchers.check_import_allowed`` (nothing is stored then).
    """
    options = {k: v for k, v in (options or {}).items() if v}
    suffixes_by_format = upload_suffixes()
    check_import_allowed(user, kind=kind, campaign_slug=campaign_slug)
    check_upload_size(upload.size)
    # after the right to the campaign is checked: the answer names the campaign's kind
    if kind == "dataset":
        existing = Campaign.objects.filter(slug=campaign_slug).values_list("kind", flat=True).first()
        fmt, campaign_kind, detected = resolve_detection(upload, fmt=fmt, campaign_kind=campaign_kind, existing_kind=existing)
        if detected:
            options["detected"] = detected
    if options.get("dataset") and fmt not in dataset_option_formats():
        raise ValueError(f"dataset: applies to {', '.join(dataset_option_formats())} dataset imports only")
    suffixes = suffixes_by_format.get((kind, fmt))
    if suffixes is None:
        known = ", ".join(f"{k}/{f}" for k, f in suffixes_by_format)
        raise ValueError(f"no {kind} import in format {fmt!r}; expected one of {known}")
    name = Path(upload.name or "").name
    if not name.lower().endswith(suffixes):
        raise ValueError(f"a {kind} import in format {fmt!r} takes a {' or '.join(suffixes)} file, got {name!r}")
    require_broker()  # 503 before anything is stored: an import cannot start without the task queue

    with transaction.atomic():
        job = ImportJob(
            kind=kind, format=fmt, campaign_slug=campaign_slug, campaign_kind=campaign_kind or "",
            original_name=name[:255], size=upload.size or 0, created_by=user if user.is_authenticated else None,
            options=options,
        )
        if confirm_first:
            job.status = ImportStatus.DETECTED
        job.file.save(name, upload, save=False)
        job.save()
        if not confirm_first:
            dispatch_import_job(job.pk)
    return job


def confirm_import_job(job: ImportJob) -> ImportJob:
    """Queue a job that waited for the admin to confirm its detected format and kind."""
    with transaction.atomic():
        locked = ImportJob.objects.select_for_update().get(pk=job.pk)
        if locked.status != ImportStatus.DETECTED:
            raise JobStateError(f"import job {job.pk} is {locked.status}, not waiting for a confirmation")
        locked.status = ImportStatus.PENDING
        locked.save(update_fields=["status"])
        dispatch_import_job(locked.pk)
    return locked


def dispatch_import_job(job_id: int) -> None:
    """Queue the job's task after commit; if the broker is down then, the beat sends it later."""
    send_after_commit(
        lambda: task_named("annotate.run_import_job").delay(job_id), what=f"import job {job_id}",
        on_sent=lambda: ImportJob.objects.filter(pk=job_id).update(dispatched_at=timezone.now()),
    )


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
    A running lock keeps two deliveries of one job from running at once; every start counts, and a job
    whose worker died ``FACTLAB_IMPORT_MAX_ATTEMPTS`` times fails for good. The uploaded file is deleted
    after a successful import (failed ones are kept for ``FACTLAB_IMPORT_FAILED_RETENTION_HOURS``).
    """
    with running_lock(IMPORT_JOB_LOCK, job_id) as acquired:
        job = ImportJob.objects.get(pk=job_id)
        if not acquired or job.status not in (ImportStatus.PENDING, ImportStatus.RUNNING):
            return job  # another delivery is running it, the outcome is recorded, or it was cancelled
        return _run_import(job)


def _run_import(job: ImportJob) -> ImportJob:
    from annotate.services.imports import import_dataset, import_scores

    limit = int(settings.FACTLAB_IMPORT_MAX_ATTEMPTS)
    if job.attempts >= limit:
        ImportJob.objects.filter(pk=job.pk).update(
            status=ImportStatus.FAILED, finished_at=timezone.now(),
            error={
                "file": job.original_name, "record": None, "field": None,
                "message": f"gave up after {job.attempts} attempts: the worker running this import was lost each time "
                           "(a file too large for its memory?); nothing was stored",
                "error": f"gave up after {job.attempts} attempts",
            },
        )
        job.refresh_from_db()
        return job
    ImportJob.objects.filter(pk=job.pk).update(status=ImportStatus.RUNNING, started_at=timezone.now(), attempts=F("attempts") + 1)
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
        _delete_upload(job)
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
    """Importer options recorded with the job (e.g. QAGS's ``dataset``), as ``import_dataset`` keywords; the
    detection note (``detected``) is for the import page only."""
    return {k: v for k, v in (job.options or {}).items() if v and k != "detected"}


def _delete_upload(job: ImportJob) -> None:
    if job.file:
        job.file.delete(save=False)
    ImportJob.objects.filter(pk=job.pk).update(file="")


def purge_import_uploads(now=None) -> int:
    """Delete the files of finished imports: succeeded ones at once, failed or cancelled ones after the retention time."""
    now = now or timezone.now()
    cutoff = now - timedelta(hours=float(settings.FACTLAB_IMPORT_FAILED_RETENTION_HOURS))
    finished = ImportJob.objects.exclude(file="").filter(
        Q(status=ImportStatus.SUCCEEDED) | Q(status__in=[ImportStatus.FAILED, ImportStatus.CANCELLED], finished_at__lt=cutoff)
    )
    count = 0
    for job in finished.iterator():
        _delete_upload(job)
        count += 1
    return count


def heal_import_jobs(grace: timedelta, pending_after: timedelta | None = None) -> list[int]:
    """Send again the jobs whose message never reached the broker or was lost there (pending for more than
    ``pending_after`` after it was sent), and those whose worker died mid-import."""
    cutoff = timezone.now() - grace
    pending = lost_pending(ImportJob.objects.filter(status=ImportStatus.PENDING), grace=grace, pending_after=pending_after)
    running = ImportJob.objects.filter(status=ImportStatus.RUNNING, started_at__lt=cutoff)
    orphaned = [pk for pk in running.values_list("pk", flat=True) if not is_running(IMPORT_JOB_LOCK, pk)]
    resend = list(pending.values_list("pk", flat=True)) + orphaned
    for pk in resend:
        dispatch_import_job(pk)
    return resend


def cancel_import_job(job: ImportJob) -> ImportJob:
    """Cancel a job no worker has started: it will never run (its upload is kept until purged).

    A running import is atomic and cannot be stopped half-way (``JobStateError``); cancelling a cancelled
    job does nothing.
    """
    with transaction.atomic():
        locked = ImportJob.objects.select_for_update().get(pk=job.pk)
        if locked.status == ImportStatus.CANCELLED:
            return locked
        if locked.status != ImportStatus.PENDING:
            raise JobStateError(f"import job {locked.pk} is {locked.status}; only a pending import can be cancelled")
        locked.status, locked.finished_at = ImportStatus.CANCELLED, timezone.now()
        locked.save(update_fields=["status", "finished_at"])
    return locked


def retry_import_job(job: ImportJob) -> ImportJob:
    """Run a failed or cancelled import again from its kept upload (attempts start from zero).

    ``JobStateError`` when the job is pending, running or succeeded, or when its upload was already purged
    (upload the file again then).
    """
    require_broker()
    with transaction.atomic():
        locked = ImportJob.objects.select_for_update().get(pk=job.pk)
        if locked.status not in (ImportStatus.FAILED, ImportStatus.CANCELLED):
            raise JobStateError(f"import job {locked.pk} is {locked.status}; only a failed or cancelled import can be retried")
        if not locked.file:
            raise JobStateError(f"the upload of import job {locked.pk} was deleted after the retention time; upload the file again")
        ImportJob.objects.filter(pk=locked.pk).update(
            status=ImportStatus.PENDING, error={}, attempts=0, done=0, total=None,
            started_at=None, finished_at=None, dispatched_at=None,
        )
        dispatch_import_job(locked.pk)
    locked.refresh_from_db()
    return locked
