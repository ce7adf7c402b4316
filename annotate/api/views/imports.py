"""Uploads imported by a Celery task (datasets and metric scores)."""
from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response

from annotate.api import filters, serializers
from annotate.api.pagination import StandardPagination
from annotate.api.permissions import IsResearcherOrAdmin, is_admin
from annotate.models import Campaign, ImportJob
from annotate.services.import_jobs import (
    JobStateError,
    UploadTooLarge,
    cancel_import_job,
    check_upload_size,
    create_import_job,
    retry_import_job,
)


class ImportJobViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Uploads of dataset or metric-score files, imported by a Celery task; the detail is the status report.

    Admins see every job; researchers see their own, create campaigns from uploads (granted to them) and
    upload metric scores to campaigns granted to them.
    """

    permission_classes = [IsResearcherOrAdmin]
    serializer_class = serializers.ImportJobSerializer
    filterset_class = filters.ImportJobFilter
    pagination_class = StandardPagination
    parser_classes = [MultiPartParser, FormParser]

    def get_queryset(self):
        jobs = ImportJob.objects.all()
        if getattr(self, "swagger_fake_view", False):
            return jobs.none()
        if not is_admin(self.request.user):
            jobs = jobs.filter(created_by=self.request.user)
        return jobs.order_by("-created_at", "-id")

    @extend_schema(
        request={"multipart/form-data": serializers.ImportJobCreateSerializer},
        responses={202: serializers.ImportJobSerializer, 413: OpenApiResponse(description="File above FACTLAB_MAX_UPLOAD_BYTES.")},
    )
    def create(self, request):
        # A body declared above the limit never gets here: annotate.upload_limits answers 413 without reading it.
        body = serializers.ImportJobCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        try:
            check_upload_size(data["file"].size)
            job = create_import_job(
                kind=data["kind"], fmt=data["format"], campaign_slug=data["campaign"],
                campaign_kind=data.get("campaign_kind") or "", upload=data["file"], user=request.user,
                options={"dataset": data.get("dataset")},
            )
        except Campaign.DoesNotExist as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_404_NOT_FOUND)
        except UploadTooLarge as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
        except ValueError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        job.refresh_from_db()
        return Response(self.get_serializer(job).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(request=None, responses={200: serializers.ImportJobSerializer, 409: OpenApiResponse(description="Not pending.")})
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        """Cancel an import no worker has started (a running import is atomic: it finishes or fails whole)."""
        return self._change(cancel_import_job)

    @extend_schema(request=None, responses={202: serializers.ImportJobSerializer, 409: OpenApiResponse(description="Not failed or cancelled, or the upload was purged.")})
    @action(detail=True, methods=["post"])
    def retry(self, request, pk=None):
        """Run a failed or cancelled import again from its kept upload."""
        return self._change(retry_import_job, status.HTTP_202_ACCEPTED)

    def _change(self, change, answer: int = status.HTTP_200_OK) -> Response:
        try:
            job = change(self.get_object())
        except JobStateError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(self.get_serializer(job).data, status=answer)
