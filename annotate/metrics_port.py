"""What the crowd side asks of the metrics service, which plugs itself in here when its app is ready.

``metrics_service`` reads ``annotate``'s campaigns, summaries and judgements; ``annotate`` imports nothing of
``metrics_service`` but its plain statistics, ``metrics_service.stats`` (the ``layers`` contract in
``.importlinter``). Where a page, an export or a check of ``annotate`` needs what only the metrics service
knows (its scorer names, a metric's direction, the campaign page's scoring jobs and workers' reliability
figures), it asks :func:`metrics`; ``MetricsServiceConfig.ready`` registers the implementation
(``metrics_service/port.py``).
Notices the other way (a campaign's data changed, new summaries to score) are the signals of
``annotate/signals.py``.
"""
from __future__ import annotations

from typing import Any, Protocol


class MetricsPort(Protocol):
    def metric_names(self) -> list[str]:
        """The scorers' names, as the scoring service checks them (deployment scorers included)."""

    def metric_direction(self, metric: str, source: str) -> int:
        """+1 when a higher value of ``metric`` (stored from ``source``) means more faithful, else -1."""

    def worker_reliability(self, campaign) -> tuple[dict[int, dict], Any]:
        """Per worker id, the reliability figures a worker last stored, and how fresh they are."""

    def scoring_jobs(self, campaign) -> list[dict[str, Any]]:
        """The progress of the campaign's most recent scoring jobs."""

    def submit_scoring_job(self, *, metric: str, campaign, user) -> Any:
        """Queue a job scoring every summary of ``campaign`` with ``metric`` (``ValueError`` when refused)."""

    def scoring_job(self, campaign, job_id: int) -> Any | None:
        """The campaign's scoring job ``job_id``, or ``None``."""

    def change_scoring_job(self, job, action: str) -> Any:
        """``action`` ("cancel" or "retry") on a scoring job (``ValueError`` when its state refuses it)."""


_port: MetricsPort | None = None


def register(port: MetricsPort) -> None:
    """Plug the metrics service in (its ``AppConfig.ready``)."""
    global _port
    _port = port


def metrics() -> MetricsPort:
    """The registered metrics service."""
    if _port is None:
        raise RuntimeError("no metrics service is registered: metrics_service must be in INSTALLED_APPS (its AppConfig.ready registers it)")
    return _port
