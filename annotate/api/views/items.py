"""Items (HITs) and assignments of a campaign (admins)."""
from __future__ import annotations

from django.db.models import Count, Q
from drf_spectacular.utils import extend_schema
from rest_framework import generics, viewsets

from annotate.api import filters, serializers
from annotate.api.pagination import IdCursorPagination, StandardPagination
from annotate.api.permissions import IsAdmin
from annotate.api.views.base import SLUG, CampaignScoped
from annotate.models import LIVE_ASSIGNMENT_STATUSES, Assignment, Item
from annotate.protocols import protocol_for


@extend_schema(parameters=[SLUG])
class ItemViewSet(CampaignScoped, viewsets.ReadOnlyModelViewSet):
    """Items (HITs) of the campaign with their live assignment counts (admins)."""

    permission_classes = [IsAdmin]
    serializer_class = serializers.ItemSerializer
    filterset_class = filters.ItemFilter
    pagination_class = StandardPagination

    def get_queryset(self):
        if self.fake():
            return Item.objects.none()
        live = Count("assignments", filter=Q(assignments__status__in=LIVE_ASSIGNMENT_STATUSES))
        return Item.objects.filter(campaign=self.campaign).select_related("document").annotate(live_assignments=live).order_by("position", "id")


@extend_schema(parameters=[SLUG])
class AssignmentList(CampaignScoped, generics.ListAPIView):
    """Assignments of the campaign (admins)."""

    permission_classes = [IsAdmin]
    serializer_class = serializers.AssignmentSerializer
    filterset_class = filters.AssignmentFilter
    pagination_class = IdCursorPagination

    def get_queryset(self):
        if self.fake():
            return Assignment.objects.none()
        # The protocol's own rows of each assignment come in the same query (its details, without one per row).
        assignments = Assignment.objects.filter(item__campaign=self.campaign).select_related(
            *protocol_for(self.campaign.kind).assignment_relations,
        )
        return filters.annotate_worker_blocked(assignments, self.campaign)

    def get_serializer_context(self):
        return {**super().get_serializer_context(), "campaign": None if self.fake() else self.campaign}
