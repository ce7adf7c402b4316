"""The worker-facing pages every campaign kind shares live in three modules: :mod:`annotate.views.entry` (the
campaign entry and next step, the home page, the claim behind every task page, the heartbeat),
:mod:`annotate.views.arrival` (who the worker is; a crowd platform's arrival) and :mod:`annotate.views.exits`
(the page after an item, the platform's exit). The names protocol packages import are importable from here too.
"""
from __future__ import annotations

from .arrival import crowd_context, other_campaign_refusal, worker_for_user
from .entry import claim_assignment, protocol_url
from .exits import exit_context

__all__ = ["claim_assignment", "crowd_context", "exit_context", "other_campaign_refusal", "protocol_url", "worker_for_user"]
