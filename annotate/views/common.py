"""Pages shared by every campaign kind: home, the campaign entry (next step), crowd arrival, completion.

``/c/<slug>/`` decides where a worker goes next using the campaign protocol's URL names, so FRANK and
BUMP campaigns share one entry flow. Crowd platform details (MTurk assignment, Prolific session) are
kept in the session under ``crowd`` -> campaign slug, for the completion page.
"""
from __future__ import annotations

from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from annotate.models import (
    Assignment,
    Campaign,
    CampaignStatus,
    QualificationStatus,
    Worker,
)
from annotate.protocols import Protocol, protocol_for
from annotate.providers import (
    ArrivalError,
    detect_provider,
    provider_named,
    worker_for_arrival,
)
from annotate.services.assignments import (
    current_assignment,
    record_external_assignment_id,
    request_assignment,
)
from annotate.services.errors import WorkflowError
from annotate.services.participation import (
    eligibility_problem,
    get_participation,
    qualification_attempts_left,
)

CROWD_SESSION_KEY = "crowd"


def worker_for_user(user) -> Worker:
    """The worker record of a signed-in user (local accounts get one on their first visit)."""
    worker, _ = Worker.objects.get_or_create(user=user)
    return worker


def crowd_context(request: HttpRequest, campaign: Campaign) -> dict[str, str]:
    return request.session.get(CROWD_SESSION_KEY, {}).get(campaign.slug, {})


def claim_assignment(request: HttpRequest, campaign: Campaign, *, nothing_left: str) -> tuple[Assignment | None, HttpResponse | None]:
    """The worker's current or next assignment for a task page, or the response to show instead.

    A worker who may not work now goes back to the campaign entry (which explains why); when no work is
    left the page says ``nothing_left`` and links to the end of the campaign. A worker who arrived from a
    crowd platform has its assignment (MTurk) or session (Prolific) id recorded on the assignment.
    """
    try:
        assignment = request_assignment(worker_for_user(request.user), campaign)
    except WorkflowError:
        return None, redirect("annotate:campaign", campaign.slug)
    if assignment is None:
        return None, render(request, "annotate/message.html", {
            "title": "Nothing left to do", "message": nothing_left + " Thank you!",
            "next_url": reverse("annotate:campaign-done", args=[campaign.slug]),
        })
    arrival = crowd_context(request, campaign)
    record_external_assignment_id(assignment, arrival.get("assignment_id") or arrival.get("session_id") or "")
    return assignment, None


def protocol_url(protocol: Protocol, attr: str, campaign: Campaign) -> str | None:
    name = getattr(protocol, attr, None)
    return reverse(f"annotate:{name}", args=[campaign.slug]) if name else None


def next_step(request: HttpRequest, campaign: Campaign, worker: Worker) -> HttpResponse:
    """Send the worker to the step they are at: blocked/closed explanation, tutorial, qualification, task."""
    protocol = protocol_for(campaign.kind)
    participation = get_participation(worker, campaign)
    problem = eligibility_problem(participation, for_main_task=False)
    if problem:
        blocked = participation.is_blocked or worker.is_blocked
        return render(request, "annotate/blocked.html", {"campaign": campaign, "problem": problem, "blocked": blocked}, status=403)
    tutorial = protocol_url(protocol, "tutorial_url_name", campaign)
    if tutorial and campaign.tutorial_required and not participation.tutorial_done:
        return redirect(tutorial)
    qualification = protocol_url(protocol, "qualification_url_name", campaign)
    if qualification and campaign.qualification_required and participation.qualification_status != QualificationStatus.PASSED:
        return redirect(qualification)
    remaining = eligibility_problem(participation)
    if remaining:
        return render(request, "annotate/blocked.html", {"campaign": campaign, "problem": remaining, "blocked": False}, status=403)
    return redirect(reverse(f"annotate:{protocol.task_url_name}", args=[campaign.slug]))


def campaign_entry(request: HttpRequest, slug: str) -> HttpResponse:
    """Entry point of a campaign, for signed-in users and for workers arriving from a crowd platform."""
    campaign = get_object_or_404(Campaign, slug=slug)
    provider = detect_provider(request)
    if provider is not None:
        try:
            arrival = provider.worker_identity(request)
        except ArrivalError as exc:
            return render(request, "annotate/message.html", {"title": "This link is incomplete", "message": f"The platform link cannot be used: {exc}."}, status=400)
        if arrival.preview:
            preview = protocol_url(protocol_for(campaign.kind), "preview_url_name", campaign)
            if preview:
                return redirect(preview)
            return render(request, "annotate/preview.html", {"campaign": campaign})
        worker = worker_for_arrival(arrival)
        if not request.user.is_authenticated or request.user.pk != worker.user_id:
            login(request, worker.user, backend="django.contrib.auth.backends.ModelBackend")
        crowd = request.session.get(CROWD_SESSION_KEY, {})
        crowd[campaign.slug] = {"provider": arrival.provider, **arrival.context}
        request.session[CROWD_SESSION_KEY] = crowd
        return next_step(request, campaign, worker)
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    return next_step(request, campaign, worker_for_user(request.user))


@login_required
def campaign_done(request: HttpRequest, slug: str) -> HttpResponse:
    """After a submitted item: continue with another one, or finish (back to the crowd platform)."""
    campaign = get_object_or_404(Campaign, slug=slug)
    context = crowd_context(request, campaign)
    provider = provider_named(context.get("provider", ""))
    completion = provider.completion(context, campaign) if provider else None
    worker = worker_for_user(request.user)
    participation = get_participation(worker, campaign)
    # MTurk: one HIT is one item, so the HIT is submitted right away.
    one_item = context.get("provider") == "mturk"
    return render(request, "annotate/done.html", {
        "campaign": campaign,
        "completion": completion,
        "can_continue": not one_item and eligibility_problem(participation) is None,
        "participation": participation,
        "blocked": participation.is_blocked,
        "just_submitted": request.GET.get("submitted") == "1",
        "has_current": current_assignment(worker, campaign) is not None,
    })


def home(request: HttpRequest) -> HttpResponse:
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    campaigns = Campaign.objects.order_by("name") if request.user.is_staff else Campaign.objects.filter(status=CampaignStatus.RUNNING).order_by("name")
    rows = []
    worker = Worker.objects.filter(user=request.user).first()
    for campaign in campaigns:
        participation = campaign.participations.filter(worker=worker).first() if worker else None
        rows.append({
            "campaign": campaign,
            "participation": participation,
            "attempts_left": qualification_attempts_left(participation) if participation else campaign.qualification_attempts,
        })
    return render(request, "annotate/home.html", {"rows": rows})
