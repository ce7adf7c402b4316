"""Campaign dashboard: figures of the analysis report (staff and researchers granted the campaign)."""
from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, render

from annotate.models import Campaign, CampaignStatus, Dataset
from annotate.roles import can_read_campaign
from metrics_service import plots
from metrics_service.report import (
    CACHE_SECONDS,
    ReportError,
    get_or_compute_report,
    load_analysis_data,
    normalize_options,
    report_cache_key,
)
from metrics_service.selectors import SPLITS


def _options(request: HttpRequest) -> dict:
    return normalize_options(
        split=request.GET.get("split") or "all",
        dataset=request.GET.get("dataset") or None,
        partial=request.GET.get("partial", "1") not in ("0", "false", "no"),
    )


def _figures(campaign: Campaign, report: dict, options: dict, metric: str | None) -> dict:
    """Render (or fetch from the cache) the dashboard's SVG figures for one report state."""
    key = f"{report_cache_key(campaign, **options)}:figures:{metric}"
    figures = cache.get(key)
    if figures is None:
        scatter = None
        if metric:
            data = load_analysis_data(campaign, split=options["split"], dataset=options["dataset"])
            scatter = plots.metric_scatter(data.human.join(data.scores[[metric]], how="left"), metric)
        figures = {
            "errors": plots.error_bars(report["error_distribution"]),
            "confusion": plots.confusion_heatmap(report["confusion"]),
            "scatter": scatter,
            "ablation": plots.ablation_bars(report["ablation"]),
            "consistency": plots.pairs_heatmap(report["meta_evaluation"], "consistency"),
            "roc_auc": plots.pairs_heatmap(report["meta_evaluation"], "roc_auc"),
        }
        cache.set(key, figures, CACHE_SECONDS)
    return figures


@login_required
def dashboard(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = Campaign.objects.filter(slug=slug).first()
    if campaign is None or not can_read_campaign(request.user, campaign):
        raise Http404("No such campaign.")  # the same answer whether it exists or not
    try:
        options = _options(request)
        report = get_or_compute_report(campaign, **options)
    except ReportError as exc:
        return HttpResponseBadRequest(str(exc))
    correlations = report["correlations"] or {}
    metric = request.GET.get("metric")
    if metric not in correlations:
        # Default scatter: the metric that tracks humans best.
        ranked = sorted(((v["pearson"] or -2, m) for m, v in correlations.items()), reverse=True)
        metric = ranked[0][1] if ranked else None
    context = {
        "campaign": campaign,
        "report": report,
        "options": options,
        "metric": metric,
        "metrics": sorted(correlations),
        "figures": _figures(campaign, report, options, metric),
        "live": campaign.status == CampaignStatus.RUNNING,
        "refresh_seconds": settings.FACTLAB_DASHBOARD_REFRESH_SECONDS,
        "splits": SPLITS,
        "datasets": Dataset.values,
    }
    return render(request, "metrics_service/dashboard.html", context)
