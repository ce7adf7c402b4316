"""Metric scoring jobs and the analysis report of a campaign."""
from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.api.pagination import StandardPagination
from annotate.api.views.base import SLUG, CampaignScoped
from factlab.jobs import require_broker
from metrics_service.api import serializers


def _scoring():
    # Imported lazily: the URLconf loads this module without the scoring service's heavy dependencies.
    from metrics_service.models import ScoringJob
    from metrics_service.scoring import jobs

    return jobs, ScoringJob


@extend_schema_view(
    list=extend_schema(parameters=[SLUG], responses=serializers.ScoringJobSerializer(many=True)),
    retrieve=extend_schema(parameters=[SLUG], responses=serializers.ScoringJobSerializer),
    create=extend_schema(parameters=[SLUG], request=serializers.ScoringJobCreateSerializer, responses={201: serializers.ScoringJobSerializer}),
    cancel=extend_schema(parameters=[SLUG], request=None, responses={200: serializers.ScoringJobSerializer, 409: OpenApiResponse(description="Already finished.")}),
    llm_annotation=extend_schema(parameters=[SLUG], request=OpenApiTypes.OBJECT, responses={201: serializers.ScoringJobSerializer}),
    retry=extend_schema(parameters=[SLUG], request=None, responses={202: serializers.ScoringJobSerializer, 409: OpenApiResponse(description="Not failed or cancelled.")}),
)
class ScoringJobViewSet(CampaignScoped, viewsets.GenericViewSet):
    """Metric scoring jobs of the campaign: submit, watch progress, cancel, retry."""

    serializer_class = serializers.ScoringJobSerializer
    pagination_class = StandardPagination

    def get_queryset(self):
        _, ScoringJob = _scoring()
        if self.fake():
            return ScoringJob.objects.none()
        return ScoringJob.objects.filter(campaign=self.campaign).order_by("-created_at", "-id")

    def _progress(self, job) -> dict:
        jobs, _ = _scoring()
        return jobs.job_progress(job)

    def list(self, request, slug=None):
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response([self._progress(job) for job in page])

    def retrieve(self, request, slug=None, pk=None):
        return Response(self._progress(self.get_object()))

    def create(self, request, slug=None):
        jobs, _ = _scoring()
        body = serializers.ScoringJobCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        require_broker()  # 503 before anything is stored: chunks need the task queue
        try:
            job = jobs.submit_scoring_job(
                metric=data["metric"], config=data.get("config") or None, campaign=self.campaign,
                summary_ids=data.get("summary_ids"), user=request.user, chunk_size=data["chunk_size"],
            )
        except ValueError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(self._progress(job), status=status.HTTP_201_CREATED)

    @action(detail=False, methods=["post"], url_path="llm-annotation")
    def llm_annotation(self, request, slug=None):
        """Start the LLM annotator (FRANK task) on the campaign: ``{"model"?, "config"?, "chunk_size"?}``.

        The endpoint is the server's ``FACTLAB_LLM_BASE_URL``; the judgements are stored by a marked model
        annotator and kept out of human aggregates.
        """
        from metrics_service.llm_annotation import submit_llm_annotation

        data = request.data if isinstance(request.data, dict) else {}
        model, config, chunk_size = data.get("model"), data.get("config") or {}, data.get("chunk_size", 16)
        if model is not None and (not isinstance(model, str) or not model.strip()):
            return Response({"detail": "model must be a non-empty string"}, status=status.HTTP_400_BAD_REQUEST)
        if not isinstance(config, dict):
            return Response({"detail": "config must be an object of llm_frank options"}, status=status.HTTP_400_BAD_REQUEST)
        require_broker()
        try:
            job = submit_llm_annotation(campaign=self.campaign, model=model, config=config, user=request.user, chunk_size=chunk_size)
        except ValueError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(self._progress(job), status=status.HTTP_201_CREATED)

    @action(detail=True, methods=["post"])
    def cancel(self, request, slug=None, pk=None):
        jobs, _ = _scoring()
        try:
            job = jobs.cancel_scoring_job(self.get_object())
        except ValueError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(self._progress(job))

    @action(detail=True, methods=["post"])
    def retry(self, request, slug=None, pk=None):
        """Score the failed and skipped chunks of a failed or cancelled job again."""
        jobs, _ = _scoring()
        try:
            job = jobs.retry_scoring_job(self.get_object())
        except ValueError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(self._progress(job), status=status.HTTP_202_ACCEPTED)


class LabelRefitView(CampaignScoped, APIView):
    """The campaign's stored sentence labels (the label model's posteriors and intervals, which the exports'
    ``label_*`` columns carry) and refits on demand.

    GET: how many labels are stored, by which model, when they were refitted, and whether judgements arrived
    since (``stale``). POST: a worker refits the campaign's ``label_model`` on all its judgements (imported
    ones included); 202 with the state and ``already_queued`` (true when a refit asked for in the last minute
    is still to come: this request joins it). 400 for a campaign whose workers do not label sentences (BUMP).
    """

    @extend_schema(parameters=[SLUG], responses={200: OpenApiTypes.OBJECT})
    def get(self, request, slug=None):
        from metrics_service.label_refits import label_state

        return Response(label_state(self.campaign))

    @extend_schema(parameters=[SLUG], request=None, responses={202: OpenApiTypes.OBJECT, 400: OpenApiTypes.OBJECT, 503: OpenApiTypes.OBJECT})
    def post(self, request, slug=None):
        from metrics_service.label_refits import RefitRefused, label_state, request_label_refit

        require_broker()  # 503 when no worker could ever receive the refit
        try:
            queued = request_label_refit(self.campaign)
        except RefitRefused as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response({**label_state(self.campaign), "already_queued": not queued}, status=status.HTTP_202_ACCEPTED)


class ReportView(CampaignScoped, APIView):
    """The campaign's analysis report, computed by a Celery worker and cached per campaign state.

    200 with the report when it is cached; otherwise 202 with ``{"status", "job", "progress"}`` (and a
    ``Retry-After`` header) while a worker computes it: poll the same URL until it answers 200. Identical
    requests share one job; a user with ``FACTLAB_REPORT_JOBS_PER_USER`` jobs queued or running gets 429.
    """

    query_options = serializers.ReportQuerySerializer

    @extend_schema(parameters=[SLUG, serializers.ReportQuerySerializer], responses={200: OpenApiTypes.OBJECT, 202: OpenApiTypes.OBJECT, 429: OpenApiTypes.OBJECT})
    def get(self, request, slug=None):
        from metrics_service.api.report_outputs import requested_report

        query = serializers.ReportQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        report, waiting = requested_report(self.campaign, dict(query.validated_data), request.user)
        return waiting if report is None else Response(report)
