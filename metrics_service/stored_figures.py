"""Stored figures of a campaign (:class:`~metrics_service.models.CampaignFigures`): written by workers, read by
the admin pages, with how fresh they are; and :func:`schedule_figures`, which queues their computation when
the campaign's data changes.

Apart from :mod:`metrics_service.figures` (which computes them and serves the pages) so that the report and
the label refits, which that module reads, can store figures and queue them without an import cycle.
"""
from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.timesince import timesince

from annotate.models import Campaign

from .models import CampaignFigures

WORKER_RELIABILITY = "worker_reliability"
FIGURES_TASK = "metrics_service.compute_campaign_figures"
# A queued computation whose message was lost stops blocking new ones after this long (a page then queues one).
QUEUED_SECONDS = 600


@dataclass(frozen=True)
class Freshness:
    """How fresh the figures a page shows are. ``job``: the state of the computation that will replace them
    (``queued``, ``running`` or ``failed``; None when none is known), ``progress`` its progress (report jobs)."""

    computed_at: datetime | None
    current: bool
    job: str | None = None
    progress: dict | None = None

    def __str__(self) -> str:
        if self.computed_at is None:
            return "current" if self.current else f"not computed yet: {self.job or 'queued'}"
        text = f"computed {timesince(self.computed_at).replace(chr(160), ' ')} ago"
        return text if self.current else f"{text}; {'recomputing failed' if self.job == 'failed' else 'recomputing'}"

    def as_dict(self) -> dict:
        return {"computed_at": self.computed_at.isoformat() if self.computed_at else None, "current": self.current,
                "job": self.job, "text": str(self)}


def campaign_state(campaign: Campaign) -> str:
    """The campaign's data state (counts, max ids, change times of what the figures read) as one string."""
    # The selectors read frames with pandas: imported here, not with this module, which every process that
    # sends a scoring job or a submit imports at start (manage.py commands included).
    from . import selectors

    return hashlib.sha1(repr(selectors.state_fingerprint(campaign)).encode()).hexdigest()


def report_figures_name(options: dict) -> str:
    """The stored name of the report with these (normalized) options."""
    return "report:" + hashlib.sha1(json.dumps(options, sort_keys=True, default=str).encode()).hexdigest()


def stored_figures(campaign: Campaign, name: str) -> CampaignFigures | None:
    return CampaignFigures.objects.filter(campaign=campaign, name=name).first()


def store_figures(campaign: Campaign, name: str, *, state: str, data, started_at: datetime) -> None:
    """Store figures computed from ``state`` by a computation started at ``started_at``; figures of a
    computation that started later are kept (a slow worker never replaces newer figures with older ones)."""
    values = {"state": state, "data": data, "started_at": started_at, "computed_at": timezone.now()}
    for _ in range(2):  # a concurrent first insert of the same name: the second pass finds its row
        try:
            with transaction.atomic():
                row = CampaignFigures.objects.select_for_update().filter(campaign=campaign, name=name).first()
                if row is None:
                    CampaignFigures.objects.create(campaign=campaign, name=name, **values)
                elif row.started_at <= started_at:
                    CampaignFigures.objects.filter(pk=row.pk).update(**values)
                return
        except IntegrityError:
            continue


def _job_key(campaign_id: int) -> str:
    return f"factlab:figures-job:{campaign_id}"


def figures_job(campaign: Campaign) -> str | None:
    """``queued`` or ``running`` while a computation of the campaign's figures is; else None."""
    return (cache.get(_job_key(campaign.pk)) or {}).get("state")


def mark_figures_job(campaign: Campaign, state: str | None) -> None:
    """The worker's computation started (``running``) or ended (None)."""
    if state is None:
        cache.delete(_job_key(campaign.pk))
    else:
        cache.set(_job_key(campaign.pk), {"state": state, "since": time.time()}, QUEUED_SECONDS)


#: Per campaign, until when (``time.monotonic()``) a computation this process queued has surely not started.
_sent_until: dict[int, float] = {}


def forget_sent_figures() -> None:
    """Forget which computations this process queued (when the cache they were marked in is emptied)."""
    _sent_until.clear()


def schedule_figures(campaign: Campaign, *, delay: float | None = None) -> None:
    """Queue one computation of the campaign's figures (a worker, queue ``reports``) after its data changed:
    after an import, after scores were stored, after submissions. A computation already queued or running
    takes the change along (it reads the data when it starts, and queues another when the data changed while
    it ran), so a burst of submissions queues one; ``delay`` (default ``FACTLAB_FIGURES_DEBOUNCE_SECONDS``)
    lets the burst end first. Sent after the commit. A page that says how fresh its figures are reads the job's
    state afterwards (:func:`figures_job`); a submission, which does not, makes no round trip for it.

    In eager mode (no broker, no worker) nothing is queued here: the pages compute what they show when opened.
    """
    from factlab.celery import app
    from factlab.jobs import send_after_commit, task_named

    if app.conf.task_always_eager:
        return
    delay = settings.FACTLAB_FIGURES_DEBOUNCE_SECONDS if delay is None else delay
    if _sent_until.get(campaign.pk, 0.0) > time.monotonic():
        # This process queued a computation that has not started yet (it starts ``delay`` after it was sent and
        # reads the data then): it sees this change, so every submission of a burst skips the cache round trips.
        return
    key, task = _job_key(campaign.pk), task_named(FIGURES_TASK)

    def send() -> None:
        # After the commit: a rolled-back change queues nothing, and marks nothing queued.
        if not cache.add(key, {"state": "queued", "since": time.time()}, timeout=int(delay) + QUEUED_SECONDS):
            return  # queued or running already: that computation (or the one it queues when done) sees this change
        try:
            task.apply_async(args=[campaign.pk], countdown=delay)
        except Exception:
            cache.delete(key)  # not queued after all: the next change or page queues it
            raise
        _sent_until[campaign.pk] = time.monotonic() + delay / 2  # half the delay: a margin for clocks and queues

    send_after_commit(send, what=f"figures of campaign {campaign.slug}")
