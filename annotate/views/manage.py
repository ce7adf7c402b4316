"""The campaign admin page (staff only), shared by every campaign kind: progress, workers, actions, exports."""
from __future__ import annotations

import io

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotate.models import Campaign, CampaignStatus, Participation, SentenceJudgement
from annotate.protocols import protocol_for
from annotate.providers import study_links
from annotate.safe_csv import SafeCsvWriter
from annotate.selectors import campaign_progress, worker_table
from annotate.services.bonuses import PAYMENT_FORMATS, ledger_csv
from annotate.services.campaigns import (
    CampaignStateError,
    allowed_actions,
    apply_campaign_action,
)
from annotate.services.crowd import recent_crowd_events
from annotate.services.participation import block_participation, unblock_participation
from annotate.services.pay_rules import APPROVAL_FORMATS, approval_csv
from annotate.services.readiness import study_readiness
from annotate.views.access import staff_required


def _csv_response(text: str, filename: str) -> HttpResponse:
    response = HttpResponse(text, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@staff_required
def campaign_list(request: HttpRequest) -> HttpResponse:
    rows = [{"campaign": c, "progress": campaign_progress(c)} for c in Campaign.objects.order_by("name", "pk")]
    return render(request, "annotate/manage/list.html", {"rows": rows})


@staff_required
def campaign_page(request: HttpRequest, slug: str) -> HttpResponse:
    return _render_campaign_page(request, get_object_or_404(Campaign, slug=slug))


def _render_campaign_page(request: HttpRequest, campaign: Campaign, *, crowd_form: forms.ModelForm | None = None) -> HttpResponse:
    slug = campaign.slug
    protocol = protocol_for(campaign.kind)
    review_name = getattr(protocol, "review_url_name", None)
    from annotate.metrics_port import metrics
    from annotate.views.study import study_context

    workers = worker_table(campaign)
    reliability, reliability_freshness = metrics().worker_reliability(campaign)  # stored by a worker, never fitted here
    for row in workers:
        row["reliability"] = reliability.get(row["worker"].pk)
    return render(request, "annotate/manage/campaign.html", {
        "campaign": campaign,
        "reliability_freshness": reliability_freshness,
        "scoring_jobs": metrics().scoring_jobs(campaign),
        "metric_choices": PAGE_METRICS,
        "progress": campaign_progress(campaign),
        "workers": workers,
        "review_url": reverse(f"annotate:{review_name}", args=[slug]) if review_name else None,
        "terms": protocol.terms,
        "entry_url": request.build_absolute_uri(reverse("annotate:campaign", args=[slug])),
        "study_links": study_links(campaign, request.build_absolute_uri(reverse("annotate:campaign", args=[slug]))),
        "crowd_form": crowd_form or CrowdSettingsForm(instance=campaign),
        "crowd_events": recent_crowd_events(campaign),
        "actions": allowed_actions(campaign),
        "readiness": study_readiness(campaign) if campaign.status != CampaignStatus.FINISHED else [],
        **study_context(campaign),  # uploads, jobs with cancel/retry, exports (annotate/views/study.py)
    }, status=400 if crowd_form is not None else 200)


class CrowdSettingsForm(forms.ModelForm):
    """The crowd-platform settings an admin edits on the campaign page (the API's campaign PATCH takes the same fields).

    The two codes must differ: a database constraint of Campaign, which the form's model validation reports.
    """

    class Meta:
        model = Campaign
        fields = (
            "crowd_platform", "prolific_completion_code", "prolific_screenout_code", "completion_min_items", "mturk_items_per_assignment",
            "new_crowd_workers_per_hour", "unattended_release_minutes",
        )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # A form (or script) that does not send the platform keeps the campaign's.
        self.fields["crowd_platform"].required = False

    def clean_crowd_platform(self) -> str:
        return self.cleaned_data.get("crowd_platform") or self.instance.crowd_platform


@staff_required
@require_POST
def crowd_settings(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign, slug=slug)
    form = CrowdSettingsForm(request.POST, instance=campaign)
    if not form.is_valid():
        messages.error(request, "The crowd settings were not saved: " + "; ".join(
            f"{field}: {' '.join(errors)}" if field != "__all__" else " ".join(errors) for field, errors in form.errors.items()
        ))
        return _render_campaign_page(request, Campaign.objects.get(pk=campaign.pk), crowd_form=form)
    form.save()
    messages.success(request, "Crowd settings saved.")
    return redirect("annotate:manage-campaign", slug)


@staff_required
@require_POST
def campaign_action(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign, slug=slug)
    action = request.POST.get("action", "")
    try:
        apply_campaign_action(campaign, action)
    except CampaignStateError as exc:
        reason = str(exc).rstrip(".")  # a readiness detail ends its own sentence
        messages.error(request, f"{reason[:1].upper()}{reason[1:]}.")
    else:
        messages.success(request, f"The campaign is now {campaign.get_status_display().lower()}.")
    return redirect("annotate:manage-campaign", slug)


# Metrics offered on the campaign page (model-based ones need local weights; see docs/scoring.md).
PAGE_METRICS = ("rouge", "bleu", "meteor", "bertscore", "coco", "bartscore")


@staff_required
@require_POST
def score(request: HttpRequest, slug: str) -> HttpResponse:
    """Submit one scoring job per selected metric; progress shows in the page's scoring table."""
    from annotate.metrics_port import metrics

    campaign = get_object_or_404(Campaign, slug=slug)
    metrics_chosen = [m for m in request.POST.getlist("metric") if m]
    unknown = [m for m in metrics_chosen if m not in PAGE_METRICS]
    if not metrics_chosen or unknown:
        messages.error(request, "Choose at least one metric" + (f" (unknown: {', '.join(unknown)})" if unknown else "") + ".")
        return redirect("annotate:manage-campaign", slug)
    for metric in metrics_chosen:
        try:
            job = metrics().submit_scoring_job(metric=metric, campaign=campaign, user=request.user)
        except ValueError as exc:
            messages.error(request, f"{metric}: {exc}")
        else:
            messages.success(request, f"{metric}: scoring job {job.pk} submitted ({job.total} summaries).")
    return redirect("annotate:manage-campaign", slug)


@staff_required
@require_POST
def unblock(request: HttpRequest, slug: str, participation_id: int) -> HttpResponse:
    participation = get_object_or_404(Participation, pk=participation_id, campaign__slug=slug)
    unblock_participation(participation)
    messages.success(request, f"{participation.worker} is unblocked.")
    return _back(request, slug)


@staff_required
@require_POST
def block(request: HttpRequest, slug: str, participation_id: int) -> HttpResponse:
    participation = get_object_or_404(Participation, pk=participation_id, campaign__slug=slug)
    reason = request.POST.get("reason", "").strip()
    if not reason:
        messages.error(request, f"Give a reason to block {participation.worker}: the worker sees it.")
    else:
        block_participation(participation, reason)
        messages.success(request, f"{participation.worker} is blocked: {reason}.")
    return _back(request, slug)


def _back(request: HttpRequest, slug: str) -> HttpResponse:
    """Back to the page the admin acted from: the people page (who is working now) or the campaign page."""
    return redirect("annotate:manage-people" if request.POST.get("back") == "people" else "annotate:manage-campaign", slug)


@staff_required
def bonuses_csv(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign, slug=slug)
    fmt = request.GET.get("format") or "generic"
    if fmt in APPROVAL_FORMATS:  # which submissions the crowd platform should approve or reject, and why
        return _csv_response(approval_csv(campaign, fmt), f"{slug}-{fmt}.csv")
    if fmt not in PAYMENT_FORMATS:
        return HttpResponse(f"Unknown format {fmt!r}; expected one of {', '.join(PAYMENT_FORMATS + APPROVAL_FORMATS)}.", status=400, content_type="text/plain")
    name = f"{slug}-payments.csv" if fmt == "generic" else f"{slug}-bonuses-{fmt}.csv"
    return _csv_response(ledger_csv(campaign, fmt=fmt), name)


@staff_required
def workers_csv(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign, slug=slug)
    out = io.StringIO()
    writer = SafeCsvWriter(out)
    writer.writerow(["worker", "provider", protocol_for(campaign.kind).terms["items_csv"], "trap_score", "traps", "entity_checks", "qualification", "qualification_score",
                     "blocked", "blocked_reason", "seconds_per_item", "seconds_per_sentence", "too_fast_items", "owed"])
    for row in worker_table(campaign):
        fmt = lambda v: "" if v is None else f"{v:.3f}"
        writer.writerow([row["name"], row["provider"], row["items"], fmt(row["trap_score"]), row["traps"], row["entity"],
                         row["qualification"], fmt(row["qualification_score"]), int(row["blocked"]), row["blocked_reason"],
                         fmt(row["seconds_per_item"]), fmt(row["seconds_per_sentence"]), row["too_fast"], f"{row['owed']:.2f}"])
    return _csv_response(out.getvalue(), f"{slug}-workers.csv")


@staff_required
def judgements_csv(request: HttpRequest, slug: str) -> HttpResponse:
    """Collected sentence judgements (never trap answers), with the worker's lead time per sentence."""
    campaign = get_object_or_404(Campaign, slug=slug)
    out = io.StringIO()
    writer = SafeCsvWriter(out)
    writer.writerow(["document", "summary_id", "system", "sentence_index", "worker", "factual", "categories", "lead_time_seconds", "assignment_too_fast"])
    rows = (
        SentenceJudgement.objects.filter(assignment__item__campaign=campaign)
        .select_related("summary__document", "worker__user", "assignment")
        .order_by("summary_id", "sentence_index", "worker_id")
    )
    for j in rows.iterator():
        writer.writerow([j.summary.document.external_id, j.summary_id, j.summary.system, j.sentence_index, str(j.worker),
                         int(j.factual), " ".join(j.categories), "" if j.lead_time_seconds is None else f"{j.lead_time_seconds:.2f}",
                         int(j.assignment.too_fast)])
    return _csv_response(out.getvalue(), f"{slug}-judgements.csv")
