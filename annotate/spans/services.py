"""Writes of the span protocol outside a worker's submission: gold spans set by a reviewer."""
from __future__ import annotations

from typing import Any

from django.db import transaction

from annotate.models import Summary
from annotate.roles import can_review
from annotate.services.checks_version import checks_changed
from annotate.services.errors import NotEligible

from .models import GoldOrigin, GoldSpans
from .protocol import parse_answer
from .words import as_json, words


def set_gold(summary: Summary, payload: dict[str, Any], user) -> GoldSpans:
    """Store ``payload`` (the task page's answer shape, checked by the same rule as a worker's) as the summary's
    gold spans, replacing imported ones; only a reviewer of the campaign may."""
    if not can_review(user, summary.document.campaign_id):
        raise NotEligible("Only reviewers of this campaign (staff, the 'reviewers' group, or invited for it) may set gold spans.")
    word_list = words(summary.text)
    spans, _ = parse_answer(word_list, payload)
    with transaction.atomic():
        gold, _ = GoldSpans.objects.update_or_create(
            summary=summary, defaults={"spans": as_json(spans), "n_words": len(word_list), "origin": GoldOrigin.ADMIN, "set_by": user},
        )
        checks_changed(summary.document.campaign_id)  # the workers' answers on this summary score anew
    return gold
