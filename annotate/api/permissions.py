"""Role checks of the API (roles: ``annotate.roles``). Annotators get no API data at all."""
from __future__ import annotations

from django.shortcuts import get_object_or_404
from rest_framework.permissions import BasePermission

from annotate.models import Campaign
from annotate.roles import ADMIN, RESEARCHER, readable_campaigns, role_of


class IsAdmin(BasePermission):
    """Staff users only."""

    message = "Only admins may use this endpoint."

    def has_permission(self, request, view) -> bool:
        return role_of(request.user) == ADMIN


class IsResearcherOrAdmin(BasePermission):
    """Researchers (members of the ``researchers`` group) and admins; annotators are refused."""

    message = "Only researchers and admins may use the API; annotators work through the annotation pages."

    def has_permission(self, request, view) -> bool:
        return role_of(request.user) in (ADMIN, RESEARCHER)


def is_admin(user) -> bool:
    return role_of(user) == ADMIN


def readable_campaign_or_404(user, slug: str) -> Campaign:
    """The campaign ``slug`` if ``user`` may read it; 404 otherwise (a campaign not granted is not revealed)."""
    return get_object_or_404(readable_campaigns(user), slug=slug)
