"""Celery tasks computing a campaign's analysis report and the admin pages' figures off the request path
(queue ``reports``).

The API answers 202 with the job's progress this task records (``report_jobs.set_report_progress``) until the
report itself is cached by ``get_or_compute_report``; callers then read it back (cheap) or take the task's
return value.
"""
from __future__ import annotations

from celery import shared_task

from metrics_service.figures import store_scatters
from metrics_service.report import (
    cached_report,
    get_or_compute_report,
    normalize_options,
    resolve_campaign,
)
from metrics_service.report_jobs import finish_job, set_report_progress, start_job


@shared_task(name="metrics_service.tasks_report.compute_report")
def compute_report(
    campaign_slug: str, split: str = "all", dataset: str | None = None, system: str | None = None, partial: bool = True,
    spearman: str = "residuals", auc_references: str = "per_pair", include_incomplete: bool = False,
    aggregation: str = "majority", kendall: bool = False, min_label_posterior: float | None = None,
    job: str | None = None,
) -> dict:
    """Compute (or fetch from the cache) the report of ``campaign_slug`` and return it as JSON data.

    ``job``: the id of the report job this message runs (``report_jobs.request_report``); a second delivery of
    a job that is running already returns the cached report, or nothing, at once.
    """
    campaign = resolve_campaign(campaign_slug)
    options = normalize_options(split, dataset, system, partial, spearman, auc_references, include_incomplete, aggregation, kendall, min_label_posterior)
    if job is not None and not start_job(campaign, options, job):
        return cached_report(campaign, **options) or {}

    def progress(step: int, total: int, section: str) -> None:
        set_report_progress(campaign, options, job=job, state="running", step=step, total=total, section=section)

    try:
        report = get_or_compute_report(campaign, progress=progress, **options)
        store_scatters(campaign, options, report)  # the dashboard's scatters, so that it only reads them
    except Exception as exc:  # recorded for the polling client, then re-raised for Celery
        set_report_progress(campaign, options, job=job, state="failed", error=str(exc)[:500])
        raise
    finish_job(campaign, options, job)
    return report


@shared_task(name="metrics_service.compute_campaign_figures", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def compute_campaign_figures(campaign_id: int) -> dict:
    """Store the admin pages' figures of a campaign whose data changed, then queue its default report
    (:func:`metrics_service.figures.compute_campaign_figures`)."""
    from annotate.models import Campaign
    from metrics_service.figures import compute_campaign_figures as compute

    campaign = Campaign.objects.filter(pk=campaign_id).first()
    return compute(campaign) if campaign is not None else {}
