"""Campaigns: list, read, create, edit and move through their states."""
from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models import Count, Prefetch
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from annotate.api import filters, serializers
from annotate.api.pagination import StandardPagination
from annotate.api.parsers import JSONParser
from annotate.api.permissions import IsAdmin, IsResearcherOrAdmin
from annotate.models import Campaign
from annotate.roles import readable_campaigns
from annotate.services.campaigns import (
    CampaignNotReady,
    CampaignStateError,
    apply_campaign_action,
    create_campaign,
)


@extend_schema_view(
    start=extend_schema(request=None, responses=serializers.CampaignSerializer),
    pause=extend_schema(request=None, responses=serializers.CampaignSerializer),
    resume=extend_schema(request=None, responses=serializers.CampaignSerializer),
    finish=extend_schema(request=None, responses=serializers.CampaignSerializer),
)
class CampaignViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin, mixins.UpdateModelMixin, viewsets.GenericViewSet):
    """Campaigns the caller may read; admins create, edit, start, pause, resume and finish them."""

    serializer_class = serializers.CampaignSerializer
    filterset_class = filters.CampaignFilter
    pagination_class = StandardPagination
    lookup_field = "slug"
    lookup_value_regex = r"[-a-zA-Z0-9_]+"
    http_method_names = ["get", "post", "patch", "head", "options"]
    # JSON only: a form field is text, and "0" read as false would accept what the schema's booleans refuse.
    parser_classes = [JSONParser]
    ADMIN_ACTIONS = {"create", "update", "partial_update", "start", "pause", "resume", "finish"}

    def get_permissions(self):
        return [IsAdmin()] if self.action in self.ADMIN_ACTIONS else [IsResearcherOrAdmin()]

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return Campaign.objects.none()
        return readable_campaigns(self.request.user).annotate(n_documents=Count("documents", distinct=True)).prefetch_related(
            *(Prefetch(role, get_user_model().objects.order_by("username")) for role in ("researchers", "reviewers"))).order_by("-created_at", "-id")

    def perform_create(self, serializer):
        data = dict(serializer.validated_data)
        serializer.instance = create_campaign(slug=data.pop("slug"), name=data.pop("name"), kind=data.pop("kind", Campaign._meta.get_field("kind").get_default()), fields=data)

    def _move(self, action_name: str) -> Response:
        campaign = self.get_object()
        try:
            apply_campaign_action(campaign, action_name)
        except CampaignStateError as exc:
            body = {"detail": str(exc)}
            if isinstance(exc, CampaignNotReady):  # the checklist items still open, each with what to do
                body["problems"] = [{"key": p.key, "title": p.title, "detail": p.detail} for p in exc.problems]
            return Response(body, status=status.HTTP_409_CONFLICT)
        return Response(self.get_serializer(campaign).data)

    @action(detail=True, methods=["post"])
    def start(self, request, slug=None):
        return self._move("start")

    @action(detail=True, methods=["post"])
    def pause(self, request, slug=None):
        return self._move("pause")

    @action(detail=True, methods=["post"])
    def resume(self, request, slug=None):
        return self._move("resume")

    @action(detail=True, methods=["post"])
    def finish(self, request, slug=None):
        return self._move("finish")
