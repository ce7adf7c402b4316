"""Shared pieces of the API views: the campaign scope, worker-row lists, OpenAPI parameters."""
from __future__ import annotations

from decimal import Decimal

from django.db.models import DecimalField, OuterRef, Subquery, Sum, Value
from django.db.models.functions import Coalesce
from django.utils.functional import cached_property
from drf_spectacular.utils import OpenApiParameter
from rest_framework import generics
from rest_framework.exceptions import PermissionDenied

from annotate.api.pagination import IdCursorPagination
from annotate.api.permissions import IsResearcherOrAdmin, is_admin, readable_campaign_or_404
from annotate.models import BonusEntry, Campaign, Worker

SLUG = OpenApiParameter("slug", str, OpenApiParameter.PATH, description="Campaign slug.")

REVEAL = OpenApiParameter("reveal_workers", bool, description="Admins only: real worker ids instead of pseudonyms.")


def query_flag(request, name: str) -> bool:
    return str(request.query_params.get(name, "")).strip().lower() in {"1", "true"}


def bonus_total_of(worker_ref: str, campaign: Campaign | None = None) -> Coalesce:
    entries = BonusEntry.objects.filter(worker_id=OuterRef(worker_ref))
    if campaign is not None:
        entries = entries.filter(campaign=campaign)
    total = entries.order_by().values("worker_id").annotate(total=Sum("amount")).values("total")[:1]
    money = DecimalField(max_digits=10, decimal_places=2)
    return Coalesce(Subquery(total, output_field=money), Value(Decimal("0.00")), output_field=money)


class CampaignScoped:
    """Resolves ``self.campaign`` from the URL among the campaigns the caller may read."""

    permission_classes = [IsResearcherOrAdmin]

    @cached_property
    def campaign(self) -> Campaign:
        return readable_campaign_or_404(self.request.user, self.kwargs["slug"])

    def fake(self) -> bool:
        return getattr(self, "swagger_fake_view", False)


class WorkerRowsList(CampaignScoped, generics.ListAPIView):
    """Rows produced by workers, shown with per-campaign pseudonyms (admins may ask ``reveal_workers=1``)."""

    pagination_class = IdCursorPagination
    extra_query_options = ("reveal_workers",)
    boolean_query_options = ("reveal_workers",)

    def list(self, request, *args, **kwargs):
        reveal = query_flag(request, "reveal_workers")
        if reveal and not is_admin(request.user):
            raise PermissionDenied("only admins may reveal worker identities (reveal_workers=1)")
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        context = {**self.get_serializer_context(), "campaign": self.campaign, "reveal_workers": reveal}
        if reveal:
            ids = {row.worker_id for row in page}
            context["real_worker_names"] = {
                w["pk"]: (f"{w['provider'] or 'local'}:{w['external_id']}" if w["external_id"] else w["user__username"])
                for w in Worker.objects.filter(pk__in=ids).values("pk", "provider", "external_id", "user__username")
            }
        return self.get_paginated_response(self.get_serializer_class()(page, many=True, context=context).data)
