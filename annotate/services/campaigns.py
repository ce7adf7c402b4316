"""Campaign lifecycle: creation with the protocol's defaults, and the state transitions every page and the API use."""
from __future__ import annotations

from collections.abc import Iterable, Mapping

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from annotate.models import Campaign, CampaignStatus
from annotate.protocols import protocol_for
from annotate.services.readiness import start_problems

ALLOWED_TRANSITIONS: dict[str, set[str]] = {
    CampaignStatus.DRAFT: {CampaignStatus.RUNNING, CampaignStatus.FINISHED},
    CampaignStatus.RUNNING: {CampaignStatus.PAUSED, CampaignStatus.FINISHED},
    CampaignStatus.PAUSED: {CampaignStatus.RUNNING, CampaignStatus.FINISHED},
    CampaignStatus.FINISHED: set(),
}
# The admin's actions: the states each may start from, and the state it leads to. "start" and "resume"
# both lead to running, but a paused campaign is resumed (not started) and a draft started (not resumed).
ACTIONS: dict[str, tuple[frozenset[str], str]] = {
    "start": (frozenset({CampaignStatus.DRAFT}), CampaignStatus.RUNNING),
    "pause": (frozenset({CampaignStatus.RUNNING}), CampaignStatus.PAUSED),
    "resume": (frozenset({CampaignStatus.PAUSED}), CampaignStatus.RUNNING),
    "finish": (frozenset({CampaignStatus.DRAFT, CampaignStatus.RUNNING, CampaignStatus.PAUSED}), CampaignStatus.FINISHED),
}


class CampaignStateError(ValueError):
    pass


class CampaignNotReady(CampaignStateError):
    """A start or resume refused by the study-readiness checklist (annotate/services/readiness.py)."""

    def __init__(self, action: str, problems: list) -> None:
        self.problems = problems
        # Each detail is a sentence of its own; joined with "; " its full stop would read ".;".
        super().__init__(f"cannot {action} the campaign yet: " + "; ".join(f"{p.title}: {p.detail.rstrip('.')}" for p in problems) + ".")


def campaign_setting_problems(kind: str, values: Mapping[str, object]) -> dict[str, str]:
    """Settings that the campaign's kind cannot honour, by field (empty when all apply). ``values``: the
    campaign's fields as they would be saved. Checked by every path that writes settings (API, admin, service)."""
    problems = {}
    protocol = protocol_for(kind)
    if values.get("adaptive_redundancy") and not protocol.labels_sentences:
        problems["adaptive_redundancy"] = (
            f"adaptive redundancy stops an item when its sentence labels are certain; a {kind} campaign's workers "
            f"do not label sentences, so it takes a fixed redundancy"
        )
    return problems


def protocol_defaults(kind: str, *, given: Iterable[str] = ()) -> dict[str, object]:
    """The kind's defaults for the fields not in ``given`` (for forms that build the campaign themselves)."""
    given = set(given)
    return {name: value for name, value in protocol_for(kind).campaign_defaults.items() if name not in given}


def create_campaign(*, slug: str, name: str, kind: str, fields: Mapping[str, object] | None = None) -> Campaign:
    """Create a campaign of ``kind`` with its protocol's defaults; ``fields`` (any Campaign field) win over them.

    Every creation path (admin page, API, dataset import, commands) goes through here, so a campaign of a
    kind always starts with that kind's rules.
    """
    values = {**protocol_for(kind).campaign_defaults, **(fields or {})}
    researchers = values.pop("researchers", None)
    reviewers = values.pop("reviewers", None)
    with transaction.atomic():
        campaign = Campaign(slug=slug, name=name, kind=kind, **values)
        campaign.full_clean(exclude=["researchers", "reviewers"], validate_unique=False)
        problems = campaign_setting_problems(kind, values)
        if problems:
            raise ValidationError(problems)
        campaign.save()
        if researchers:
            campaign.researchers.set(researchers)
        if reviewers:
            campaign.reviewers.set(reviewers)
    return campaign


def allowed_actions(campaign: Campaign) -> list[str]:
    """The actions the campaign's state allows now, in the order the admin page shows them."""
    return [action for action, (sources, _) in ACTIONS.items() if campaign.status in sources]


def apply_campaign_action(campaign: Campaign, action: str) -> Campaign:
    """Start (from draft), pause (when running), resume (when paused) or finish the campaign; anything else
    raises :class:`CampaignStateError` naming the action and the state."""
    if action not in ACTIONS:
        raise CampaignStateError(f"unknown action {action!r}; expected one of {', '.join(ACTIONS)}")
    sources, target = ACTIONS[action]
    if campaign.status not in sources:
        raise CampaignStateError(f"cannot {action} the campaign: it is {campaign.status}")
    if target == CampaignStatus.RUNNING:
        problems = start_problems(campaign)
        if problems:
            raise CampaignNotReady(action, problems)
    return set_campaign_status(campaign, target)


def set_campaign_status(campaign: Campaign, status: str) -> Campaign:
    """Move a campaign to ``status`` (start, pause, resume, finish); refuses impossible transitions.

    The admin's actions (:func:`apply_campaign_action`: page, API, Django admin) also check the study-readiness
    list; the demo commands, which set up their own exits, move the status here directly."""
    if status == campaign.status:
        return campaign
    if status not in ALLOWED_TRANSITIONS.get(campaign.status, set()):
        raise CampaignStateError(f"a {campaign.status} campaign cannot become {status}")
    campaign.status = status
    now = timezone.now()
    if status == CampaignStatus.RUNNING and campaign.started_at is None:
        campaign.started_at = now
    if status == CampaignStatus.FINISHED:
        campaign.finished_at = now
    campaign.save(update_fields=["status", "started_at", "finished_at", "updated_at"])
    return campaign
