"""Campaign dashboard: the analysis report as tables and small client-rendered charts.

The page embeds plain JSON (``json_script``) that ``static/factlab/dashboard.js`` draws as SVG in the
browser: no server-side plotting, no CDN, a few kilobytes instead of inline SVG. The report is the one a
worker stored (``metrics_service.figures``): the page says how fresh it is, and while a newer one is computed
or the campaign runs it asks ``?fingerprint=1`` (when the shown report was stored) every few seconds and
reloads only when a newer report is stored.
"""
from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from annotate.models import Campaign, CampaignStatus, Dataset
from annotate.protocols import protocol_for
from annotate.roles import can_read_campaign
from factlab.jobs import broker_available
from metrics_service import plots
from metrics_service.figures import report_figures, stored_scatter
from metrics_service.label_refits import RefitRefused, label_state, request_label_refit
from metrics_service.report import ReportError, normalize_options
from metrics_service.report_jobs import ReportJobLimit
from metrics_service.selectors import SPLITS

PENDING_REFRESH_SECONDS = 5


def _options(request: HttpRequest) -> dict:
    return normalize_options(
        split=request.GET.get("split") or "all",
        dataset=request.GET.get("dataset") or None,
        partial=request.GET.get("partial", "1") not in ("0", "false", "no"),
        spearman=request.GET.get("spearman") or "residuals",
        auc_references=request.GET.get("auc_references") or "per_pair",
        include_incomplete=request.GET.get("include_incomplete", "0") in ("1", "true", "yes"),
    )


@login_required
def dashboard(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = _readable_campaign(request, slug)
    try:
        options = _options(request)
        # The report a worker stored (a report job is queued when it is not current): never built here.
        report, freshness = report_figures(campaign, options, user_id=request.user.pk)
    except ReportError as exc:
        return HttpResponseBadRequest(str(exc))
    except ReportJobLimit as exc:
        return HttpResponse(str(exc), status=429, headers={"Retry-After": str(exc.retry_after)}, content_type="text/plain")
    # What the page shows: it reloads once a newer report is stored (new data, or the one it waits for).
    fingerprint = freshness.computed_at.isoformat() if report is not None and freshness.computed_at else ("current" if report else "")
    if request.GET.get("fingerprint"):
        return JsonResponse({"fingerprint": fingerprint})
    context = {
        "campaign": campaign, "report": report, "freshness": freshness, "options": options, "fingerprint": fingerprint,
        "live": campaign.status == CampaignStatus.RUNNING or not freshness.current,
        # While a report is computed the page looks for it more often than for new data.
        "refresh_seconds": settings.FACTLAB_DASHBOARD_REFRESH_SECONDS if freshness.current else PENDING_REFRESH_SECONDS,
        "splits": SPLITS, "datasets": Dataset.values,
        "labels": label_state(campaign) if protocol_for(campaign.kind).labels_sentences else None,
    }
    if report is not None:
        correlations = report["correlations"] or {}
        metric = request.GET.get("metric")
        if metric not in correlations:
            # Default scatter: the complete metric that tracks humans best.
            ranked = sorted(((v["pearson"] or -2, m) for m, v in correlations.items() if v.get("status") == "complete"), reverse=True)
            metric = ranked[0][1] if ranked else None
        context.update({
            "metric": metric,
            "metrics": sorted(correlations),
            "charts": plots.chart_specs(report, stored_scatter(campaign, options, metric), metric),
            "tables": plots.dashboard_tables(report),
        })
    return render(request, "metrics_service/dashboard.html", context)


def _readable_campaign(request: HttpRequest, slug: str) -> Campaign:
    campaign = Campaign.objects.filter(slug=slug).first()
    if campaign is None or not can_read_campaign(request.user, campaign):
        raise Http404("No such campaign.")  # the same answer whether it exists or not
    return campaign


@login_required
@require_POST
def refit_labels(request: HttpRequest, slug: str) -> HttpResponse:
    """The dashboard's "Refit now": a worker refits the campaign's label model on all its judgements."""
    campaign = _readable_campaign(request, slug)
    if not broker_available():
        messages.error(request, "No task queue answers, so no worker can refit the labels now; try again once it is back.")
    else:
        try:
            queued = request_label_refit(campaign)
        except RefitRefused as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, "A worker refits the sentence labels now; reload this page in a minute to see them."
                             if queued else "A refit asked for in the last minute is still to come; it will see the same data.")
    return redirect("metrics_service:dashboard", slug=campaign.slug)
