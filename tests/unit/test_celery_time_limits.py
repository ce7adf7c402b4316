"""Every Celery task has a soft and a hard time limit suited to its job (factlab/settings.py): the default for
the short tasks, its own pair for each long job, and no hard limit a hung task could outlive its message by."""
from __future__ import annotations

from django.conf import settings

from factlab.celery import app

LONG_JOBS = {"annotate.run_import_job", "annotate.prepare_campaign_pages", "metrics_service.tasks.score_chunk",
             "metrics_service.tasks_report.compute_report"}


def project_tasks() -> dict:
    app.loader.import_default_modules()  # the autodiscovered tasks.py modules and CELERY_IMPORTS
    return {name: task for name, task in app.tasks.items() if not name.startswith("celery.")}


def test_every_registered_task_has_a_soft_limit_below_its_hard_limit_below_the_visibility_timeout():
    tasks = project_tasks()
    assert set(tasks) >= LONG_JOBS and len(tasks) >= 10, sorted(tasks)
    limits = {name: (task.soft_time_limit, task.time_limit) for name, task in tasks.items()}
    assert {name for name, (soft, hard) in limits.items() if not soft or not hard} == set()
    assert {name for name, (soft, hard) in limits.items() if not 0 < soft < hard} == set(), limits
    # A hung task is killed before Redis delivers its unacknowledged message again.
    assert {name for name, (_, hard) in limits.items() if hard >= settings.CELERY_VISIBILITY_TIMEOUT} == set(), limits


def test_long_jobs_have_their_own_limits_and_every_override_names_a_registered_task():
    tasks = project_tasks()
    assert set(settings.FACTLAB_TASK_TIME_LIMITS) <= set(tasks)
    for name in LONG_JOBS:
        assert tasks[name].soft_time_limit > settings.CELERY_TASK_SOFT_TIME_LIMIT, name
        assert (tasks[name].soft_time_limit, tasks[name].time_limit) == settings.FACTLAB_TASK_TIME_LIMITS[name]
    short = set(tasks) - set(settings.FACTLAB_TASK_TIME_LIMITS)
    assert "metrics_service.tasks.heal_scoring_jobs" in short
    assert {(tasks[n].soft_time_limit, tasks[n].time_limit) for n in short} == {
        (settings.CELERY_TASK_SOFT_TIME_LIMIT, settings.CELERY_TASK_TIME_LIMIT)}
