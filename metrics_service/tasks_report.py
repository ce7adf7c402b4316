"""Celery task computing a campaign's analysis report in the background (large campaigns).

The result is stored in Django's cache by ``get_or_compute_report``; callers read it back with the same
function (cheap once computed) or take the task's return value.
"""
from __future__ import annotations

from celery import shared_task

from metrics_service.report import get_or_compute_report


@shared_task(name="metrics_service.tasks_report.compute_report")
def compute_report(campaign_slug: str, split: str = "all", dataset: str | None = None, system: str | None = None, partial: bool = True) -> dict:
    """Compute (or fetch from the cache) the report of ``campaign_slug`` and return it as JSON data."""
    return get_or_compute_report(campaign_slug, split=split, dataset=dataset, system=system, partial=partial)
