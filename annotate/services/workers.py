"""Workers across campaigns: the global block."""
from __future__ import annotations

from django.db import transaction

from annotate.models import Assignment, AssignmentStatus, Worker
from annotate.services.live_counts import close_assignments


def block_worker(worker: Worker, reason: str) -> Worker:
    """Block a worker from every campaign and release their unfinished assignments."""
    with transaction.atomic():
        Worker.objects.filter(pk=worker.pk).update(is_blocked=True, blocked_reason=reason[:300])
        close_assignments(Assignment.objects.filter(worker=worker), AssignmentStatus.RELEASED)
    worker.refresh_from_db()
    return worker


def unblock_worker(worker: Worker) -> Worker:
    Worker.objects.filter(pk=worker.pk).update(is_blocked=False, blocked_reason="")
    worker.refresh_from_db()
    return worker
