"""API views: thin wrappers that check the role, read the campaign, call a service or selector, serialise.

Every campaign-scoped endpoint lives under ``/api/campaigns/<slug>/`` and first resolves the campaign
among those the caller may read (404 otherwise). Annotators are refused everywhere (403).
"""
from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING

from django.db.models import Count, DecimalField, OuterRef, Q, Subquery, Sum, Value
from django.db.models.functions import Coalesce
from django.http import StreamingHttpResponse
from django.utils.functional import cached_property
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import generics, mixins, status, viewsets
from rest_framework.authtoken.models import Token
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import AllowAny
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.api.authentication import token_expired
from annotate.frank.exporter import (
    stream_frank_file,
    stream_frank_zip,
    stream_json_array,
)
from annotate.exporters.formats import format_misfit
from annotate.exporters.tabular import (
    ROW_KINDS,
    ExportFilters,
    batched_lines,
    csv_lines,
    iter_rows,
    jsonl_lines,
)
from annotate.models import (
    LIVE_ASSIGNMENT_STATUSES,
    Assignment,
    BonusEntry,
    Campaign,
    Document,
    Edit,
    ImportJob,
    Item,
    MetricScore,
    Participation,
    SentenceJudgement,
    Summary,
    Worker,
)
from annotate.roles import RESEARCHER_GROUP, readable_campaigns, role_of
from annotate.services.campaigns import CampaignStateError, set_campaign_status
from annotate.services.participation import block_participation, unblock_participation
from annotate.services.researchers import (
    InvitationInvalid,
    ResearcherError,
    accept_invitation,
    create_researcher,
    invitation_for,
)

from factlab.jobs import require_broker

from . import filters, serializers
from .pagination import IdCursorPagination, StandardPagination
from .permissions import (
    IsAdmin,
    IsResearcherOrAdmin,
    is_admin,
    readable_campaign_or_404,
)
from .services import (
    UploadTooLarge,
    block_worker,
    check_upload_size,
    create_import_job,
    max_upload_bytes,
    unblock_worker,
)

SLUG = OpenApiParameter("slug", str, OpenApiParameter.PATH, description="Campaign slug.")
MULTIPART_SLACK_BYTES = 64 * 1024  # multipart headers around the file

if TYPE_CHECKING:
    from annotate.exporters.parquet import Table


def _flag(request, name: str) -> bool:
    return str(request.query_params.get(name, "")).strip().lower() in {"1", "true", "yes", "on"}


def _bonus_total(worker_ref: str, campaign: Campaign | None = None) -> Coalesce:
    entries = BonusEntry.objects.filter(worker_id=OuterRef(worker_ref))
    if campaign is not None:
        entries = entries.filter(campaign=campaign)
    total = entries.order_by().values("worker_id").annotate(total=Sum("amount")).values("total")[:1]
    money = DecimalField(max_digits=10, decimal_places=2)
    return Coalesce(Subquery(total, output_field=money), Value(Decimal("0.00")), output_field=money)


# --------------------------------------------------------------------------- auth


class TokenView(APIView):
    """Create (POST) or revoke (DELETE) the caller's API token."""

    permission_classes = [AllowAny]

    @extend_schema(request=serializers.TokenRequestSerializer, responses={200: serializers.TokenSerializer, 201: serializers.TokenSerializer})
    def post(self, request):
        data = serializers.TokenRequestSerializer(data=request.data, context={"request": request})
        data.is_valid(raise_exception=True)
        user = data.validated_data["user"]
        token, created = Token.objects.get_or_create(user=user)
        if not created and token_expired(token):  # an expired token is replaced, never handed out again
            token.delete()
            token, created = Token.objects.create(user=user), True
        body = {"token": token.key, "username": user.get_username(), "role": role_of(user)}
        return Response(body, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)

    @extend_schema(request=None, responses={204: None})
    def delete(self, request):
        if not request.user or not request.user.is_authenticated:
            self.permission_denied(request, message="log in or send your token to revoke it")
        Token.objects.filter(user=request.user).delete()
        return Response(status=status.HTTP_204_NO_CONTENT)


# --------------------------------------------------------------------------- campaigns


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
    ADMIN_ACTIONS = {"create", "update", "partial_update", "start", "pause", "resume", "finish"}

    def get_permissions(self):
        return [IsAdmin()] if self.action in self.ADMIN_ACTIONS else [IsResearcherOrAdmin()]

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return Campaign.objects.none()
        return readable_campaigns(self.request.user).annotate(n_documents=Count("documents", distinct=True)).prefetch_related("researchers").order_by("-created_at", "-id")

    def _move(self, status_value: str) -> Response:
        campaign = self.get_object()
        try:
            set_campaign_status(campaign, status_value)
        except CampaignStateError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(self.get_serializer(campaign).data)

    @action(detail=True, methods=["post"])
    def start(self, request, slug=None):
        return self._move("running")

    @action(detail=True, methods=["post"])
    def pause(self, request, slug=None):
        return self._move("paused")

    @action(detail=True, methods=["post"])
    def resume(self, request, slug=None):
        return self._move("running")

    @action(detail=True, methods=["post"])
    def finish(self, request, slug=None):
        return self._move("finished")


class CampaignScoped:
    """Resolves ``self.campaign`` from the URL among the campaigns the caller may read."""

    permission_classes = [IsResearcherOrAdmin]

    @cached_property
    def campaign(self) -> Campaign:
        return readable_campaign_or_404(self.request.user, self.kwargs["slug"])

    def fake(self) -> bool:
        return getattr(self, "swagger_fake_view", False)


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
        return queryset.prefetch_related("traps") if is_admin(self.request.user) else queryset


@extend_schema(parameters=[SLUG])
class SummaryViewSet(CampaignScoped, viewsets.ReadOnlyModelViewSet):
    """The campaign's summaries with their imported human scores and every metric score."""

    serializer_class = serializers.SummarySerializer
    filterset_class = filters.SummaryFilter
    pagination_class = StandardPagination

    def get_queryset(self):
        if self.fake():
            return Summary.objects.none()
        return Summary.objects.filter(document__campaign=self.campaign).select_related("document").prefetch_related("metric_scores").order_by("id")


class WorkerRowsList(CampaignScoped, generics.ListAPIView):
    """Rows produced by workers, shown with per-campaign pseudonyms (admins may ask ``reveal_workers=1``)."""

    pagination_class = IdCursorPagination

    def list(self, request, *args, **kwargs):
        reveal = _flag(request, "reveal_workers")
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


REVEAL = OpenApiParameter("reveal_workers", bool, description="Admins only: real worker ids instead of pseudonyms.")


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


@extend_schema(parameters=[SLUG, REVEAL])
class EditList(WorkerRowsList):
    """BUMP edits of the campaign, with hints and review."""

    serializer_class = serializers.EditSerializer
    filterset_class = filters.EditFilter

    def get_queryset(self):
        if self.fake():
            return Edit.objects.none()
        queryset = Edit.objects.filter(source_summary__document__campaign=self.campaign)
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
        return filters.annotate_worker_blocked(Assignment.objects.filter(item__campaign=self.campaign), self.campaign)


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
            from metrics_service.label_reliability import campaign_worker_reliability

            context["reliability"] = campaign_worker_reliability(self.campaign)
        return context

    def get_queryset(self):
        if self.fake():
            return Participation.objects.none()
        return (
            Participation.objects.filter(campaign=self.campaign).select_related("campaign")
            .annotate(bonus_total=_bonus_total("worker_id", self.campaign)).order_by("id")
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
        return Worker.objects.select_related("user").annotate(bonus_total=_bonus_total("pk")).order_by("id")

    def get_serializer_context(self):
        context = super().get_serializer_context()
        if self.action == "retrieve" and "pk" in self.kwargs:
            context["participations"] = (
                Participation.objects.filter(worker_id=self.kwargs["pk"]).select_related("campaign")
                .annotate(bonus_total=_bonus_total("worker_id")).order_by("id")
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


# --------------------------------------------------------------------------- scoring jobs and report


def _scoring():
    # The metrics service is another app; imported lazily so the API module loads without its heavy deps.
    from metrics_service import services
    from metrics_service.models import ScoringJob

    return services, ScoringJob


@extend_schema_view(
    list=extend_schema(parameters=[SLUG], responses=serializers.ScoringJobSerializer(many=True)),
    retrieve=extend_schema(parameters=[SLUG], responses=serializers.ScoringJobSerializer),
    create=extend_schema(parameters=[SLUG], request=serializers.ScoringJobCreateSerializer, responses={201: serializers.ScoringJobSerializer}),
    cancel=extend_schema(parameters=[SLUG], request=None, responses={200: serializers.ScoringJobSerializer, 409: OpenApiResponse(description="Already finished.")}),
)
class ScoringJobViewSet(CampaignScoped, viewsets.GenericViewSet):
    """Metric scoring jobs of the campaign: submit, watch progress, cancel."""

    serializer_class = serializers.ScoringJobSerializer
    pagination_class = StandardPagination

    def get_queryset(self):
        _, ScoringJob = _scoring()
        if self.fake():
            return ScoringJob.objects.none()
        return ScoringJob.objects.filter(campaign=self.campaign).order_by("-created_at", "-id")

    def _progress(self, job) -> dict:
        services, _ = _scoring()
        return services.job_progress(job)

    def list(self, request, slug=None):
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response([self._progress(job) for job in page])

    def retrieve(self, request, slug=None, pk=None):
        return Response(self._progress(self.get_object()))

    def create(self, request, slug=None):
        services, _ = _scoring()
        body = serializers.ScoringJobCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        require_broker()  # 503 before anything is stored: chunks need the task queue
        try:
            job = services.submit_scoring_job(
                metric=data["metric"], config=data.get("config") or None, campaign=self.campaign,
                summary_ids=data.get("summary_ids"), user=request.user, chunk_size=data["chunk_size"],
            )
        except ValueError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(self._progress(job), status=status.HTTP_201_CREATED)

    @action(detail=True, methods=["post"])
    def cancel(self, request, slug=None, pk=None):
        services, _ = _scoring()
        try:
            job = services.cancel_scoring_job(self.get_object())
        except ValueError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(self._progress(job))


class ReportView(CampaignScoped, APIView):
    """The campaign's analysis report, computed by a Celery worker and cached per campaign state.

    200 with the report when it is cached; otherwise 202 with ``{"status", "progress"}`` (and a
    ``Retry-After`` header) while a worker computes it: poll the same URL until it answers 200.
    """

    @extend_schema(parameters=[SLUG, serializers.ReportQuerySerializer], responses={200: OpenApiTypes.OBJECT, 202: OpenApiTypes.OBJECT})
    def get(self, request, slug=None):
        from metrics_service.report import ReportError, request_report

        query = serializers.ReportQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        options = query.validated_data
        try:
            report, progress = request_report(
                self.campaign, split=options["split"], dataset=options.get("dataset"), system=options.get("system"),
                partial=options["partial"], aggregation=options["aggregation"],
                spearman=options["spearman"], auc_references=options["auc_references"],
                include_incomplete=options["include_incomplete"],
            )
        except ReportError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        if report is not None:
            return Response(report)
        if progress.get("state") == "failed":
            return Response({"status": "failed", "detail": progress.get("error", "")}, status=status.HTTP_500_INTERNAL_SERVER_ERROR)
        return Response({"status": progress.get("state", "queued"), "progress": progress}, status=status.HTTP_202_ACCEPTED,
                        headers={"Retry-After": "2"})


# --------------------------------------------------------------------------- export


class _IgnoreFormatParameter(DefaultContentNegotiation):
    """``?format=`` names the export format here, not a DRF renderer: errors are always JSON."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class ExportView(CampaignScoped, APIView):
    """Stream the campaign's data (``frank`` zip, ``bump`` JSON, ``jsonl`` or ``csv`` rows, ``parquet`` dataset zip); see docs/api.md.

    A protocol format that does not fit the campaign's kind (``bump`` for FRANK, ``frank`` for BUMP) is 400.
    """

    renderer_classes = [JSONRenderer]
    content_negotiation_class = _IgnoreFormatParameter

    @extend_schema(
        parameters=[SLUG, serializers.ExportQuerySerializer],
        responses={
            (200, "application/zip"): OpenApiTypes.BINARY,
            (200, "application/json"): OpenApiTypes.BINARY,
            (200, "application/x-ndjson"): OpenApiTypes.BINARY,
            (200, "text/csv"): OpenApiTypes.BINARY,
        },
    )
    def get(self, request, slug=None):
        query = serializers.ExportQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        options = query.validated_data
        admin = is_admin(request.user)
        if options["reveal_workers"] and not admin:
            raise PermissionDenied("only admins may reveal worker identities (reveal_workers=1)")
        campaign = self.campaign
        export_filters = ExportFilters(
            split=options.get("split"), dataset=options.get("dataset"), system=options.get("system"),
            worker_status=options["worker_status"], since=options.get("since"), until=options.get("until"),
        )
        fmt = options["format"]
        reveal = options["reveal_workers"]
        misfit = format_misfit(fmt, campaign.kind)
        if misfit:
            return Response({"format": [misfit]}, status=status.HTTP_400_BAD_REQUEST)
        if fmt == "parquet":
            # Imported here: pyarrow is loaded only for Parquet exports, not at every start.
            from annotate.exporters.parquet import stream_parquet_zip

            tables = _parquet_tables(campaign, export_filters, kinds=options.get("rows") or ROW_KINDS, reveal=reveal, admin=admin)
            chunks = stream_parquet_zip(campaign, tables, license_id=options.get("license"))
            return self._stream(chunks, "application/zip", f"{campaign.slug}-parquet.zip")
        if fmt == "frank":
            if options["file"] == "zip":
                return self._stream(stream_frank_zip(campaign, export_filters, reveal_workers=reveal, include_gold=admin), "application/zip", f"{campaign.slug}-frank.zip")
            chunks = stream_frank_file(campaign, options["file"], export_filters, reveal_workers=reveal, include_gold=admin)
            return self._stream(chunks, "application/json", f"{campaign.slug}-frank-{options['file']}.json")
        if fmt == "bump":
            from annotate.bump.exporter import iter_bump_records

            return self._stream(stream_json_array(iter_bump_records(campaign)), "application/json", f"{campaign.slug}-bump.json")
        rows = iter_rows(campaign, export_filters, kinds=options.get("rows") or ROW_KINDS, reveal_workers=reveal)
        if fmt == "csv":
            return self._stream(batched_lines(csv_lines(rows)), "text/csv; charset=utf-8", f"{campaign.slug}.csv")
        return self._stream(batched_lines(jsonl_lines(rows)), "application/x-ndjson", f"{campaign.slug}.jsonl")

    @staticmethod
    def _stream(chunks, content_type: str, filename: str) -> StreamingHttpResponse:
        response = StreamingHttpResponse(chunks, content_type=content_type)
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        response["X-Content-Type-Options"] = "nosniff"
        return response


def _parquet_tables(campaign: Campaign, export_filters: ExportFilters, *, kinds, reveal: bool, admin: bool) -> list[Table]:
    """The row tables of the jsonl/csv export, plus the protocol's own table (FRANK summary scores, BUMP pairs)."""
    from annotate.exporters.parquet import Table, row_schema

    descriptions = {
        "judgements": "one row per sentence judgement", "edits": "one row per BUMP edit (collected or imported pair)",
        "scores": "one row per metric score",
    }
    tables = [
        Table(kind, iter_rows(campaign, export_filters, kinds=[kind], reveal_workers=reveal), descriptions[kind], row_schema(kind))
        for kind in ROW_KINDS if kind in kinds
    ]
    if not format_misfit("frank", campaign.kind):
        from annotate.frank.exporter import iter_summary_records

        tables.append(Table("summaries", iter_summary_records(campaign, export_filters), "FRANK's human_annotations.json: one row per summary"))
    elif not format_misfit("bump", campaign.kind):
        from annotate.bump.exporter import iter_bump_records

        pairs = ({k: v for k, v in r.items() if k != "scores"} | r["scores"] for r in iter_bump_records(campaign))
        tables.append(Table("pairs", pairs, "BUMP's task format: one row per minimal pair, scores as <Metric>_reference/_edited columns"))
    return tables


# --------------------------------------------------------------------------- imports


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
        try:
            declared = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            declared = 0
        if declared > max_upload_bytes() + MULTIPART_SLACK_BYTES:
            return Response(
                {"detail": f"the upload is about {declared} bytes; the limit is {max_upload_bytes()} bytes (FACTLAB_MAX_UPLOAD_BYTES)"},
                status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
            )
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



# --------------------------------------------------------------------------- researchers and invitations


def _researcher_body(user, invitation=None) -> dict:
    body = {
        "username": user.get_username(), "email": user.email, "is_active": user.is_active,
        "campaigns": sorted(user.granted_campaigns.values_list("slug", flat=True)),
    }
    if invitation is not None:
        body["invitation"] = {
            "uid": invitation.uid, "token": invitation.token, "expires_in_seconds": invitation.expires_in_seconds,
            "url": invitation.path,
        }
    return body


class ResearcherListView(APIView):
    """Researchers (GET) and new researchers with a one-time invitation link (POST), admins only."""

    permission_classes = [IsAdmin]

    @extend_schema(responses=serializers.ResearcherSerializer(many=True))
    def get(self, request):
        from django.contrib.auth import get_user_model

        users = get_user_model().objects.filter(groups__name=RESEARCHER_GROUP).order_by("username").prefetch_related("granted_campaigns")
        return Response([_researcher_body(u) for u in users])

    @extend_schema(request=serializers.ResearcherCreateSerializer, responses={201: serializers.ResearcherSerializer})
    def post(self, request):
        body = serializers.ResearcherCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        from django.contrib.auth import get_user_model

        if get_user_model().objects.filter(username=data["username"]).exists():
            return Response({"username": [f"{data['username']!r} already exists"]}, status=status.HTTP_400_BAD_REQUEST)
        try:
            user = create_researcher(data["username"], email=data["email"], campaigns=data["campaigns"])
        except ResearcherError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        invitation = invitation_for(user)
        answer = _researcher_body(user, invitation)
        answer["invitation"]["url"] = request.build_absolute_uri(invitation.path)
        return Response(answer, status=status.HTTP_201_CREATED)


class InvitationAcceptView(APIView):
    """The invitee sets a password with the invitation's ``uid`` and ``token`` and receives an API token."""

    permission_classes = [AllowAny]
    authentication_classes: list = []

    @extend_schema(request=serializers.InvitationAcceptSerializer, responses={200: serializers.TokenSerializer})
    def post(self, request):
        body = serializers.InvitationAcceptSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        try:
            user = accept_invitation(data["uid"], data["token"], data["password"])
        except InvitationInvalid as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        except ResearcherError as exc:
            return Response({"password": [str(exc).removeprefix("password: ")]}, status=status.HTTP_400_BAD_REQUEST)
        token, _ = Token.objects.get_or_create(user=user)
        return Response({"token": token.key, "username": user.get_username(), "role": role_of(user)})
