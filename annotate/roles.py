"""The three roles of FactLab, derived from Django's users and groups.

* admin: staff users (``is_staff``) — everything;
* researcher: members of the ``researchers`` group — read and export the campaigns they are granted
  (``Campaign.researchers``), submit scoring jobs;
* annotator: everyone else — only the annotation pages, never other workers' data or gold answers.
"""
from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, Group
from django.db.models import QuerySet

RESEARCHER_GROUP = "researchers"

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
