"""Celery queues: short interactive jobs never wait behind long ones.

* ``interactive``: imports (datasets and metric scores), label refits and the beat's upkeep. A researcher waits
  for these in a page or a polling loop; each takes seconds.
* ``reports``: analysis reports and the admin pages' figures (the pages show the last stored ones and say how
  fresh they are). A report takes seconds to minutes and anyone can ask for many (one per set of options), so
  they queue apart: an import never waits behind reports (``metrics_service.report_jobs.request_report`` also
  coalesces identical requests and limits each user's open report jobs).
* ``cpu``: long CPU work: task-page preparation after an import, and light metric scoring.
* ``gpu``: model-based metric scoring (``metrics_service.scoring.jobs.submit_scoring_job`` names the queue).

A worker consuming ``interactive`` must not also consume ``reports``, ``cpu`` or ``gpu`` with a single slot, else an
import can still wait behind reports or an hour of scoring: run one worker per line of :data:`WORKER_QUEUES`.
"""
from __future__ import annotations

INTERACTIVE = "interactive"
REPORTS = "reports"
CPU = "cpu"
GPU = "gpu"
ALL_QUEUES = (INTERACTIVE, REPORTS, CPU, GPU)

# One worker process per entry (docker-compose.yml, README, `make demo`): name -> queues it consumes.
WORKER_QUEUES: dict[str, tuple[str, ...]] = {
    "interactive": (INTERACTIVE,),
    "reports": (REPORTS,),
    "cpu": (CPU,),
    "gpu": (GPU,),
}

TASK_ROUTES: dict[str, dict[str, str]] = {
    "annotate.run_import_job": {"queue": INTERACTIVE},
    "metrics_service.tasks_report.compute_report": {"queue": REPORTS},  # the report API's 202 waits on it
    # The admin pages' figures after data changes (the label models' fits, then the default report's job).
    "metrics_service.compute_campaign_figures": {"queue": REPORTS},
    # Upkeep of the beat schedule: quick database sweeps that must run even while long jobs fill cpu/gpu.
    "annotate.heal_import_jobs": {"queue": INTERACTIVE},
    "annotate.heal_page_preparations": {"queue": INTERACTIVE},
    "annotate.purge_import_uploads": {"queue": INTERACTIVE},
    "annotate.expire_stale_assignments": {"queue": INTERACTIVE},
    "metrics_service.tasks.heal_scoring_jobs": {"queue": INTERACTIVE},
    "metrics_service.tasks.requeue_stale_chunks": {"queue": INTERACTIVE},
    # Label refits of adaptive campaigns: seconds each, and claims prefer uncertain items by their result.
    "metrics_service.refit_labels": {"queue": INTERACTIVE},
    "metrics_service.refit_adaptive_labels": {"queue": INTERACTIVE},
    # Long jobs.
    "annotate.prepare_campaign_pages": {"queue": CPU},
    "metrics_service.tasks.score_chunk": {"queue": CPU},  # model-based scorers are sent to GPU explicitly
}


def queue_of(task_name: str) -> str:
    """The queue a task is routed to (``cpu`` for tasks without a route)."""
    return TASK_ROUTES.get(task_name, {}).get("queue", CPU)
