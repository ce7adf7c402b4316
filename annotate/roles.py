"""The three roles of FactLab, derived from Django's users and groups.

* admin: staff users (``is_staff``) — everything;
* researcher: members of the ``researchers`` group — read and export the campaigns they are granted
  (``Campaign.researchers``), submit scoring jobs;
* reviewer (a duty beside the role): staff, members of the ``reviewers`` group (every campaign), and users a
  campaign lists in ``Campaign.reviewers`` (that campaign only) — decide workers' edits in review;
* annotator: everyone else — only the annotation pages, never other workers' data or gold answers.
"""
from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, Group
from django.db.models import QuerySet

RESEARCHER_GROUP = "researchers"
REVIEWER_GROUP = "reviewers"

ADMIN = "admin"
RESEARCHER = "researcher"
ANNOTATOR = "annotator"


def role_of(user: AbstractBaseUser | AnonymousUser) -> str | None:
    if not user or not user.is_authenticated:
        return None
    if user.is_staff:
        return ADMIN
    if user.groups.filter(name=RESEARCHER_GROUP).exists():
        return RESEARCHER
    return ANNOTATOR


def make_researcher(user) -> None:
    group, _ = Group.objects.get_or_create(name=RESEARCHER_GROUP)
    user.groups.add(group)


def make_reviewer(user) -> None:
    """A reviewer of every campaign (demo accounts); an invitation grants one campaign (``Campaign.reviewers``)."""
    group, _ = Group.objects.get_or_create(name=REVIEWER_GROUP)
    user.groups.add(group)


def can_review(user: AbstractBaseUser | AnonymousUser, campaign_id: int | None = None) -> bool:
    """May ``user`` review the work of the campaign ``campaign_id``? Without one: of any campaign?"""
    if not user or not user.is_authenticated:
        return False
    if user.is_staff or user.groups.filter(name=REVIEWER_GROUP).exists():
        return True
    granted = user.reviewed_campaigns.all()
    return (granted.filter(pk=campaign_id) if campaign_id is not None else granted).exists()


def readable_campaigns(user) -> QuerySet:
    """Campaigns whose data ``user`` may read and export."""
    from annotate.models import Campaign

    role = role_of(user)
    if role == ADMIN:
        return Campaign.objects.all()
    if role == RESEARCHER:
        return Campaign.objects.filter(researchers=user)
    return Campaign.objects.none()


def can_read_campaign(user, campaign) -> bool:
    return readable_campaigns(user).filter(pk=campaign.pk).exists()
