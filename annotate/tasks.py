"""Celery tasks of the annotate app: imports, and the periodic upkeep of the beat schedule (factlab/settings.py)."""
from __future__ import annotations

from datetime import timedelta

from celery import shared_task
from django.conf import settings


@shared_task(name="annotate.run_import_job", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def run_import_job(job_id: int) -> str:
    """Import an uploaded file (:func:`annotate.api.services.execute_import_job`); returns the final status.

    Each start counts against ``FACTLAB_IMPORT_MAX_ATTEMPTS`` (a file that kills its worker fails for good).
    """
    from annotate.api.services import execute_import_job

    return execute_import_job(job_id).status


@shared_task(name="annotate.heal_import_jobs", ignore_result=True)
def heal_import_jobs() -> list[int]:
    """Beat: re-send import jobs whose message never reached the broker or whose worker died."""
    from annotate.api.services import heal_import_jobs as heal

    return heal(timedelta(seconds=settings.FACTLAB_HEAL_GRACE_SECONDS))


@shared_task(name="annotate.purge_import_uploads", ignore_result=True)
def purge_import_uploads() -> int:
    """Beat: delete uploaded files of finished imports (failed ones after the retention time)."""
    from annotate.api.services import purge_import_uploads as purge

    return purge()


@shared_task(name="annotate.expire_stale_assignments", ignore_result=True)
def expire_stale_assignments() -> int:
    """Beat: free the slots of assignments past their deadline, or whose page stopped reporting, in every running campaign."""
    from annotate.models import Campaign, CampaignStatus
    from annotate.services.assignments import free_abandoned_slots as expire

    return sum(expire(campaign) for campaign in Campaign.objects.filter(status=CampaignStatus.RUNNING))


@shared_task(name="annotate.prepare_campaign_pages", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def prepare_campaign_pages(campaign_id: int) -> int:
    """After an import: compute what the campaign's task pages need (FRANK: entity pools, traps, shown
    sentences, relevance), so that claims do no NLP. Idempotent: prepared documents are skipped."""
    from annotate.models import Campaign
    from annotate.protocols import protocol_for

    campaign = Campaign.objects.filter(pk=campaign_id).first()
    return protocol_for(campaign.kind).prepare_campaign(campaign) if campaign else 0
