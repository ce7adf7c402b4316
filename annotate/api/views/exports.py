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
from annotate.exporters.pseudonyms import WorkerNamer
from annotate.exporters.tabular import COLUMNS, ROW_KINDS, ExportFilters, batched_lines, csv_lines, iter_rows, jsonl_lines
from annotate.models import Campaign
from annotate.protocols import Protocol, answer_columns, format_misfit, layout_row_owners, protocol_for

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
        protocol = protocol_for(campaign.kind)
        # The shared row kinds, then the rows the campaign's protocol adds for its own answers.
        own_kinds = [*ROW_KINDS, *protocol.answer_row_kinds]
        kinds = options.get("rows") or own_kinds
        foreign = [kind for kind in kinds if kind not in own_kinds]
        if foreign:
            return Response({"rows": [f"rows={','.join(foreign)}: not rows of a {campaign.kind} campaign; its row kinds: {', '.join(own_kinds)}"]},
                            status=status.HTTP_400_BAD_REQUEST)
        if fmt == "parquet":
            # Imported here: pyarrow is loaded only for Parquet exports, not at every start.
            from annotate.exporters.parquet import stream_parquet_zip

            tables = _parquet_tables(campaign, protocol, export_filters, kinds=kinds, reveal=reveal)
            chunks = stream_parquet_zip(campaign, tables, license_id=options.get("license"))
            return self._stream(chunks, "application/zip", f"{campaign.slug}-parquet.zip")
        if fmt in protocol.export_formats:
            export = protocol.export(campaign, fmt, export_filters, file=options["file"], reveal_workers=reveal, include_gold=admin)
            return self._stream(export.chunks, export.content_type, export.filename)
        rows = _rows(campaign, protocol, export_filters, kinds, reveal)
        if fmt == "csv":
            columns = (*COLUMNS, *answer_columns(campaign.kind))
            return self._stream(batched_lines(csv_lines(rows, columns)), "text/csv; charset=utf-8", f"{campaign.slug}.csv")
        return self._stream(batched_lines(jsonl_lines(rows)), "application/x-ndjson", f"{campaign.slug}.jsonl")

    @staticmethod
    def _stream(chunks, content_type: str, filename: str) -> StreamingHttpResponse:
        response = StreamingHttpResponse(chunks, content_type=content_type)
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        response["X-Content-Type-Options"] = "nosniff"
        return response


def _answer_rows(campaign: Campaign, protocol: Protocol, export_filters: ExportFilters, kind: str, reveal: bool):
    """The rows of one of the protocol's answer row kinds, with every export column present."""
    name = WorkerNamer(campaign.pk, reveal=reveal)
    base = dict.fromkeys((*COLUMNS, *answer_columns(campaign.kind)))
    for row in protocol.answer_rows(campaign, kind, export_filters, name):
        yield {**base, **row}


def _rows(campaign: Campaign, protocol: Protocol, export_filters: ExportFilters, kinds, reveal: bool):
    """The jsonl/csv rows: the shared kinds asked for, then the protocol's answer rows asked for."""
    yield from iter_rows(campaign, layout_row_owners(), export_filters, kinds=[kind for kind in kinds if kind in ROW_KINDS], reveal_workers=reveal)
    for kind in protocol.answer_row_kinds:
        if kind in kinds:
            yield from _answer_rows(campaign, protocol, export_filters, kind, reveal)


def _parquet_tables(campaign: Campaign, protocol: Protocol, export_filters: ExportFilters, *, kinds, reveal: bool) -> list[Table]:
    """The row tables of the jsonl/csv export, plus the protocol's own tables (FRANK summary scores, BUMP pairs)."""
    from annotate.exporters.parquet import Table, answer_schema, row_schema

    descriptions = {
        "judgements": "one row per sentence judgement", "edits": "one row per BUMP edit (collected or imported pair)",
        "scores": "one row per metric score",
        "summaries": "one row per summary: text, role, human scores as the report uses them, unified error types",
    }
    tables = [
        Table(kind, iter_rows(campaign, layout_row_owners(), export_filters, kinds=[kind], reveal_workers=reveal), descriptions[kind], row_schema(kind))
        for kind in ROW_KINDS if kind in kinds
    ]
    tables += [
        Table(kind, _answer_rows(campaign, protocol, export_filters, kind, reveal), rows.description, answer_schema(rows.columns))
        for kind, rows in protocol.answer_row_kinds.items() if kind in kinds
    ]
    return tables + protocol.parquet_tables(campaign, export_filters)
