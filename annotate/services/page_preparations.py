"""The page-preparation job of a campaign: queued after each dataset import, healed, cancelled and retried.

Each run is a :class:`annotate.models.PagePreparation` row, so a lost message or a dead worker is found by
the beat (:func:`heal_page_preparations`) like any other job, and the campaign page shows its progress.
Preparing is idempotent (prepared documents are skipped), so a duplicate delivery costs a query.
"""
from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, F, OuterRef
from django.utils import timezone

from annotate.models import Campaign, CampaignStatus, ImportStatus, PagePreparation
from annotate.services.job_state import JobStateError, lost_pending
from factlab.jobs import (
    PAGE_PREPARATION_LOCK,
    JobCancelled,
    cancel_checkpoint,
    is_running,
    require_broker,
    running_lock,
    send_after_commit,
    task_named,
)

logger = logging.getLogger(__name__)
OPEN = (ImportStatus.PENDING, ImportStatus.RUNNING)
MAX_ATTEMPTS = 3


def queue_page_preparation(campaign: Campaign) -> PagePreparation:
    """Record a preparation of ``campaign`` and send its task after commit (an open one is reused)."""
    open_run = PagePreparation.objects.filter(campaign=campaign, status=ImportStatus.PENDING).first()
    if open_run is not None:
        return open_run
    from annotate.protocols import protocol_for

    run = PagePreparation.objects.create(campaign=campaign, code_version=protocol_for(campaign.kind).pages_version())
    dispatch_page_preparation(run)
    return run


def queue_out_of_date_preparations() -> list[int]:
    """Queue a preparation of each campaign not finished with a document whose task page the current code has not
    prepared (a deploy that changed the page rules; a page removed). Returns the runs queued or reused.

    A campaign with a run of this code version under way, failed or cancelled is left alone: the first does the
    work, the others wait for their admin's retry (a run that fails on a document would otherwise be queued again
    at every beat). One whose run of this version succeeded and still has such a page gets another run: the pages
    were prepared meanwhile by a worker of other code (during a rolling deploy) or removed.

    Without it, nothing prepares such pages but the claims, one at a time inside the workers' requests (spaCy
    loaded into each web process), until an admin runs ``manage.py prepare_pages``.
    ``FACTLAB_PREPARE_PAGES_AFTER_IMPORT=0`` (no automatic preparation) turns it off with the job after imports."""
    from annotate.protocols import all_protocols

    if not settings.FACTLAB_PREPARE_PAGES_AFTER_IMPORT:
        return []
    live = Campaign.objects.exclude(status=CampaignStatus.FINISHED)
    queued = []
    for protocol in all_protocols():
        version = protocol.pages_version()
        if not version:
            continue
        waiting = PagePreparation.objects.filter(campaign=OuterRef("pk"), code_version=version).exclude(status=ImportStatus.SUCCEEDED)
        candidates = live.filter(kind=protocol.kind).exclude(Exists(waiting))
        for campaign in protocol.campaigns_with_unprepared_pages(candidates):
            run = queue_page_preparation(campaign)
            logger.info("page preparation %s of campaign %s: pages out of date for code version %s", run.pk, campaign.slug, version)
            queued.append(run.pk)
    return queued


def dispatch_page_preparation(run: PagePreparation) -> None:
    send_after_commit(
        lambda: task_named("annotate.prepare_campaign_pages").delay(run.campaign_id, run.pk), what=f"page preparation {run.pk}",
        on_sent=lambda: PagePreparation.objects.filter(pk=run.pk).update(dispatched_at=timezone.now()),
    )


def execute_page_preparation(campaign_id: int, run_id: int | None = None) -> int:
    """Prepare the campaign's missing pages under run ``run_id`` (none: an untracked run, e.g. old messages)."""
    from annotate.protocols import protocol_for

    from .gold import recount_bonus_evidence

    campaign = Campaign.objects.filter(pk=campaign_id).first()
    if campaign is None:
        return 0
    protocol = protocol_for(campaign.kind)
    if run_id is None:
        prepared = protocol.prepare_campaign(campaign)
        recount_bonus_evidence(campaign)  # preparing pages adds traps
        return prepared
    with running_lock(PAGE_PREPARATION_LOCK, run_id) as acquired:
        run = PagePreparation.objects.filter(pk=run_id).first()
        if run is None or not acquired or run.status not in OPEN:
            return 0  # another delivery runs it, it finished, or it was cancelled
        if run.attempts >= MAX_ATTEMPTS:
            _finish(run, ImportStatus.FAILED, f"gave up after {run.attempts} attempts: the worker was lost each time")
            return 0
        PagePreparation.objects.filter(pk=run.pk).update(
            status=ImportStatus.RUNNING, started_at=timezone.now(), attempts=F("attempts") + 1, error=""
        )

        def progress(done: int, total: int) -> None:
            PagePreparation.objects.filter(pk=run.pk).update(done=done, total=total)

        # Asked between documents (at most once a second): a cancel stops the run within about a second, and
        # the documents of the unfinished batch are not stored.
        checkpoint = cancel_checkpoint(lambda: PagePreparation.objects.filter(pk=run.pk, status=ImportStatus.CANCELLED).exists())
        try:
            prepared = protocol.prepare_campaign(campaign, progress=progress, checkpoint=checkpoint)
        except JobCancelled:
            logger.info("page preparation %s stopped: cancelled", run.pk)
            return 0
        except Exception as exc:
            logger.exception("page preparation %s failed", run.pk)
            _finish(run, ImportStatus.FAILED, f"{type(exc).__name__}: {exc}")
            return 0
        recount_bonus_evidence(campaign)  # preparing pages adds traps
        _finish(run, ImportStatus.SUCCEEDED, "")
        return prepared


def _finish(run: PagePreparation, status: str, error: str) -> None:
    # A cancel that arrived during the last batch stands.
    PagePreparation.objects.filter(pk=run.pk).exclude(status=ImportStatus.CANCELLED).update(
        status=status, error=error[:5000], finished_at=timezone.now()
    )


def heal_page_preparations(grace: timedelta, pending_after: timedelta | None = None) -> list[int]:
    """Send again preparations never sent, lost in the broker, or whose worker died."""
    cutoff = timezone.now() - grace
    pending = lost_pending(PagePreparation.objects.filter(status=ImportStatus.PENDING), grace=grace, pending_after=pending_after)
    running = PagePreparation.objects.filter(status=ImportStatus.RUNNING, started_at__lt=cutoff)
    orphaned = [run for run in running if not is_running(PAGE_PREPARATION_LOCK, run.pk)]
    resend = list(pending) + orphaned
    for run in resend:
        dispatch_page_preparation(run)
    return [run.pk for run in resend]


def cancel_page_preparation(run: PagePreparation) -> PagePreparation:
    """Stop a pending or running preparation (a running one within about a second: its worker asks between documents).

    Claims still prepare a missing page on demand, so cancelling never breaks the task pages.
    """
    with transaction.atomic():
        locked = PagePreparation.objects.select_for_update().get(pk=run.pk)
        if locked.status == ImportStatus.CANCELLED:
            return locked
        if locked.status not in OPEN:
            raise JobStateError(f"page preparation {locked.pk} is {locked.status}; nothing to cancel")
        locked.status, locked.finished_at = ImportStatus.CANCELLED, timezone.now()
        locked.save(update_fields=["status", "finished_at"])
    return locked


def retry_page_preparation(run: PagePreparation) -> PagePreparation:
    """Start a failed or cancelled preparation again (documents prepared meanwhile are skipped)."""
    require_broker()
    with transaction.atomic():
        locked = PagePreparation.objects.select_for_update().get(pk=run.pk)
        if locked.status not in (ImportStatus.FAILED, ImportStatus.CANCELLED):
            raise JobStateError(f"page preparation {locked.pk} is {locked.status}; only a failed or cancelled one can be retried")
        PagePreparation.objects.filter(pk=locked.pk).update(
            status=ImportStatus.PENDING, attempts=0, error="", started_at=None, finished_at=None, dispatched_at=None
        )
        dispatch_page_preparation(locked)
    locked.refresh_from_db()
    return locked
