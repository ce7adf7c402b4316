"""Workers' participations in a campaign: figures, block and unblock (admins)."""
from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from annotate.api import filters, serializers
from annotate.api.pagination import StandardPagination
from annotate.api.permissions import IsAdmin
from annotate.api.views.base import SLUG, CampaignScoped, bonus_total_of
from annotate.models import Participation
from annotate.services.participation import block_participation, unblock_participation


@extend_schema_view(
    block=extend_schema(parameters=[SLUG], request=serializers.BlockSerializer, responses=serializers.ParticipationSerializer),
    unblock=extend_schema(parameters=[SLUG], request=None, responses=serializers.ParticipationSerializer),
)
@extend_schema(parameters=[SLUG])
class ParticipationViewSet(CampaignScoped, viewsets.ReadOnlyModelViewSet):
    """Workers' standing and quality figures in the campaign, with their bonus totals there (admins)."""

    permission_classes = [IsAdmin]
    serializer_class = serializers.ParticipationSerializer
    filterset_class = filters.ParticipationFilter
    pagination_class = StandardPagination

    def get_serializer_context(self):
        context = super().get_serializer_context()
        if not self.fake():
            from annotate.metrics_port import metrics

            # As a worker last stored them (one is queued when they are stale): no label model is fitted here.
            context["reliability"], _ = metrics().worker_reliability(self.campaign)
        return context

    def get_queryset(self):
        if self.fake():
            return Participation.objects.none()
        return (
            Participation.objects.filter(campaign=self.campaign).select_related("campaign")
            .annotate(bonus_total=bonus_total_of("worker_id", self.campaign)).order_by("id")
        )

    @action(detail=True, methods=["post"])
    def block(self, request, slug=None, pk=None):
        body = serializers.BlockSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        participation = block_participation(self.get_object(), body.validated_data["reason"] or "blocked by an admin")
        return Response(self.get_serializer(self.get_queryset().get(pk=participation.pk)).data)

    @action(detail=True, methods=["post"])
    def unblock(self, request, slug=None, pk=None):
        participation = unblock_participation(self.get_object())
        return Response(self.get_serializer(self.get_queryset().get(pk=participation.pk)).data)
