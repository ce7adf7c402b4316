"""Celery task computing a campaign's analysis report off the request path.

The API answers 202 with the progress this task writes to the cache (``report.set_report_progress``) until
the report itself is cached by ``get_or_compute_report``; callers then read it back (cheap) or take the
task's return value.
"""
from __future__ import annotations

from celery import shared_task

from metrics_service.report import (
    get_or_compute_report,
    normalize_options,
    resolve_campaign,
    set_report_progress,
)


@shared_task(name="metrics_service.tasks_report.compute_report")
def compute_report(
    campaign_slug: str, split: str = "all", dataset: str | None = None, system: str | None = None, partial: bool = True,
    spearman: str = "residuals", auc_references: str = "per_pair", include_incomplete: bool = False,
    aggregation: str = "majority", kendall: bool = False, min_label_posterior: float | None = None,
) -> dict:
    """Compute (or fetch from the cache) the report of ``campaign_slug`` and return it as JSON data."""
    campaign = resolve_campaign(campaign_slug)
    options = normalize_options(split, dataset, system, partial, spearman, auc_references, include_incomplete, aggregation, kendall, min_label_posterior)

    def progress(step: int, total: int, section: str) -> None:
        set_report_progress(campaign, options, state="running", step=step, total=total, section=section)

    try:
        return get_or_compute_report(campaign, progress=progress, **options)
    except Exception as exc:  # recorded for the polling client, then re-raised for Celery
        set_report_progress(campaign, options, state="failed", error=str(exc)[:500])
        raise
