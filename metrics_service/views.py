"""Campaign dashboard: the analysis report as tables and small client-rendered charts.

The page embeds plain JSON (``json_script``) that ``static/factlab/dashboard.js`` draws as SVG in the
browser: no server-side plotting, no CDN, a few kilobytes instead of inline SVG. While the campaign runs,
the page asks ``?fingerprint=1`` (the report's cache key, a handful of aggregate queries) every
``FACTLAB_DASHBOARD_REFRESH_SECONDS`` and reloads only when the data changed.
"""
from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.shortcuts import render

from annotate.models import Campaign, CampaignStatus, Dataset
from annotate.roles import can_read_campaign
from metrics_service import plots
from metrics_service.report import (
    CACHE_SECONDS,
    ReportError,
    get_or_compute_report,
    human_and_metric,
    normalize_options,
    report_cache_key,
)
from metrics_service.selectors import SPLITS


def _options(request: HttpRequest) -> dict:
    return normalize_options(
        split=request.GET.get("split") or "all",
        dataset=request.GET.get("dataset") or None,
        partial=request.GET.get("partial", "1") not in ("0", "false", "no"),
        spearman=request.GET.get("spearman") or "residuals",
        auc_references=request.GET.get("auc_references") or "per_pair",
        include_incomplete=request.GET.get("include_incomplete", "0") in ("1", "true", "yes"),
    )


def _scatter(campaign: Campaign, options: dict, metric: str | None) -> dict | None:
    """Points of the metric-vs-human scatter (cached per report state and metric)."""
    if not metric:
        return None
    key = f"{report_cache_key(campaign, **options)}:scatter:{metric}"
    points = cache.get(key)
    if points is None:
        frame = human_and_metric(campaign, metric, split=options["split"], dataset=options["dataset"], system=options["system"])
        points = plots.scatter_points(frame, metric) or {}
        cache.set(key, points, CACHE_SECONDS)
    return points or None


@login_required
def dashboard(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = Campaign.objects.filter(slug=slug).first()
    if campaign is None or not can_read_campaign(request.user, campaign):
        raise Http404("No such campaign.")  # the same answer whether it exists or not
    try:
        options = _options(request)
    except ReportError as exc:
        return HttpResponseBadRequest(str(exc))
    fingerprint = report_cache_key(campaign, **options)
    if request.GET.get("fingerprint"):
        return JsonResponse({"fingerprint": fingerprint})
    report = get_or_compute_report(campaign, **options)
    correlations = report["correlations"] or {}
    metric = request.GET.get("metric")
    if metric not in correlations:
        # Default scatter: the complete metric that tracks humans best.
        ranked = sorted(((v["pearson"] or -2, m) for m, v in correlations.items() if v.get("status") == "complete"), reverse=True)
        metric = ranked[0][1] if ranked else None
    context = {
        "campaign": campaign,
        "report": report,
        "options": options,
        "metric": metric,
        "metrics": sorted(correlations),
        "charts": plots.chart_specs(report, _scatter(campaign, options, metric), metric),
        "tables": plots.dashboard_tables(report),
        "fingerprint": fingerprint,
        "live": campaign.status == CampaignStatus.RUNNING,
        "refresh_seconds": settings.FACTLAB_DASHBOARD_REFRESH_SECONDS,
        "splits": SPLITS,
        "datasets": Dataset.values,
    }
    return render(request, "metrics_service/dashboard.html", context)
