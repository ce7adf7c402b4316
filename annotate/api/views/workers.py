"""Workers across campaigns: global block and ledger totals (admins)."""
from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from annotate.api import filters, serializers
from annotate.api.pagination import StandardPagination
from annotate.api.permissions import IsAdmin
from annotate.api.views.base import bonus_total_of
from annotate.models import Participation, Worker
from annotate.services.workers import block_worker, unblock_worker


@extend_schema_view(
    block=extend_schema(request=serializers.BlockSerializer, responses=serializers.WorkerSerializer),
    unblock=extend_schema(request=None, responses=serializers.WorkerSerializer),
)
class WorkerViewSet(viewsets.ReadOnlyModelViewSet):
    """Workers with their global block and ledger total; the detail adds their per-campaign figures (admins)."""

    permission_classes = [IsAdmin]
    filterset_class = filters.WorkerFilter
    pagination_class = StandardPagination

    def get_serializer_class(self):
        return serializers.WorkerDetailSerializer if self.action == "retrieve" else serializers.WorkerSerializer

    def get_queryset(self):
        return Worker.objects.select_related("user").annotate(bonus_total=bonus_total_of("pk")).order_by("id")

    def get_serializer_context(self):
        context = super().get_serializer_context()
        if self.action == "retrieve" and "pk" in self.kwargs:
            context["participations"] = (
                Participation.objects.filter(worker_id=self.kwargs["pk"]).select_related("campaign")
                .annotate(bonus_total=bonus_total_of("worker_id")).order_by("id")
            )
        return context

    def _detail(self, worker: Worker) -> Response:
        return Response(serializers.WorkerSerializer(self.get_queryset().get(pk=worker.pk)).data)

    @action(detail=True, methods=["post"])
    def block(self, request, pk=None):
        body = serializers.BlockSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        return self._detail(block_worker(self.get_object(), body.validated_data["reason"] or "blocked by an admin"))

    @action(detail=True, methods=["post"])
    def unblock(self, request, pk=None):
        return self._detail(unblock_worker(self.get_object()))
