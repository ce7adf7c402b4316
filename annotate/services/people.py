"""The people of a campaign: inviting its reviewers and researchers, who has access, and who is working now.

An invitation is the researchers' one-time link (:func:`annotate.services.researchers.invitation_for`): a new
account is created inactive with an unusable password and granted the campaign at once, so the grant is in
the database before anyone follows the link. An existing account is granted the campaign and needs no link.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from annotate.models import Assignment, AssignmentStatus, Campaign, Participation
from annotate.roles import REVIEWER_GROUP
from annotate.services.researchers import Invitation, ResearcherError, create_researcher, invitation_for

REVIEWER = "reviewer"
RESEARCHER = "researcher"
INVITABLE_ROLES = {
    REVIEWER: "Reviewer: decides this campaign's edits in review (accept, correct, reject)",
    RESEARCHER: "Researcher: reads, exports and scores this campaign (the API and the report)",
}


@dataclass(frozen=True)
class Invited:
    username: str
    role: str
    invitation: Invitation | None  # None: the account existed already and signs in as before


def invite_to_campaign(campaign: Campaign, *, role: str, username: str, email: str = "") -> Invited:
    """Grant ``campaign`` to ``username`` as ``role``, creating the account (with a one-time link) if it is new.

    Raises ``ResearcherError`` naming the field: an unknown role, an empty username, an admin account
    (admins see every campaign already). Nothing is stored then.
    """
    if role not in INVITABLE_ROLES:
        raise ResearcherError(f"role: choose one of {', '.join(INVITABLE_ROLES)}")
    username = (username or "").strip()
    if not username:
        raise ResearcherError("username: required")
    User = get_user_model()
    with transaction.atomic():
        existing = User.objects.select_for_update().filter(username=username).first()
        if existing is not None and existing.is_staff:
            raise ResearcherError(f"username: {username!r} is an admin account; admins see and review every campaign")
        if role == RESEARCHER:
            user = create_researcher(username, email=email, campaigns=[campaign.slug])
        else:
            user = existing or User(username=username, email=email or "", is_active=False)
            if existing is None:
                user.set_unusable_password()
            if email:
                user.email = email
            user.save()
            campaign.reviewers.add(user)
    # A link only for an account nobody has signed in to yet: an active account keeps its password.
    return Invited(username, role, None if user.is_active else invitation_for(user))


def revoke_from_campaign(campaign: Campaign, *, role: str, user_id: int) -> None:
    """Take back a campaign's grant (the account stays, with its other campaigns)."""
    if role == REVIEWER:
        campaign.reviewers.remove(user_id)
    elif role == RESEARCHER:
        campaign.researchers.remove(user_id)
    else:
        raise ResearcherError(f"role: choose one of {', '.join(INVITABLE_ROLES)}")


@dataclass(frozen=True)
class Access:
    user_id: int
    username: str
    email: str
    role: str  # reviewer, researcher, or "reviewer of every campaign"
    granted_here: bool  # revocable on this page (the rest come from the account's group or staff flag)
    state: str  # "invited" (link not used yet) or "active"
    last_login: datetime | None


def campaign_access(campaign: Campaign) -> list[Access]:
    """Everyone besides admins who may see or review this campaign's work, and how they got that access."""
    User = get_user_model()
    rows = []
    groups = ((REVIEWER, campaign.reviewers.all(), True), (RESEARCHER, campaign.researchers.all(), True),
              ("reviewer of every campaign", User.objects.filter(groups__name=REVIEWER_GROUP, is_staff=False), False))
    for role, users, granted_here in groups:
        for user in users.order_by("username"):
            rows.append(Access(user.pk, user.get_username(), user.email, role, granted_here,
                               "active" if user.is_active else "invited", user.last_login))
    return rows


@dataclass(frozen=True)
class WorkingNow:
    worker: str
    provider: str
    document: str
    started_at: datetime
    minutes_on_item: float
    last_seen_at: datetime | None  # the page's last heartbeat (None: the page never reported being open)
    expires_at: datetime
    items_submitted: int
    # Claims, the current one included: far more than submitted is a worker giving items back or letting them
    # expire (skipping the hard ones, or holding items from others).
    items_claimed: int
    last_submitted_at: datetime | None
    quality: str
    pay_state: str
    participation_id: int | None


def _quality(participation: Participation | None, campaign: Campaign) -> str:
    if participation is None:
        return "–"
    parts = [f"qualification {participation.get_qualification_status_display().lower()}" if campaign.qualification_required else "no qualification asked"]
    if participation.trap_total:
        parts.append(f"traps {participation.trap_correct}/{participation.trap_total}")
    if participation.entity_checks:
        parts.append(f"reading check {participation.entity_checks - participation.entity_failures}/{participation.entity_checks}")
    return ", ".join(parts)


def working_now(campaign: Campaign, *, now: datetime | None = None) -> list[WorkingNow]:
    """One row per item being worked on now (an active assignment), longest-running first."""
    now = now or timezone.now()
    active = list(
        Assignment.objects.filter(item__campaign=campaign, status=AssignmentStatus.ACTIVE)
        .select_related("worker__user", "item__document").order_by("created_at", "id")
    )
    worker_ids = {a.worker_id for a in active}
    participations = {p.worker_id: p for p in Participation.objects.filter(campaign=campaign, worker_id__in=worker_ids)}
    last_submitted = dict(
        Assignment.objects.filter(item__campaign=campaign, worker_id__in=worker_ids, status=AssignmentStatus.SUBMITTED)
        .values_list("worker_id").annotate(last=Max("submitted_at")).values_list("worker_id", "last")
    )
    rows = []
    for assignment in active:
        worker = assignment.worker
        participation = participations.get(worker.pk)
        pay_state = "pay held: " + participation.pay_held_reason if participation and participation.pay_held else "paid as submitted"
        rows.append(WorkingNow(
            worker=worker.external_id or worker.user.get_username(), provider=worker.provider or "local",
            document=assignment.item.document.external_id, started_at=assignment.created_at,
            minutes_on_item=(now - assignment.created_at).total_seconds() / 60, last_seen_at=assignment.last_seen_at,
            expires_at=assignment.expires_at, items_submitted=participation.items_submitted if participation else 0,
            items_claimed=participation.items_claimed if participation else 0,
            last_submitted_at=last_submitted.get(worker.pk), quality=_quality(participation, campaign), pay_state=pay_state,
            participation_id=participation.pk if participation else None,
        ))
    return rows


def recently_active(campaign: Campaign, *, within_minutes: int = 60, now: datetime | None = None) -> list[dict]:
    """Workers who submitted in the last ``within_minutes`` but hold no item now (between items, or done)."""
    now = now or timezone.now()
    since = now - timedelta(minutes=within_minutes)
    holding = Assignment.objects.filter(item__campaign=campaign, status=AssignmentStatus.ACTIVE).values("worker_id")
    return list(
        Assignment.objects.filter(item__campaign=campaign, status=AssignmentStatus.SUBMITTED, submitted_at__gte=since)
        .exclude(worker_id__in=holding)
        .values("worker__external_id", "worker__user__username", "worker__provider")
        .annotate(last=Max("submitted_at")).order_by("-last")
    )
