"""The metrics service's side of ``annotate.metrics_port``: what the crowd side's pages, exports and checks ask.

``MetricsServiceConfig.ready`` registers this module. The heavy modules (scorers, statistics) load on the
first call, as they did when the callers imported them lazily.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def metric_names() -> list[str]:
    from metrics_service.scoring.registry import REGISTRY  # the deployment's extra scorers included

    return sorted(REGISTRY)


def metric_direction(metric: str, source: str) -> int:
    from metrics_service.selectors import metric_direction as direction

    return direction(metric, source)


def worker_reliability(campaign) -> tuple[dict[int, dict], Any]:
    from metrics_service.figures import worker_reliability_figures

    return worker_reliability_figures(campaign)


def scoring_jobs(campaign) -> list[dict[str, Any]]:
    from metrics_service.scoring.jobs import campaign_scoring_jobs

    return campaign_scoring_jobs(campaign)


def submit_scoring_job(*, metric: str, campaign, user) -> Any:
    from metrics_service.scoring.jobs import submit_scoring_job as submit

    return submit(metric=metric, campaign=campaign, user=user)


def scoring_job(campaign, job_id: int) -> Any | None:
    from metrics_service.models import ScoringJob

    return ScoringJob.objects.filter(pk=job_id, campaign=campaign).first()


def change_scoring_job(job, action: str) -> Any:
    from metrics_service.scoring import jobs

    return {"cancel": jobs.cancel_scoring_job, "retry": jobs.retry_scoring_job}[action](job)


def recompute_figures(sender, campaign, delay: float | None = None, **kwargs) -> None:
    """Receiver of ``annotate.signals.campaign_data_changed``: the admin pages' figures are recomputed by a worker."""
    from metrics_service.stored_figures import schedule_figures

    schedule_figures(campaign, delay=delay)


def score_new_summaries(sender, campaign, summary_ids: Sequence[int], **kwargs) -> None:
    """Receiver of ``annotate.signals.summaries_added``: the campaign's ``auto_score_metrics`` score them."""
    from metrics_service.scoring.jobs import auto_score_summaries

    auto_score_summaries(campaign, summary_ids)
