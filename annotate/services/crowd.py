"""Crowd identities: the events an admin sees at a campaign's crowd entry, and the hourly cap on new ones.

The per-address rate (``settings.FACTLAB_RATELIMIT_CROWD_IDENTITY``) is counted in the shared cache by
the entry view, per network (``annotate.ratelimits.network_key``: an IPv4 address or an IPv6 /64, the same
key as the qualification attempts); the per-campaign cap (``Campaign.new_crowd_workers_per_hour``) is counted here from the
``identity_created`` events, under the campaign row lock so that concurrent arrivals cannot overshoot it.
"""
from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable
from datetime import timedelta

from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from annotate.models import Campaign, CrowdEvent, CrowdEventKind, Worker

#: A refusal repeated by the same address for the same id is stored once per this many seconds, so that a
#: flood of bad requests cannot fill the events table.
EVENT_REPEAT_SECONDS = 600


def record_crowd_event(
    campaign: Campaign, kind: str, *, provider: str = "", external_id: str = "", worker: Worker | None = None,
    ip: str | None = None, detail: str = "",
) -> CrowdEvent | None:
    """Store an event (None when the same refusal from the same address was stored moments ago)."""
    if kind != CrowdEventKind.IDENTITY_CREATED:
        digest = hashlib.sha256(f"{campaign.pk}|{kind}|{ip}|{provider}|{external_id}".encode()).hexdigest()
        if not cache.add(f"factlab-crowd-event:{digest}", 1, timeout=EVENT_REPEAT_SECONDS):
            return None
    return CrowdEvent.objects.create(
        campaign=campaign, kind=kind, provider=provider, external_id=external_id[:200], worker=worker,
        ip=ip or None, detail=detail[:300],
    )


def new_identities_last_hour(campaign: Campaign) -> int:
    since = timezone.now() - timedelta(hours=1)
    return CrowdEvent.objects.filter(campaign=campaign, kind=CrowdEventKind.IDENTITY_CREATED, created_at__gte=since).count()


class CampaignCapReached(Exception):
    """The campaign accepted ``new_crowd_workers_per_hour`` new identities in the last hour."""


def create_identity_within_cap(
    campaign: Campaign, create: Callable[[], Worker], *, provider: str, external_id: str, ip: str | None
) -> Worker:
    """Create a crowd worker with ``create`` unless the campaign's hourly cap is reached (then raise
    ``CampaignCapReached``, having created nothing); the creation is recorded as an event."""
    with transaction.atomic():
        Campaign.objects.select_for_update().filter(pk=campaign.pk).first()
        if new_identities_last_hour(campaign) >= campaign.new_crowd_workers_per_hour:
            raise CampaignCapReached(campaign.slug)
        worker = create()
        record_crowd_event(campaign, CrowdEventKind.IDENTITY_CREATED, provider=provider, external_id=external_id, worker=worker, ip=ip)
    return worker


def recent_crowd_events(campaign: Campaign, limit: int = 50) -> list[CrowdEvent]:
    """The latest events an admin should look at (refused reuse, rate limits, bad links), newest first."""
    return list(
        CrowdEvent.objects.filter(campaign=campaign).exclude(kind=CrowdEventKind.IDENTITY_CREATED)
        .select_related("worker")[:limit]
    )


def ensure_prolific_codes(campaign: Campaign) -> Campaign:
    """Give a campaign without Prolific codes a completion and a screen-out code (demo campaigns), so a
    Prolific study built on it can end; existing codes are kept."""
    fields = []
    if not campaign.prolific_completion_code:
        campaign.prolific_completion_code = "C" + secrets.token_hex(4).upper()
        fields.append("prolific_completion_code")
    if not campaign.prolific_screenout_code:
        campaign.prolific_screenout_code = "S" + secrets.token_hex(4).upper()
        fields.append("prolific_screenout_code")
    if fields:
        campaign.save(update_fields=fields)
    return campaign
