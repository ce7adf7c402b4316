"""Researchers: creation, one-time invitation links, and what they may import.

An invitation is Django's password-reset token (``default_token_generator``) for an account created
inactive with an unusable password: the token hashes the password and the last login, so it stops working
the moment the invitee sets a password (one-time), and it expires after ``PASSWORD_RESET_TIMEOUT``.
No secret is stored: the link itself is the credential.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError
from django.db import transaction
from django.urls import reverse
from django.utils.encoding import force_bytes, force_str
from django.utils.http import urlsafe_base64_decode, urlsafe_base64_encode

from annotate.models import Campaign, CampaignStatus
from annotate.roles import ADMIN, RESEARCHER, make_researcher, role_of


class ResearcherError(ValueError):
    """Bad input for a researcher operation; the message names what is wrong."""


class InvitationInvalid(ValueError):
    """The invitation link is unknown, already used or expired."""


@dataclass(frozen=True)
class Invitation:
    username: str
    uid: str
    token: str
    path: str  # /accounts/invite/<uid>/<token>/
    expires_in_seconds: int


def invitation_for(user) -> Invitation:
    """A fresh one-time invitation link for ``user`` (valid until they set a password, or it expires)."""
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    token = default_token_generator.make_token(user)
    path = reverse("annotate:accept-invitation", kwargs={"uidb64": uid, "token": token})
    return Invitation(user.get_username(), uid, token, path, int(settings.PASSWORD_RESET_TIMEOUT))


def _campaigns(slugs: Iterable[str]) -> list[Campaign]:
    slugs = list(dict.fromkeys(slugs))
    found = {c.slug: c for c in Campaign.objects.filter(slug__in=slugs)}
    missing = [s for s in slugs if s not in found]
    if missing:
        raise ResearcherError(f"no campaign with slug {', '.join(repr(s) for s in missing)}")
    return [found[s] for s in slugs]


def create_researcher(username: str, *, email: str = "", password: str | None = None, campaigns: Iterable[str] = ()):
    """Create the researcher ``username`` (or make an existing non-staff user one) and grant ``campaigns``.

    Without ``password`` a new account is inactive until its invitation is accepted
    (:func:`invitation_for`, :func:`accept_invitation`). Raises ``ResearcherError`` for an unknown
    campaign, a staff username or a password the validators refuse; nothing is stored then.
    """
    username = (username or "").strip()
    if not username:
        raise ResearcherError("username: required")
    User = get_user_model()
    granted = _campaigns(campaigns)
    with transaction.atomic():
        user = User.objects.filter(username=username).first()
        if user is not None and user.is_staff:
            raise ResearcherError(f"username: {username!r} is an admin account")
        if user is None:
            user = User(username=username, email=email or "", is_active=password is not None)
            if password is None:
                user.set_unusable_password()
        if password is not None:
            try:
                validate_password(password, user)
            except ValidationError as exc:
                raise ResearcherError("password: " + " ".join(exc.messages)) from exc
            user.set_password(password)
            user.is_active = True
        if email:
            user.email = email
        user.save()
        make_researcher(user)
        for campaign in granted:
            campaign.researchers.add(user)
    return user


def _invited_user(uidb64: str, token: str):
    User = get_user_model()
    try:
        user = User.objects.get(pk=force_str(urlsafe_base64_decode(uidb64)))
    except (TypeError, ValueError, OverflowError, User.DoesNotExist):
        user = None
    if user is None or user.is_staff or not default_token_generator.check_token(user, token):
        raise InvitationInvalid("this invitation link is unknown, already used or expired; ask an admin for a new one")
    return user


def check_invitation(uidb64: str, token: str):
    """The invited user, or ``InvitationInvalid``."""
    return _invited_user(uidb64, token)


def accept_invitation(uidb64: str, token: str, password: str):
    """Set the invitee's password and activate the account; the link stops working (one-time).

    Raises ``InvitationInvalid`` for a bad link and ``ResearcherError`` for a password the validators refuse.
    """
    with transaction.atomic():
        user = _invited_user(uidb64, token)
        user = type(user).objects.select_for_update().get(pk=user.pk)
        if not default_token_generator.check_token(user, token):  # a concurrent accept won
            raise InvitationInvalid("this invitation link was already used")
        try:
            validate_password(password, user)
        except ValidationError as exc:
            raise ResearcherError("password: " + " ".join(exc.messages)) from exc
        user.set_password(password)
        user.is_active = True
        # The role (researcher, a campaign's reviewer) was granted with the invitation: accepting adds none.
        user.save(update_fields=["password", "is_active"])
    return user


# --------------------------------------------------------------------------- self-service imports


def check_import_allowed(user, *, kind: str, campaign_slug: str) -> None:
    """May ``user`` import a ``kind`` ("dataset" or "scores") file into ``campaign_slug``?

    Admins may import anything. Researchers may upload scores to campaigns granted to them, and datasets
    into a new campaign (it is then granted to them) or a draft campaign granted to them. Raises
    ``Campaign.DoesNotExist`` when the campaign is not theirs to see (the API answers 404, revealing
    nothing) and ``ResearcherError`` for other refusals.
    """
    role = role_of(user)
    if role == ADMIN:
        return
    if role != RESEARCHER:
        raise ResearcherError("only researchers and admins may import")
    campaign = Campaign.objects.filter(slug=campaign_slug).first()
    granted = campaign is not None and campaign.researchers.filter(pk=user.pk).exists()
    if kind == "scores":
        if not granted:
            raise Campaign.DoesNotExist(f"no campaign '{campaign_slug}' among the campaigns granted to you")
        return
    if campaign is None:
        return
    if not granted:
        raise ResearcherError(f"campaign: the slug '{campaign_slug}' is taken; choose another to create a campaign")
    if campaign.status != CampaignStatus.DRAFT:
        raise ResearcherError(f"campaign: '{campaign_slug}' is {campaign.status}; only draft campaigns take new documents")


def grant_imported_campaign(user, campaign_slug: str) -> None:
    """After a researcher's dataset import: the campaign (possibly just created) is granted to them."""
    if user is not None and role_of(user) == RESEARCHER:
        Campaign.objects.get(slug=campaign_slug).researchers.add(user)
