"""The campaign entry: ``/c/<slug>/`` sends a worker to the step they are at (tutorial, qualification, task)
using the campaign protocol's URL names, so every kind shares one entry flow; a crowd platform's link arrives
here too (:mod:`annotate.views.arrival`). Also the home page, the claim behind every task page and the task
page's heartbeat.
"""
from __future__ import annotations

from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotate.models import (
    Assignment,
    AssignmentStatus,
    Campaign,
    CampaignStatus,
    CrowdEventKind,
    Participation,
    QualificationStatus,
    Worker,
)
from annotate.protocols import Protocol, protocol_for
from annotate.providers import ArrivalError, detect_provider, has_study_token
from annotate.services.assignments import mark_assignment_seen, record_external_assignment_id, request_assignment
from annotate.services.crowd import record_crowd_event
from annotate.services.errors import WorkflowError
from annotate.services.participation import (
    client_address,
    eligibility_problem,
    get_participation,
    qualification_attempts_left,
)

from .arrival import (
    campaign_or_404,
    crowd_arrival,
    crowd_campaign_slugs,
    crowd_context,
    is_crowd_identity,
    refuse,
    remote_ip,
    worker_for_user,
)
from .exits import exit_context, mturk_assignment_full


def protocol_url(protocol: Protocol, attr: str, campaign: Campaign) -> str | None:
    """The URL of one of the protocol's pages (``attr``: the attribute naming it), or None when it has none."""
    name = getattr(protocol, attr, None)
    return reverse(f"annotate:{name}", args=[campaign.slug]) if name else None


def next_step(request: HttpRequest, campaign: Campaign, worker: Worker) -> HttpResponse:
    """Send the worker to the step they are at: blocked/closed explanation, tutorial, qualification, task."""
    protocol = protocol_for(campaign.kind)
    participation = get_participation(worker, campaign)
    problem = eligibility_problem(participation, for_main_task=False)
    if problem:
        blocked = participation.is_blocked or worker.is_blocked
        return render(request, "annotate/blocked.html", {
            "campaign": campaign, "problem": problem, "blocked": blocked, **exit_context(request, participation),
        }, status=403)
    tutorial = protocol_url(protocol, "tutorial_url_name", campaign)
    if tutorial and campaign.tutorial_required and not participation.tutorial_done:
        return redirect(tutorial)
    qualification = protocol_url(protocol, "qualification_url_name", campaign)
    if qualification and campaign.qualification_required and participation.qualification_status != QualificationStatus.PASSED:
        return redirect(qualification)
    remaining = eligibility_problem(participation)
    if remaining:
        return render(request, "annotate/blocked.html", {
            "campaign": campaign, "problem": remaining, "blocked": False, **exit_context(request, participation),
        }, status=403)
    return redirect(reverse(f"annotate:{protocol.task_url_name}", args=[campaign.slug]))


def claim_assignment(
    request: HttpRequest, campaign: Campaign, *, nothing_left: str, participation: Participation | None = None,
) -> tuple[Assignment | None, Participation, HttpResponse | None]:
    """The worker's current or next assignment for a task page (with the worker's participation, which the page
    shows figures of), or the response to show instead. ``participation``: the worker's, read with ``owed_total``
    already (``task_page_participation``), else read here.

    A worker who may not work now goes back to the campaign entry (which explains why); when no work is
    left the page says ``nothing_left`` and links to the end of the campaign. A worker who arrived from a
    crowd platform has its assignment (MTurk) or session (Prolific) id recorded on the assignment.
    """
    worker = worker_for_user(request.user)
    arrival = crowd_context(request, campaign)
    if participation is None:
        participation = get_participation(worker, campaign, with_owed=True)  # the page shows what the ledger owes
    hit_full = mturk_assignment_full(participation, arrival)
    if hit_full is not None:
        return None, participation, hit_full
    try:
        assignment = request_assignment(worker, campaign, participation, network=client_address(request))
    except WorkflowError:
        return None, participation, redirect("annotate:campaign", campaign.slug)
    if assignment is None:
        return None, participation, render(request, "annotate/message.html", {
            "title": "Nothing left to do", "message": nothing_left + " Thank you!",
            "next_url": reverse("annotate:campaign-done", args=[campaign.slug]),
            **exit_context(request, participation, no_work=True),
        })
    record_external_assignment_id(assignment, arrival.get("assignment_id") or arrival.get("session_id") or "")
    return assignment, participation, None


def campaign_entry(request: HttpRequest, slug: str) -> HttpResponse:
    """Entry point of a campaign, for signed-in users and for workers arriving from a crowd platform."""
    campaign = campaign_or_404(slug)
    provider = detect_provider(request)
    if provider is not None:
        if not has_study_token(request, campaign):
            record_crowd_event(campaign, CrowdEventKind.BAD_LINK, provider=provider.name, ip=remote_ip(request) or None)
            return refuse(request, "This study link is not valid", (
                "The link you followed lacks this study's access token, or carries a wrong one. Please use the link "
                "given on the crowd platform's study page; if it still fails, contact the researcher."
            ), 403)
        try:
            arrival = provider.worker_identity(request)
        except ArrivalError as exc:
            return refuse(request, "This link is incomplete", f"The platform link cannot be used: {exc}.", 400)
        if arrival.preview:
            preview = protocol_url(protocol_for(campaign.kind), "preview_url_name", campaign)
            if preview:
                return redirect(preview)
            return render(request, "annotate/preview.html", {"campaign": campaign})
        return crowd_arrival(request, campaign, arrival, then=next_step)
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    return next_step(request, campaign, worker_for_user(request.user))


def home(request: HttpRequest) -> HttpResponse:
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    worker = Worker.objects.filter(user=request.user).first()
    if is_crowd_identity(worker):
        # A crowd identity never sees other campaigns: its own study, or the way back to its link.
        slugs = crowd_campaign_slugs(request)
        if len(slugs) == 1:
            return redirect("annotate:campaign", slugs[0])
        if not slugs:
            return refuse(request, "Open your study link", (
                "Your session has ended. Please open the study link again from the crowd platform's study page."
            ), 200)
    campaigns = Campaign.objects.order_by("name", "pk") if request.user.is_staff else Campaign.objects.filter(status=CampaignStatus.RUNNING).order_by("name", "pk")
    if is_crowd_identity(worker):
        campaigns = campaigns.filter(slug__in=crowd_campaign_slugs(request))
    rows = []
    for campaign in campaigns:
        participation = campaign.participations.filter(worker=worker).first() if worker else None
        rows.append({
            "campaign": campaign,
            "participation": participation,
            "attempts_left": qualification_attempts_left(participation) if participation else campaign.qualification_attempts,
        })
    return render(request, "annotate/home.html", {"rows": rows})


@require_POST
def assignment_heartbeat(request: HttpRequest, slug: str, assignment_id: int) -> HttpResponse:
    """The task page reports that it is open (see ``release_unattended_assignments``): 204, or 410 when the
    assignment is no longer the worker's to submit."""
    if not request.user.is_authenticated:
        return JsonResponse({"error": "not_signed_in"}, status=403)
    if not mark_assignment_seen(assignment_id, request.user.pk, slug):
        # A page shown again after its item was submitted (Back, a restored tab) says so, truthfully.
        submitted = Assignment.objects.filter(
            pk=assignment_id, item__campaign__slug=slug, worker__user=request.user, status=AssignmentStatus.SUBMITTED,
        ).exists()
        if submitted:
            return JsonResponse({
                "error": "submitted", "detail": "You already submitted this item: your answers are saved.",
                "next": reverse("annotate:campaign", args=[slug]),
            }, status=410)
        return JsonResponse({
            "error": "gone", "detail": "This item is no longer reserved for you (the page was left unattended).",
            "next": reverse("annotate:campaign", args=[slug]),
        }, status=410)
    return HttpResponse(status=204)
