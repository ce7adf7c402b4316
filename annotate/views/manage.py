"""The campaign admin page (staff only), shared by every campaign kind: progress, workers, actions, exports."""
from __future__ import annotations

import functools
import io

from django import forms
from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotate.exporters.tabular import SafeCsvWriter
from annotate.models import Campaign, CampaignStatus, Participation, SentenceJudgement
from annotate.protocols import protocol_for
from annotate.providers import study_links
from annotate.selectors import campaign_progress, worker_table
from annotate.services.bonuses import PAYMENT_FORMATS, ledger_csv
from annotate.services.campaigns import CampaignStateError, set_campaign_status
from annotate.services.crowd import recent_crowd_events
from annotate.services.participation import block_participation, unblock_participation

ACTIONS = {"start": CampaignStatus.RUNNING, "pause": CampaignStatus.PAUSED, "resume": CampaignStatus.RUNNING, "finish": CampaignStatus.FINISHED}


def staff_required(view):
    @functools.wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs):
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not request.user.is_staff:
            raise PermissionDenied("Only campaign admins may open this page.")
        return view(request, *args, **kwargs)

    return wrapped


def _csv_response(text: str, filename: str) -> HttpResponse:
    response = HttpResponse(text, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@staff_required
def campaign_list(request: HttpRequest) -> HttpResponse:
    rows = [{"campaign": c, "progress": campaign_progress(c)} for c in Campaign.objects.order_by("name")]
    return render(request, "annotate/manage/list.html", {"rows": rows})


@staff_required
def campaign_page(request: HttpRequest, slug: str) -> HttpResponse:
    return _render_campaign_page(request, get_object_or_404(Campaign, slug=slug))


def _render_campaign_page(request: HttpRequest, campaign: Campaign, *, crowd_form: forms.ModelForm | None = None) -> HttpResponse:
    slug = campaign.slug
    protocol = protocol_for(campaign.kind)
    review_name = getattr(protocol, "review_url_name", None)
    from metrics_service.label_reliability import campaign_worker_reliability
    from metrics_service.services import campaign_scoring_jobs

    workers = worker_table(campaign)
    reliability = campaign_worker_reliability(campaign)
    for row in workers:
        row["reliability"] = reliability.get(row["worker"].pk)
    return render(request, "annotate/manage/campaign.html", {
        "campaign": campaign,
        "scoring_jobs": campaign_scoring_jobs(campaign),
        "metric_choices": PAGE_METRICS,
        "progress": campaign_progress(campaign),
        "workers": workers,
        "review_url": reverse(f"annotate:{review_name}", args=[slug]) if review_name else None,
        "terms": protocol.terms,
        "entry_url": request.build_absolute_uri(reverse("annotate:campaign", args=[slug])),
        "study_links": study_links(campaign, request.build_absolute_uri(reverse("annotate:campaign", args=[slug]))),
        "crowd_form": crowd_form or CrowdSettingsForm(instance=campaign),
        "crowd_events": recent_crowd_events(campaign),
        "actions": [a for a, s in ACTIONS.items() if _allowed(campaign, a, s)],
    }, status=400 if crowd_form is not None else 200)


class CrowdSettingsForm(forms.ModelForm):
    """The crowd-platform settings an admin edits on the campaign page (the API's campaign PATCH takes the same fields)."""

    class Meta:
        model = Campaign
        fields = (
            "prolific_completion_code", "prolific_screenout_code", "completion_min_items", "mturk_items_per_assignment",
            "new_crowd_workers_per_hour", "unattended_release_minutes",
        )

    def clean(self):
        data = super().clean()
        completion, screenout = data.get("prolific_completion_code"), data.get("prolific_screenout_code")
        if completion and screenout and completion == screenout:
            raise forms.ValidationError("The screen-out code must differ from the completion code.")
        return data


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


def _allowed(campaign: Campaign, action: str, status: str) -> bool:
    from annotate.services.campaigns import ALLOWED_TRANSITIONS

    if action == "start" and campaign.status != CampaignStatus.DRAFT:
        return False
    if action == "resume" and campaign.status != CampaignStatus.PAUSED:
        return False
    return status in ALLOWED_TRANSITIONS.get(campaign.status, set())


@staff_required
@require_POST
def campaign_action(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign, slug=slug)
    action = request.POST.get("action", "")
    if action not in ACTIONS:
        messages.error(request, f"Unknown action {action!r}; expected one of {', '.join(ACTIONS)}.")
    elif not _allowed(campaign, action, ACTIONS[action]):
        messages.error(request, f"Cannot {action} the campaign: it is {campaign.get_status_display().lower()}.")
    else:
        try:
            set_campaign_status(campaign, ACTIONS[action])
            messages.success(request, f"The campaign is now {campaign.get_status_display().lower()}.")
        except CampaignStateError as exc:
            messages.error(request, f"Cannot {action} the campaign: {exc}.")
    return redirect("annotate:manage-campaign", slug)


# Metrics offered on the campaign page (model-based ones need local weights; see README "Scoring summaries").
PAGE_METRICS = ("rouge", "bleu", "meteor", "bertscore", "coco", "bartscore")


@staff_required
@require_POST
def score(request: HttpRequest, slug: str) -> HttpResponse:
    """Submit one scoring job per selected metric; progress shows in the page's scoring table."""
    from metrics_service.services import submit_scoring_job

    campaign = get_object_or_404(Campaign, slug=slug)
    metrics_chosen = [m for m in request.POST.getlist("metric") if m]
    unknown = [m for m in metrics_chosen if m not in PAGE_METRICS]
    if not metrics_chosen or unknown:
        messages.error(request, "Choose at least one metric" + (f" (unknown: {', '.join(unknown)})" if unknown else "") + ".")
        return redirect("annotate:manage-campaign", slug)
    for metric in metrics_chosen:
        try:
            job = submit_scoring_job(metric=metric, campaign=campaign, user=request.user)
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
    return redirect("annotate:manage-campaign", slug)


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
    return redirect("annotate:manage-campaign", slug)


@staff_required
def bonuses_csv(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign, slug=slug)
    fmt = request.GET.get("format") or "generic"
    if fmt not in PAYMENT_FORMATS:
        return HttpResponse(f"Unknown format {fmt!r}; expected one of {', '.join(PAYMENT_FORMATS)}.", status=400, content_type="text/plain")
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
