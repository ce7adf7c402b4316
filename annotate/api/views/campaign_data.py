"""The campaign's documents, summaries, judgements and metric scores (read-only); a protocol's own rows are listed by
its app (``Protocol.api_urls_module``, e.g. BUMP's edits)."""
from __future__ import annotations

from django.db.models import Prefetch
from drf_spectacular.utils import extend_schema
from rest_framework import generics, viewsets

from annotate.api import filters, serializers
from annotate.api.pagination import IdCursorPagination, StandardPagination
from annotate.api.permissions import is_admin
from annotate.api.views.base import REVEAL, SLUG, CampaignScoped, WorkerRowsList
from annotate.models import Document, MetricScore, SentenceJudgement, Summary, Trap


@extend_schema(parameters=[SLUG])
class DocumentViewSet(CampaignScoped, viewsets.ReadOnlyModelViewSet):
    """The campaign's documents (admins also see the negative entity and the traps with their labels)."""

    filterset_class = filters.DocumentFilter
    pagination_class = StandardPagination

    def get_serializer_class(self):
        return serializers.AdminDocumentSerializer if is_admin(self.request.user) else serializers.DocumentSerializer

    def get_queryset(self):
        if self.fake():
            return Document.objects.none()
        queryset = Document.objects.filter(campaign=self.campaign).order_by("id")
        # Nested lists in a fixed order: rows change place in the table when they are updated.
        return queryset.prefetch_related(Prefetch("traps", Trap.objects.order_by("id"))) if is_admin(self.request.user) else queryset


@extend_schema(parameters=[SLUG])
class SummaryViewSet(CampaignScoped, viewsets.ReadOnlyModelViewSet):
    """The campaign's summaries with their imported human scores and every metric score."""

    serializer_class = serializers.SummarySerializer
    filterset_class = filters.SummaryFilter
    pagination_class = StandardPagination

    def get_queryset(self):
        if self.fake():
            return Summary.objects.none()
        return Summary.objects.filter(document__campaign=self.campaign).select_related("document").prefetch_related(
            Prefetch("metric_scores", MetricScore.objects.order_by("metric", "config_key", "id"))).order_by("id")



@extend_schema(parameters=[SLUG, REVEAL])
class JudgementList(WorkerRowsList):
    """Sentence judgements of the campaign (never trap answers)."""

    serializer_class = serializers.JudgementSerializer
    filterset_class = filters.JudgementFilter

    def get_queryset(self):
        if self.fake():
            return SentenceJudgement.objects.none()
        queryset = SentenceJudgement.objects.filter(summary__document__campaign=self.campaign)
        return filters.annotate_worker_blocked(queryset, self.campaign)


@extend_schema(parameters=[SLUG])
class ScoreList(CampaignScoped, generics.ListAPIView):
    """Metric scores of the campaign's summaries."""

    serializer_class = serializers.ScoreSerializer
    filterset_class = filters.ScoreFilter
    pagination_class = IdCursorPagination

    def get_queryset(self):
        if self.fake():
            return MetricScore.objects.none()
        return MetricScore.objects.filter(summary__document__campaign=self.campaign)
