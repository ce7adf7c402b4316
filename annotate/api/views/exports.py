"""Streaming exports of a campaign's data in every format."""
from __future__ import annotations

from typing import TYPE_CHECKING

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.exceptions import PermissionDenied
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.api import serializers
from annotate.api.permissions import is_admin
from annotate.api.views.base import SLUG, CampaignScoped
from annotate.exporters.tabular import ROW_KINDS, ExportFilters, batched_lines, csv_lines, iter_rows, jsonl_lines
from annotate.models import Campaign
from annotate.protocols import format_misfit, protocol_for

if TYPE_CHECKING:
    from annotate.exporters.parquet import Table


class _IgnoreFormatParameter(DefaultContentNegotiation):
    """``?format=`` names the export format here, not a DRF renderer: errors are always JSON."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class ExportView(CampaignScoped, APIView):
    """Stream the campaign's data (``frank`` zip, ``bump`` JSON, ``jsonl`` or ``csv`` rows, ``parquet`` dataset zip); see docs/api.md.

    A protocol's own format asked of a campaign of another protocol (``bump`` for FRANK, ``frank`` for BUMP) is 400.
    """

    query_options = serializers.ExportQuerySerializer

    renderer_classes = [JSONRenderer]
    content_negotiation_class = _IgnoreFormatParameter

    @extend_schema(
        parameters=[SLUG, serializers.ExportQuerySerializer],
        responses={
            (200, "application/zip"): OpenApiTypes.BINARY,
            # A JSON document (bump, or one file of the frank zip): the schema takes it as parsed JSON.
            (200, "application/json"): OpenApiTypes.ANY,
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
            annotators=options["annotators"],
        )
        fmt = options["format"]
        reveal = options["reveal_workers"]
        misfit = format_misfit(fmt, campaign.kind)
        if misfit:
            return Response({"format": [misfit]}, status=status.HTTP_400_BAD_REQUEST)
        if fmt == "parquet":
            # Imported here: pyarrow is loaded only for Parquet exports, not at every start.
            from annotate.exporters.parquet import stream_parquet_zip

            tables = _parquet_tables(campaign, export_filters, kinds=options.get("rows") or ROW_KINDS, reveal=reveal)
            chunks = stream_parquet_zip(campaign, tables, license_id=options.get("license"))
            return self._stream(chunks, "application/zip", f"{campaign.slug}-parquet.zip")
        protocol = protocol_for(campaign.kind)
        if fmt in protocol.export_formats:
            export = protocol.export(campaign, fmt, export_filters, file=options["file"], reveal_workers=reveal, include_gold=admin)
            return self._stream(export.chunks, export.content_type, export.filename)
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


def _parquet_tables(campaign: Campaign, export_filters: ExportFilters, *, kinds, reveal: bool) -> list[Table]:
    """The row tables of the jsonl/csv export, plus the protocol's own tables (FRANK summary scores, BUMP pairs)."""
    from annotate.exporters.parquet import Table, row_schema

    descriptions = {
        "judgements": "one row per sentence judgement", "edits": "one row per BUMP edit (collected or imported pair)",
        "scores": "one row per metric score",
        "summaries": "one row per summary: text, role, human scores as the report uses them, unified error types",
    }
    tables = [
        Table(kind, iter_rows(campaign, export_filters, kinds=[kind], reveal_workers=reveal), descriptions[kind], row_schema(kind))
        for kind in ROW_KINDS if kind in kinds
    ]
    return tables + protocol_for(campaign.kind).parquet_tables(campaign, export_filters)
