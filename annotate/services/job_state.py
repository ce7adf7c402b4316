"""What every background job of the shared mechanism has in common (imports, page preparations): the
state error of a retry or cancel, and which pending rows no worker picked up."""
from __future__ import annotations

from datetime import timedelta

from django.db.models import Q
from django.utils import timezone


class JobStateError(ValueError):
    """A job cannot be retried or cancelled in its present state (the API answers 409)."""


def lost_pending(queryset, *, grace: timedelta, pending_after: timedelta | None):
    """The pending rows of ``queryset`` no worker picked up: never sent (older than ``grace``), or sent
    more than ``pending_after`` ago (the message was lost in the broker, or waits that long in its queue)."""
    now = timezone.now()
    lost = Q(dispatched_at__isnull=True, created_at__lt=now - grace)
    if pending_after is not None:
        lost |= Q(dispatched_at__lt=now - pending_after)
    return queryset.filter(lost)
