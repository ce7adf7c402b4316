"""``{% worker_rules campaign %}``: what a worker is paid and what blocks them, shown on every task page.

Rendered by both protocols' task templates (one include), it also starts the page heartbeat that keeps the
worker's assignment reserved (``release_unattended_assignments``).
"""
from __future__ import annotations

from decimal import Decimal
from typing import Any

from django import template
from django.urls import reverse

from annotate.models import Campaign, Worker
from annotate.services.assignments import current_assignment
from annotate.services.bonuses import worker_total

register = template.Library()


@register.inclusion_tag("annotate/_worker_rules.html", takes_context=True)
def worker_rules(context: template.Context, campaign: Campaign, preview: bool = False) -> dict[str, Any]:
    request = context.get("request")
    user = getattr(request, "user", None)
    # The task views pass the assignment they show (its worker with it): no query to find them again.
    assignment = None if preview else context.get("assignment")
    if assignment is not None:
        worker_id = assignment.worker_id
    else:
        worker = Worker.objects.filter(user=user).first() if user is not None and user.is_authenticated else None
        worker_id = worker.pk if worker is not None else None
        assignment = current_assignment(worker, campaign) if worker is not None and not preview else None
    return {
        "campaign": campaign,
        "owed": worker_total(worker_id, campaign) if worker_id is not None else Decimal("0.00"),
        "traps": not campaign.is_bump and campaign.trap_rate > 0,
        "entity_check": not campaign.is_bump and campaign.entity_check_enabled,
        "heartbeat_url": reverse("annotate:assignment-heartbeat", args=[campaign.slug, assignment.pk]) if assignment else "",
        "heartbeat_seconds": max(15, min(60, campaign.unattended_release_minutes * 60 // 4)),
    }
