"""The figures of the admin pages, computed by workers when a campaign's data changes, read by the pages.

* **Computed by a worker** (task ``metrics_service.compute_campaign_figures``, queue ``reports``), queued by
  :func:`~metrics_service.stored_figures.schedule_figures` after an import, after scores are stored and after
  submissions (debounced): :func:`compute_campaign_figures` stores the workers' label reliability (the label
  models' fits) and queues the default analysis report as a report job (``report_jobs``); every report a
  worker builds is stored per set of options (``report.get_or_compute_report``), with the dashboard's scatter
  of each metric (:func:`store_scatters`).
* **Read by the pages**: :func:`worker_reliability_figures` (the campaign page), :func:`report_figures` (the
  dashboard and the report API) return the stored figures with a :class:`~metrics_service.stored_figures.Freshness`
  ("computed 3 min ago; recomputing", "not computed yet: queued"). A page that finds its figures stale queues a
  computation (joined with one queued already) and shows the stale ones: no label model is fitted and no
  report is built inside a request, and the campaign page never waits for the dashboard's report.
* **Eager mode** (no broker, no worker: development and most tests) runs the computation in the request,
  as every task there.
"""
from __future__ import annotations

from django.utils import timezone

from annotate.models import Campaign

from . import plots
from .label_reliability import worker_reliability
from .report import checked_options, human_and_metrics, report_cache_key
from .report_jobs import request_report
from .stored_figures import (
    WORKER_RELIABILITY,
    Freshness,
    campaign_state,
    figures_job,
    mark_figures_job,
    report_figures_name,
    schedule_figures,
    store_figures,
    stored_figures,
)


def _eager() -> bool:
    from factlab.celery import app

    return bool(app.conf.task_always_eager)


def compute_campaign_figures(campaign: Campaign, *, report: bool = True) -> dict:
    """The worker's part: store the workers' label reliability computed from the campaign's data now, then
    (``report``) queue the default report. Queues another computation when the data changed meanwhile."""
    mark_figures_job(campaign, "running")
    try:
        started, state = timezone.now(), campaign_state(campaign)
        reliability = {str(worker_id): row for worker_id, row in worker_reliability(campaign).items()}
        store_figures(campaign, WORKER_RELIABILITY, state=state, data=reliability, started_at=started)
    finally:
        mark_figures_job(campaign, None)
    if report:
        request_report(campaign)  # coalesced with a report job of the same options queued or running
    if campaign_state(campaign) != state:
        schedule_figures(campaign)
    return {"workers": len(reliability)}


def worker_reliability_figures(campaign: Campaign) -> tuple[dict[int, dict], Freshness]:
    """``{worker id: {n, majority, dawid_skene, mace, glad_ability, ...}}`` as last stored, and how fresh."""
    row = stored_figures(campaign, WORKER_RELIABILITY)
    if row is None or row.state != campaign_state(campaign):
        if _eager():  # nobody else would compute them
            compute_campaign_figures(campaign, report=False)
            row = stored_figures(campaign, WORKER_RELIABILITY)
            return _by_worker(row.data), Freshness(row.computed_at, True)
        schedule_figures(campaign, delay=0)
        job = figures_job(campaign) or "queued"  # queued after the request's commit, if not queued or running already
        return (_by_worker(row.data) if row else {}), Freshness(row.computed_at if row else None, False, job)
    return _by_worker(row.data), Freshness(row.computed_at, True)


def _by_worker(data: dict) -> dict[int, dict]:
    return {int(worker_id): values for worker_id, values in data.items()}


def report_figures(campaign: Campaign, options: dict, *, user_id: int | None = None) -> tuple[dict | None, Freshness]:
    """The report with these options as last stored (None when none was), and how fresh; when it is not
    current, a report job computes it (``report_jobs.request_report``: one per campaign and options, a limit
    per user, raising ``ReportJobLimit`` beyond it; ``ReportError`` for bad options)."""
    options = checked_options(options)
    row = stored_figures(campaign, report_figures_name(options))
    if row is not None and row.state == report_cache_key(campaign, **options):
        return row.data, Freshness(row.computed_at, True)
    report, job = request_report(campaign, user_id=user_id, **options)
    if report is not None:  # cached by a worker, or just built (eager mode, or the broker is down)
        row = stored_figures(campaign, report_figures_name(options))
        return report, Freshness(row.computed_at if row else None, True)
    return (row.data if row else None), Freshness(row.computed_at if row else None, False, job.get("state", "queued"), job)


def store_scatters(campaign: Campaign, options: dict, report: dict) -> None:
    """The worker's part of the dashboard's scatters: per metric of ``report`` (built with ``options``), its
    points against human factuality, stored beside the report."""
    options = checked_options(options)
    started, state = timezone.now(), report_cache_key(campaign, **options)
    metrics = sorted(report.get("correlations") or {})
    frame = human_and_metrics(campaign, metrics, split=options["split"], dataset=options["dataset"], system=options["system"])
    points = {metric: plots.scatter_points(frame, metric) for metric in metrics}
    store_figures(campaign, scatters_figures_name(options), state=state, data=points, started_at=started)


def stored_scatter(campaign: Campaign, options: dict, metric: str | None) -> dict | None:
    """The scatter of ``metric`` a worker stored with the report of ``options`` (None when there is none)."""
    row = stored_figures(campaign, scatters_figures_name(checked_options(options))) if metric else None
    return row.data.get(metric) if row is not None else None


def scatters_figures_name(options: dict) -> str:
    return report_figures_name(options).replace("report:", "scatters:", 1)


__all__ = ["compute_campaign_figures", "figures_job", "report_figures", "store_scatters", "stored_scatter", "worker_reliability_figures"]
