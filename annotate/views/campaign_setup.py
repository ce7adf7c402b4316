"""A campaign's settings page and its people page (staff only): what an admin sets up to run a study, and who
takes part in it (reviewers and researchers invited, workers at work now)."""
from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotate.forms import CampaignSettingsForm, InviteToCampaignForm
from annotate.models import Campaign, CampaignStatus
from annotate.services.people import campaign_access, invite_to_campaign, recently_active, revoke_from_campaign, working_now
from annotate.services.readiness import study_readiness
from annotate.services.researchers import ResearcherError
from annotate.views.access import staff_required


@staff_required
def settings_page(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign, slug=slug)
    form = CampaignSettingsForm(campaign, request.POST or None)
    if request.method == "POST":
        if form.is_valid() and form.save():
            messages.success(request, "Settings saved.")
            return redirect("annotate:manage-settings", slug)
        messages.error(request, "Nothing was saved: " + "; ".join(
            f"{form.fields[field].label if field in form.fields else 'settings'}: {' '.join(errors)}" for field, errors in form.errors.items()
        ))
    readiness = study_readiness(campaign) if campaign.status != CampaignStatus.FINISHED else []
    return render(request, "annotate/manage/settings.html", {
        "campaign": campaign, "form": form, "readiness": readiness, "open_items": [item for item in readiness if not item.ok],
    }, status=400 if form.is_bound and form.errors else 200)


@staff_required
def people_page(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign, slug=slug)
    form = InviteToCampaignForm(request.POST or None)
    invited = link = None
    if request.method == "POST" and form.is_valid():
        try:
            invited = invite_to_campaign(campaign, **form.cleaned_data)
        except ResearcherError as exc:
            field, _, message = str(exc).partition(": ")
            form.add_error(field if field in form.fields else None, message or str(exc))
        else:
            link = request.build_absolute_uri(invited.invitation.path) if invited.invitation else None
            form = InviteToCampaignForm()
    return render(request, "annotate/manage/people.html", {
        "campaign": campaign, "form": form, "invited": invited, "link": link,
        "access": campaign_access(campaign), "working": working_now(campaign), "recent": recently_active(campaign),
    }, status=400 if form.errors else 200)


@staff_required
@require_POST
def revoke_access(request: HttpRequest, slug: str, role: str, user_id: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign, slug=slug)
    try:
        revoke_from_campaign(campaign, role=role, user_id=user_id)
    except ResearcherError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"The {role}'s access to this campaign is taken back.")
    return redirect("annotate:manage-people", slug)
