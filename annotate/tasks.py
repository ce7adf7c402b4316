"""Celery tasks of the annotate app: imports, and the periodic upkeep of the beat schedule (factlab/settings.py)."""
from __future__ import annotations

from datetime import timedelta

from celery import shared_task
from django.conf import settings


@shared_task(name="annotate.run_import_job", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def run_import_job(job_id: int) -> str:
    """Import an uploaded file (:func:`annotate.services.import_jobs.execute_import_job`); returns the final status.

    Each start counts against ``FACTLAB_IMPORT_MAX_ATTEMPTS`` (a file that kills its worker fails for good).
    """
    from annotate.services.import_jobs import execute_import_job

    return execute_import_job(job_id).status


@shared_task(name="annotate.heal_import_jobs", ignore_result=True)
def heal_import_jobs() -> list[int]:
    """Beat: re-send import jobs whose message never reached the broker or was lost there, or whose worker died."""
    from annotate.services.import_jobs import heal_import_jobs as heal

    return heal(timedelta(seconds=settings.FACTLAB_HEAL_GRACE_SECONDS), timedelta(seconds=settings.FACTLAB_HEAL_PENDING_SECONDS))


@shared_task(name="annotate.heal_page_preparations", ignore_result=True)
def heal_page_preparations() -> list[int]:
    """Beat: re-send page preparations whose message never reached the broker or was lost there, or whose worker died;
    queue one for each campaign whose pages the running code has not prepared (after a deploy that changed the rules)."""
    from annotate.services.page_preparations import heal_page_preparations as heal
    from annotate.services.page_preparations import queue_out_of_date_preparations

    resent = heal(timedelta(seconds=settings.FACTLAB_HEAL_GRACE_SECONDS), timedelta(seconds=settings.FACTLAB_HEAL_PENDING_SECONDS))
    return resent + queue_out_of_date_preparations()


@shared_task(name="annotate.purge_import_uploads", ignore_result=True)
def purge_import_uploads() -> int:
    """Beat: delete uploaded files of finished imports (failed ones after the retention time)."""
    from annotate.services.import_jobs import purge_import_uploads as purge

    return purge()


@shared_task(name="annotate.expire_stale_assignments", ignore_result=True)
def expire_stale_assignments() -> int:
    """Beat: free the slots of assignments past their deadline, or whose page stopped reporting, in every running campaign."""
    from annotate.models import Campaign, CampaignStatus
    from annotate.services.assignments import free_abandoned_slots as expire

    return sum(expire(campaign) for campaign in Campaign.objects.filter(status=CampaignStatus.RUNNING))


@shared_task(name="annotate.prepare_campaign_pages", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def prepare_campaign_pages(campaign_id: int, run_id: int | None = None) -> int:
    """After an import: compute what the campaign's task pages need (FRANK: entity pools, traps, shown
    sentences, relevance), so that claims do no NLP. Idempotent: prepared documents are skipped.
    ``run_id`` names its :class:`annotate.models.PagePreparation` row (progress, healing, cancel)."""
    from annotate.services.page_preparations import execute_page_preparation

    return execute_page_preparation(campaign_id, run_id)
