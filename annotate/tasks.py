"""Celery tasks of the annotate app."""
from __future__ import annotations

from celery import shared_task


@shared_task(name="annotate.run_import_job", acks_late=True)
def run_import_job(job_id: int) -> str:
    """Import an uploaded file (:func:`annotate.api.services.execute_import_job`); returns the final status."""
    from annotate.api.services import execute_import_job

    return execute_import_job(job_id).status
