"""Paper tables and figures of a campaign's report over the API (``metrics_service.paper``).

* ``GET /api/campaigns/<slug>/report/outputs/``: the names of the tables and figures with data;
* ``GET /api/campaigns/<slug>/report/outputs/<name>.<ext>``: one of them, ``ext`` = ``csv`` or ``tex``
  for a table, ``svg`` or ``png`` for a figure.

Both take the report's query options (``split``, ``dataset``, ``kendall``, ...). Like the report itself,
they answer 202 with the progress while a worker computes a report that is not cached yet.
"""
from __future__ import annotations

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.api.permissions import IsResearcherOrAdmin, readable_campaign_or_404
from metrics_service.api.serializers import ReportQuerySerializer

SLUG = OpenApiParameter("slug", str, OpenApiParameter.PATH, description="Campaign slug.")
TABLE_TYPES = {"csv": ("csv", "text/csv; charset=utf-8"), "tex": ("latex", "application/x-latex; charset=utf-8")}
FIGURE_TYPES = {"svg": "image/svg+xml", "png": "image/png"}
#: The file names the view answers (any other ending is a 400), as the schema states them.
FILENAME_PATTERN = r"^.*\.(" + "|".join([*TABLE_TYPES, *FIGURE_TYPES]) + ")$"


def requested_report(campaign, options: dict, user) -> tuple[dict | None, Response | None]:
    """The current report, or the answer while there is none: 202 with its job (queued or running;
    ``Retry-After``) and ``freshness``, when the last stored report was computed (``metrics_service.figures``),
    500 when the job failed, 429 when ``user`` already has as many report jobs as allowed, 400 for bad options."""
    from metrics_service.figures import report_figures
    from metrics_service.report import ReportError
    from metrics_service.report_jobs import ReportJobLimit

    try:
        report, freshness = report_figures(campaign, options, user_id=getattr(user, "pk", None))
        progress = freshness.progress or {}
    except ReportError as exc:
        return None, Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
    except ReportJobLimit as exc:
        return None, Response({"detail": str(exc), "limit": exc.limit}, status=status.HTTP_429_TOO_MANY_REQUESTS,
                              headers={"Retry-After": str(exc.retry_after)})
    if freshness.current:
        return report, None
    if progress.get("state") == "failed":
        return None, Response({"status": "failed", "job": progress.get("job"), "detail": progress.get("error", "")},
                              status=status.HTTP_500_INTERNAL_SERVER_ERROR)
    return None, Response({"status": progress.get("state", "queued"), "job": progress.get("job"), "progress": progress,
                           "freshness": freshness.as_dict()}, status=status.HTTP_202_ACCEPTED, headers={"Retry-After": "2"})


def _reports(campaign, options: dict, user) -> tuple[dict | None, dict, Response | None]:
    """The report and, without a dataset filter, one report per dataset (the correlation table's blocks)."""
    from metrics_service.paper import DATASET_LABELS

    report, waiting = requested_report(campaign, options, user)
    subsets = {}
    if report is not None and not options.get("dataset"):
        for dataset in sorted(report.get("error_distribution_by_dataset") or {}):
            subset, waiting = requested_report(campaign, {**options, "dataset": dataset}, user)
            if subset is None:
                return None, {}, waiting
            subsets[DATASET_LABELS.get(dataset, dataset)] = subset
    return report, subsets, waiting


class _ReportOutputs(APIView):
    permission_classes = [IsResearcherOrAdmin]
    query_options = ReportQuerySerializer  # the report's options; any other query option is refused

    def _context(self, request, slug: str):
        campaign = readable_campaign_or_404(request.user, slug)
        query = ReportQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        options = dict(query.validated_data)
        report, subsets, waiting = _reports(campaign, options, request.user)
        return campaign, options, report, subsets, waiting


class ReportOutputListView(_ReportOutputs):
    """The file names of the paper tables and figures with data, for ``report/outputs/<name>``."""

    @extend_schema(operation_id="campaigns_report_outputs_list", parameters=[SLUG, ReportQuerySerializer], responses={200: OpenApiTypes.OBJECT, 202: OpenApiTypes.OBJECT, 400: OpenApiTypes.OBJECT, 429: OpenApiTypes.OBJECT})
    def get(self, request, slug=None):
        from metrics_service import paper

        campaign, options, report, subsets, waiting = self._context(request, slug)
        if waiting is not None:
            return waiting
        tables = paper.report_tables(report, subsets)
        frame, metrics = paper.analysis_frame(campaign, options)
        figures = paper.report_figures(report, frame, [m for m in metrics if m not in (report.get("excluded_metrics") or {})])
        return Response({
            "tables": [f"{name}.{ext}" for name in tables for ext in TABLE_TYPES],
            "figures": [f"{name}.{ext}" for name in figures for ext in FIGURE_TYPES],
        })


class ReportOutputView(_ReportOutputs):
    """One paper table (``.csv``, ``.tex``) or figure (``.svg``, ``.png``) of the campaign's report."""

    @extend_schema(
        operation_id="campaigns_report_outputs_file",
        parameters=[SLUG, OpenApiParameter("filename", str, OpenApiParameter.PATH, description="e.g. correlations.tex, roc_xsum.svg",
                                                    pattern=FILENAME_PATTERN),
                    ReportQuerySerializer],
        responses={(200, "text/csv"): OpenApiTypes.BINARY, (200, "application/x-latex"): OpenApiTypes.BINARY,
                   (200, "image/svg+xml"): OpenApiTypes.BINARY, (200, "image/png"): OpenApiTypes.BINARY, 202: OpenApiTypes.OBJECT,
                   400: OpenApiTypes.OBJECT, 404: OpenApiTypes.OBJECT, 429: OpenApiTypes.OBJECT},
    )
    def get(self, request, slug=None, filename=None):
        from metrics_service import paper

        name, _, ext = filename.rpartition(".")
        if ext not in TABLE_TYPES and ext not in FIGURE_TYPES:
            return Response({"detail": f"unknown file type {ext!r}; expected .csv or .tex (tables), .svg or .png (figures)"},
                            status=status.HTTP_400_BAD_REQUEST)
        campaign, options, report, subsets, waiting = self._context(request, slug)
        if waiting is not None:
            return waiting
        if ext in TABLE_TYPES:
            tables = paper.report_tables(report, subsets)
            if name not in tables:
                return Response({"detail": f"no table {name!r} with data; tables: {', '.join(tables) or 'none'}"}, status=status.HTTP_404_NOT_FOUND)
            fmt, content_type = TABLE_TYPES[ext]
            return HttpResponse(paper.render_table(tables[name], fmt), content_type=content_type)
        frame, metrics = paper.analysis_frame(campaign, options)
        figure = paper.report_figure(report, frame, [m for m in metrics if m not in (report.get("excluded_metrics") or {})], name)
        if figure is None:
            return Response({"detail": f"no figure {name!r} with data; GET report/outputs/ lists them"}, status=status.HTTP_404_NOT_FOUND)
        return HttpResponse(paper.render_figure(figure, ext), content_type=FIGURE_TYPES[ext])
