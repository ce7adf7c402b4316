"""``{% worker_rules campaign %}``: what a worker is paid and what blocks them, shown on every task page.

Rendered by both protocols' task templates (one include), it also starts the page heartbeat that keeps the
worker's assignment reserved (``release_unattended_assignments``).

``{% crowd_exit campaign %}``: the way back to the crowd platform (code as text, copy button, return link)
on a page that is not rendered with it, such as a failed qualification (``annotate/_exit.html``).
"""
from __future__ import annotations

from decimal import Decimal
from typing import Any

from django import template
from django.urls import reverse

from annotate.models import Campaign, Participation, Worker
from annotate.protocols import protocol_for
from annotate.services.assignments import current_assignment
from annotate.services.bonus_rule import bonus_rule
from annotate.services.bonuses import worker_total
from annotate.services.quality import RECENT_CHECKS_PER_CLASS

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
    submitted, owed = 0, None
    shown = context.get("participation")  # the task view's, read for the claim (with what the ledger owes)
    if shown is not None and worker_id is not None and shown.worker_id == worker_id and shown.campaign_id == campaign.pk:
        submitted, owed = shown.items_submitted, getattr(shown, "owed_total", None)
    elif worker_id is not None:
        submitted = Participation.objects.filter(worker_id=worker_id, campaign=campaign).values_list("items_submitted", flat=True).first() or 0
    if owed is None:
        owed = worker_total(worker_id, campaign) if worker_id is not None else Decimal("0.00")
    return {
        "campaign": campaign,
        # Open on the first item (the worker reads them once); collapsed afterwards, one tap away.
        "rules_open": submitted == 0,
        "owed": owed,
        **protocol_for(campaign.kind).worker_rules(campaign),  # traps, checks, entity_check, review
        # What the bonus line promises is what the pay rules pay (the evidence as kept: no query on gold or traps).
        "bonus": bonus_rule(campaign, kept_evidence=True),
        "recent_checks": RECENT_CHECKS_PER_CLASS,  # quality is also judged on this recent window
        "heartbeat_url": reverse("annotate:assignment-heartbeat", args=[campaign.slug, assignment.pk]) if assignment else "",
        "heartbeat_seconds": max(15, min(60, campaign.unattended_release_minutes * 60 // 4)),
    }


@register.inclusion_tag("annotate/_exit.html", takes_context=True)
def crowd_exit(context: template.Context, campaign: Campaign) -> dict[str, Any]:
    from annotate.services.participation import get_participation
    from annotate.views.arrival import worker_for_user
    from annotate.views.exits import exit_context

    request = context.get("request")
    if request is None or not request.user.is_authenticated:
        return {"completion": None, "crowd_provider": ""}
    participation = context.get("participation") or get_participation(worker_for_user(request.user), campaign)
    return exit_context(request, participation)
