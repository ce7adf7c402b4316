"""Invited accounts: the admins' researcher invitation page and the invitee's one-time page to set a password."""
from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth import get_user_model, login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from annotate.models import Campaign
from annotate.protocols import protocol_for
from annotate.roles import RESEARCHER_GROUP
from annotate.services.researchers import (
    InvitationInvalid,
    ResearcherError,
    accept_invitation,
    check_invitation,
    create_researcher,
    invitation_for,
)

from .access import staff_required


class InviteForm(forms.Form):
    username = forms.CharField(max_length=150)
    email = forms.EmailField(required=False)
    campaigns = forms.ModelMultipleChoiceField(
        queryset=Campaign.objects.order_by("name", "pk"), required=False, to_field_name="slug",
        help_text="Campaigns the researcher may read, export, score and upload metric scores to.",
    )

    def clean_username(self) -> str:
        username = self.cleaned_data["username"].strip()
        if get_user_model().objects.filter(username=username).exists():
            raise forms.ValidationError(f"{username!r} already exists")
        return username


class SetPasswordForm(forms.Form):
    password1 = forms.CharField(label="Password", widget=forms.PasswordInput, strip=False)
    password2 = forms.CharField(label="Password again", widget=forms.PasswordInput, strip=False)

    def clean(self):
        data = super().clean()
        if data.get("password1") != data.get("password2"):
            raise forms.ValidationError("the two passwords differ")
        return data


@staff_required
def researchers_page(request: HttpRequest) -> HttpResponse:
    """List researchers; the form creates one and shows its one-time invitation link (once)."""
    link = None
    form = InviteForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            user = create_researcher(
                form.cleaned_data["username"], email=form.cleaned_data["email"],
                campaigns=[c.slug for c in form.cleaned_data["campaigns"]],
            )
        except ResearcherError as exc:
            form.add_error(None, str(exc))
        else:
            link = request.build_absolute_uri(invitation_for(user).path)
            form = InviteForm()
    researchers = (
        get_user_model().objects.filter(groups__name=RESEARCHER_GROUP).order_by("username").prefetch_related("granted_campaigns")
    )
    return render(request, "annotate/manage/researchers.html", {"form": form, "link": link, "researchers": researchers})


def _landing(request: HttpRequest, user) -> HttpResponse:
    """Where an invitee starts: a campaign's reviewer at its review queue, anyone else at home."""
    for campaign in user.reviewed_campaigns.order_by("name", "pk"):
        review_name = protocol_for(campaign.kind).review_url_name
        if review_name:
            messages.success(request, f"Your password is set. You review {campaign.name}: its review queue is below.")
            return redirect(f"annotate:{review_name}", campaign.slug)
    messages.success(request, "Your password is set. The API docs are at /api/docs/.")
    return redirect("annotate:home")


def accept_invitation_page(request: HttpRequest, uidb64: str, token: str) -> HttpResponse:
    """The invitee chooses a password; the link works once, then the account signs in normally."""
    try:
        invited = check_invitation(uidb64, token)
    except InvitationInvalid as exc:
        return render(request, "annotate/message.html", {"title": "Invitation", "message": str(exc)}, status=400)
    form = SetPasswordForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            user = accept_invitation(uidb64, token, form.cleaned_data["password1"])
        except (InvitationInvalid, ResearcherError) as exc:
            form.add_error(None, str(exc))
        else:
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            return _landing(request, user)
    return render(request, "annotate/accept_invitation.html", {"form": form, "invited": invited})
