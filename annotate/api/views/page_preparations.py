"""Page-preparation runs of a campaign: watch, cancel, retry."""
from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from annotate.api.pagination import StandardPagination
from annotate.api.views.base import SLUG, CampaignScoped
from annotate.models import PagePreparation
from annotate.services.job_state import JobStateError
from annotate.services.page_preparations import (
    cancel_page_preparation,
    retry_page_preparation,
)


class PagePreparationSerializer(serializers.ModelSerializer):
    class Meta:
        model = PagePreparation
        fields = ["id", "status", "done", "total", "error", "attempts", "created_at", "started_at", "finished_at"]


@extend_schema_view(
    list=extend_schema(parameters=[SLUG]),
    retrieve=extend_schema(parameters=[SLUG]),
    cancel=extend_schema(parameters=[SLUG], request=None, responses={200: PagePreparationSerializer, 409: OpenApiResponse(description="Already finished.")}),
    retry=extend_schema(parameters=[SLUG], request=None, responses={202: PagePreparationSerializer, 409: OpenApiResponse(description="Not failed or cancelled.")}),
)
class PagePreparationViewSet(CampaignScoped, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Runs of the job that prepares the campaign's task pages after each import (documents done / total)."""

    serializer_class = PagePreparationSerializer
    pagination_class = StandardPagination

    def get_queryset(self):
        if self.fake():
            return PagePreparation.objects.none()
        return PagePreparation.objects.filter(campaign=self.campaign).order_by("-created_at", "-id")

    @action(detail=True, methods=["post"])
    def cancel(self, request, slug=None, pk=None):
        """Stop a pending or running preparation (claims still prepare a missing page when needed)."""
        return self._change(cancel_page_preparation, status.HTTP_200_OK)

    @action(detail=True, methods=["post"])
    def retry(self, request, slug=None, pk=None):
        """Start a failed or cancelled preparation again."""
        return self._change(retry_page_preparation, status.HTTP_202_ACCEPTED)

    def _change(self, change, answer: int) -> Response:
        try:
            run = change(self.get_object())
        except JobStateError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(self.get_serializer(run).data, status=answer)
