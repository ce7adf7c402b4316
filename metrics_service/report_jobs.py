"""Report jobs: a campaign's analysis report computed by a Celery worker (queue ``reports``) while the API answers 202.

* **One job per campaign and set of options.** While a job is queued or running, an identical request (from
  anyone, whatever changed in the campaign meanwhile) gets that job's id and progress; nothing more is queued.
* **A limit per user.** A user has at most ``FACTLAB_REPORT_JOBS_PER_USER`` jobs queued or running; one more
  raises :class:`ReportJobLimit` (the API answers 429 with ``Retry-After``), so a flood of requests with
  distinct options cannot fill the queue. Joining a running job is not counted.
* **Its own queue** (``factlab.queues.REPORTS``), so that imports never wait behind reports.

A job lives in the shared cache (Redis), like the report it computes, under :func:`report_job_key`:
``{"job", "state", "step", "total", "section", "queued_at", "user"}``. It expires ``JOB_SECONDS`` after its last
progress, so the job of a worker that died mid-report stops counting and the next request queues another.
"""
from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.core.cache import cache

from annotate.models import Campaign
from metrics_service.report import (
    REPORT_VERSION,
    cached_report,
    checked_options,
    get_or_compute_report,
    resolve_campaign,
)

JOB_SECONDS = 600
OPEN_STATES = ("queued", "running")
LIMIT_RETRY_SECONDS = 10  # Retry-After of a refused request: reports take seconds to minutes


class ReportJobLimit(Exception):
    """The user already has as many report jobs queued or running as ``FACTLAB_REPORT_JOBS_PER_USER`` allows."""

    def __init__(self, limit: int):
        self.limit, self.retry_after = limit, LIMIT_RETRY_SECONDS
        super().__init__(
            f"You already have {limit} report job(s) queued or running, the most one user may have at once "
            f"(FACTLAB_REPORT_JOBS_PER_USER={limit}). Ask again when one has finished (Retry-After: {self.retry_after} s); "
            "a request identical to a running one joins it and is not refused."
        )


def jobs_per_user() -> int:
    return int(getattr(settings, "FACTLAB_REPORT_JOBS_PER_USER", 2))


def report_job_key(campaign: Campaign, options: dict) -> str:
    """The job of these options; unlike the report's cache key it ignores the campaign's state, so requests
    made while judgements keep arriving still join one job."""
    payload = json.dumps({"v": REPORT_VERSION, "options": options}, sort_keys=True, default=str)
    return f"factlab:report-job:{campaign.pk}:{hashlib.sha1(payload.encode()).hexdigest()}"


def _user_index_key(user_id: int) -> str:
    return f"factlab:report-jobs:user:{user_id}"


def set_report_progress(campaign: Campaign, options: dict, *, job: str | None = None, **state) -> None:
    """Record a worker's progress (``state``: running or failed, ``step`` of ``total``, ``section``, ``error``) on
    job ``job``; a newer job of the same options is left alone (``job`` None: whichever job is recorded)."""
    key = report_job_key(campaign, options)
    current = cache.get(key) or {}
    if job is not None and current.get("job") not in (None, job):
        return
    cache.set(key, {**current, "job": job or current.get("job"), **state, "updated_at": time.time()}, JOB_SECONDS)


def start_job(campaign: Campaign, options: dict, job: str) -> bool:
    """Mark job ``job`` running; False when another delivery of it runs already or a newer job replaced it."""
    current = cache.get(report_job_key(campaign, options)) or {}
    if current.get("job") not in (None, job) and current.get("state") in OPEN_STATES:
        return False
    if current.get("job") == job and current.get("state") == "running":
        return False  # a message sent again while the first one was running
    set_report_progress(campaign, options, job=job, state="running", step=0, total=None, section=None)
    return True


def finish_job(campaign: Campaign, options: dict, job: str | None) -> None:
    """The report is cached: the job ends (a newer job of the same options is kept)."""
    key = report_job_key(campaign, options)
    current = cache.get(key) or {}
    if job is None or current.get("job") in (None, job):
        cache.delete(key)


def _queued_too_long(job: dict) -> bool:
    grace = float(getattr(settings, "FACTLAB_HEAL_GRACE_SECONDS", 60))
    return time.time() - float(job.get("queued_at") or time.time()) > grace


def _send(campaign: Campaign, options: dict, job: str) -> None:
    from factlab.jobs import task_named

    task_named("metrics_service.tasks_report.compute_report").delay(campaign.slug, **options, job=job)


@contextmanager
def _user_mutex(user_id: int, wait: float = 3.0) -> Iterator[None]:
    # Counting a user's open jobs and adding one must not interleave with another request of the same user.
    key = f"{_user_index_key(user_id)}:lock"
    deadline = time.monotonic() + wait
    acquired = cache.add(key, 1, 10)
    while not acquired and time.monotonic() < deadline:
        time.sleep(0.05)
        acquired = cache.add(key, 1, 10)
    try:
        yield  # after the wait without the lock too: a request never hangs on a lock its holder did not free
    finally:
        if acquired:
            cache.delete(key)


def _open_jobs_of(user_id: int) -> dict[str, str]:
    """Job key -> job id of the user's jobs still queued or running."""
    index = cache.get(_user_index_key(user_id)) or {}
    jobs = cache.get_many(list(index))
    return {
        key: job_id for key, job_id in index.items()
        if (jobs.get(key) or {}).get("job") == job_id and jobs[key].get("state") in OPEN_STATES
    }


def request_report(campaign: Campaign | str, *, user_id: int | None = None, **options) -> tuple[dict | None, dict]:
    """The cached report, or ``(None, job)`` after making sure a job computes it.

    ``job`` is the job's progress (``job`` id, ``state``: queued, running or failed, ``step`` of ``total``, the
    ``section`` being computed). A job of the same options already queued or running is returned as it is;
    otherwise a new one is queued for ``user_id`` (raises :class:`ReportJobLimit` when the user has too many).
    A failed job is returned once, then the next request tries again. With eager Celery (no broker) the task
    runs inline and the report is returned at once.
    """
    from factlab.jobs import broker_available

    campaign = resolve_campaign(campaign)
    options = checked_options(options)
    report = cached_report(campaign, **options)
    if report is not None:
        return report, {"state": "done"}
    if not broker_available():
        # Broker (and cache) down: nobody would compute a queued report, but the database suffices.
        return get_or_compute_report(campaign, **options), {"state": "done"}
    key = report_job_key(campaign, options)
    job = cache.get(key)
    if job and job.get("state") == "failed":
        cache.delete(key)
        return None, job
    if job and job.get("state") in OPEN_STATES:
        if job["state"] == "queued" and _queued_too_long(job):
            # No worker took the message within the grace time (lost in the broker): send it again; a
            # duplicate delivery finds the job running or the report cached.
            job = {**job, "queued_at": time.time()}
            cache.set(key, job, JOB_SECONDS)
            _send(campaign, options, job["job"])
        return None, job
    job = {"job": uuid.uuid4().hex, "state": "queued", "step": 0, "total": None, "section": None,
           "queued_at": time.time(), "user": user_id}
    if user_id is None:
        if not cache.add(key, job, JOB_SECONDS):
            return None, cache.get(key) or job
    else:
        with _user_mutex(user_id):
            open_jobs = _open_jobs_of(user_id)
            if len(open_jobs) >= jobs_per_user():
                raise ReportJobLimit(jobs_per_user())
            if not cache.add(key, job, JOB_SECONDS):  # another request queued it a moment ago: join it
                return None, cache.get(key) or job
            cache.set(_user_index_key(user_id), {**open_jobs, key: job["job"]}, JOB_SECONDS)
    try:
        _send(campaign, options, job["job"])
    except Exception:
        cache.delete(key)
        raise
    report = cached_report(campaign, **options)  # eager Celery computed it already
    if report is not None:
        return report, {"state": "done"}
    return None, cache.get(key) or job
