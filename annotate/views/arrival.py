"""Who the worker is: a signed-in account's worker record, and a crowd platform's arrival signed in as one.

Crowd platform details (MTurk assignment, Prolific session) are kept in the session under ``crowd`` ->
campaign slug, for the task pages and the exits (:mod:`annotate.views.exits`).

A crowd arrival is accepted only when (in this order): the link carries the campaign's study token (checked by
the entry, :mod:`annotate.views.entry`); the platform ids are well formed; the browser is not signed in with a
non-crowd account (staff, researcher, reviewer, local annotator: never replaced) nor as another crowd identity
(an identity never changes inside a session: both get a page that offers to sign out and come back to the
link); a known id comes back in the browser that created it (signed cookie ``CROWD_COOKIE``), else it is
refused and logged for the admin; a new id stays within the per-address rate and the campaign's hourly cap
(429 otherwise).
"""
from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.contrib.auth import login
from django.core import signing
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django_ratelimit import ALL
from django_ratelimit.core import get_usage

from annotate.models import Campaign, CrowdEventKind, Worker
from annotate.providers import Arrival, worker_for_arrival
from annotate.ratelimits import ip_key
from annotate.rows import CompiledQuery
from annotate.services.crowd import (
    CampaignCapReached,
    create_identity_within_cap,
    record_crowd_event,
)

CROWD_SESSION_KEY = "crowd"
#: Signed cookie listing the crowd identities ("provider:id") this browser created.
CROWD_COOKIE = "factlab_crowd"
CROWD_COOKIE_SALT = "factlab.crowd-identity"
CROWD_COOKIE_MAX_IDS = 20
CROWD_COOKIE_MAX_AGE = 90 * 24 * 3600


def campaign_or_404(slug: str) -> Campaign:
    """The campaign a worker page's slug names (404 when none), read by a query compiled once per process: the page
    after every submit and its link to the next item (the campaign's entry) read it, and compiling the query for
    the campaign's ~60 columns cost those pages more CPU than anything else they do."""
    campaign = _CAMPAIGN_BY_SLUG.row(slug=slug)
    if campaign is None:
        raise Http404("No such campaign.")
    return campaign


_CAMPAIGN_BY_SLUG = CompiledQuery(lambda slug: Campaign.objects.filter(slug=slug)[:1], slug=str)


def worker_for_user(user) -> Worker:
    """The worker record of a signed-in user (local accounts get one on their first visit)."""
    try:
        return user.worker  # loaded with the user by annotate.auth_backend
    except Worker.DoesNotExist:
        worker, _ = Worker.objects.get_or_create(user=user)
        return worker


def crowd_context(request: HttpRequest, campaign: Campaign) -> dict[str, str]:
    return request.session.get(CROWD_SESSION_KEY, {}).get(campaign.slug, {})


def is_crowd_identity(worker: Worker | None) -> bool:
    return worker is not None and bool(worker.provider)


def crowd_campaign_slugs(request: HttpRequest) -> list[str]:
    """The campaigns whose study links this browser's crowd identity came in through."""
    return sorted(request.session.get(CROWD_SESSION_KEY, {}))


def other_campaign_refusal(request: HttpRequest, slug: str, worker: Worker | None) -> HttpResponse | None:
    """A crowd identity works only in the campaigns of its study links: any other campaign is refused
    (it would not be paid there, and a platform id must not wander into other studies)."""
    if not is_crowd_identity(worker) or slug in crowd_campaign_slugs(request):
        return None
    return refuse(request, "This study is not yours", (
        "You are taking part through a crowd-platform study, and this page belongs to another study. "
        "Please go back to your own study; to take part in another one, use that study's own link on the platform."
    ), 403, **_own_study_link(request))


def _own_study_link(request: HttpRequest) -> dict[str, str]:
    slugs = crowd_campaign_slugs(request)
    return {"next_url": reverse("annotate:campaign", args=[slugs[0]])} if len(slugs) == 1 else {}


def remote_ip(request: HttpRequest) -> str:
    """The address the request came from (empty when unknown)."""
    return request.META.get("REMOTE_ADDR", "") or ""


def refuse(request: HttpRequest, title: str, message: str, status: int, **extra) -> HttpResponse:
    """A page saying why the request is refused, answered with ``status``."""
    return render(request, "annotate/message.html", {"title": title, "message": message, **extra}, status=status)


def _bound_identities(request: HttpRequest) -> list[str]:
    """The crowd identities this browser created (from the signed cookie; empty when absent or forged)."""
    try:
        value = request.get_signed_cookie(CROWD_COOKIE, salt=CROWD_COOKIE_SALT, max_age=CROWD_COOKIE_MAX_AGE)
    except (KeyError, signing.BadSignature):
        return []
    return [v for v in value.split(",") if v]


def _bind_identity(request: HttpRequest, response: HttpResponse, key: str) -> None:
    ids = [k for k in _bound_identities(request) if k != key][-(CROWD_COOKIE_MAX_IDS - 1):] + [key]
    response.set_signed_cookie(
        CROWD_COOKIE, ",".join(ids), salt=CROWD_COOKIE_SALT, max_age=CROWD_COOKIE_MAX_AGE, httponly=True,
        secure=settings.SESSION_COOKIE_SECURE, samesite=settings.FACTLAB_CROWD_COOKIE_SAMESITE,
    )


def _identity_rate_wait(request: HttpRequest) -> int | None:
    """Count a new crowd identity from this address; seconds to wait when over the rate, else None."""
    rate = settings.FACTLAB_RATELIMIT_CROWD_IDENTITY
    # Counted per network (IPv4 address, IPv6 /64), like the qualification attempts.
    usage = get_usage(request, group="factlab-crowd-identity", key=ip_key, rate=rate, method=ALL, increment=True)
    if usage is None or not usage["should_limit"]:
        return None
    return max(1, usage["time_left"])


def _too_many(request: HttpRequest, message: str, retry_after: int) -> HttpResponse:
    response = refuse(request, "Too many new participants", message, 429)
    response["Retry-After"] = str(retry_after)
    return response


def _offer_sign_out(request: HttpRequest, title: str, message: str, status: int, *, signed_in_as: str, arrival: Arrival) -> HttpResponse:
    """The page of a link that names someone other than the account signed in: who is signed in, whom the link
    names, and a sign-out form (POST with the CSRF token) that comes back to the link."""
    return render(request, "annotate/identity_conflict.html", {
        "title": title, "message": message, "signed_in_as": signed_in_as,
        "link_names": f"{arrival.provider} {arrival.worker_id}", "link": request.get_full_path(),
    }, status=status)


def crowd_arrival(
    request: HttpRequest, campaign: Campaign, arrival: Arrival, then: Callable[[HttpRequest, Campaign, Worker], HttpResponse],
) -> HttpResponse:
    """Sign in the worker a platform link names and answer ``then`` (the page of the step they are at), or
    answer why not (see the module docstring)."""
    user = request.user
    signed_in = Worker.objects.filter(user=user).first() if user.is_authenticated else None
    if user.is_authenticated and not is_crowd_identity(signed_in):
        # A staff, researcher, reviewer or local account is never swapped for a crowd identity.
        return _offer_sign_out(request, "You are signed in with your own account", (
            f"You are signed in as {user.get_username()}, so this crowd-platform link was not used: it would have replaced "
            "your session with a crowd worker's. Sign out first, or open the link in a private window."
        ), 403, signed_in_as=user.get_username(), arrival=arrival)
    if signed_in is not None and (signed_in.provider, signed_in.external_id) != (arrival.provider, arrival.worker_id):
        # A crowd identity never changes inside a session: a link (perhaps opened from another site) naming
        # another participant would credit the work done afterwards to that participant.
        return _offer_sign_out(request, "This link is for another participant", (
            "This browser is signed in as one participant and the link you opened names another, so the link was not "
            "used: your work stays credited to the participant signed in. If you are the participant the link names, "
            "sign out and continue with the link."
        ), 409, signed_in_as=f"{signed_in.provider} {signed_in.external_id}", arrival=arrival)
    key = f"{arrival.provider}:{arrival.worker_id}"
    ip = remote_ip(request) or None
    worker = Worker.objects.select_related("user").filter(provider=arrival.provider, external_id=arrival.worker_id).first()
    new = worker is None
    if worker is not None and user.pk != worker.user_id and key not in _bound_identities(request):
        record_crowd_event(
            campaign, CrowdEventKind.IDENTITY_REUSED, provider=arrival.provider, external_id=arrival.worker_id, worker=worker, ip=ip,
            detail=request.META.get("HTTP_USER_AGENT", "")[:300],
        )
        return refuse(request, "This participant id is in use in another browser", (
            "This id is already taking part from another browser, so its session and its task stay there. "
            "Please continue in the browser you started with; if you cannot, contact the researcher (this refusal was logged)."
        ), 403)
    if worker is None:
        wait = _identity_rate_wait(request)
        if wait is not None:
            record_crowd_event(campaign, CrowdEventKind.RATE_LIMITED, provider=arrival.provider, external_id=arrival.worker_id, ip=ip, detail="per-address rate")
            return _too_many(request, (
                f"Too many new participants arrived from your network address. Please wait {wait} seconds and open the link again."
            ), wait)
        try:
            worker = create_identity_within_cap(
                campaign, lambda: worker_for_arrival(arrival), provider=arrival.provider, external_id=arrival.worker_id, ip=ip,
            )
        except CampaignCapReached:
            record_crowd_event(campaign, CrowdEventKind.RATE_LIMITED, provider=arrival.provider, external_id=arrival.worker_id, ip=ip, detail="campaign hourly cap")
            return _too_many(request, (
                "This study has taken in as many new participants as it accepts per hour. Please try again in an hour."
            ), 3600)
    if user.pk != worker.user_id:
        login(request, worker.user, backend="annotate.auth_backend.WorkerAwareBackend")
    crowd = request.session.get(CROWD_SESSION_KEY, {})
    crowd[campaign.slug] = {"provider": arrival.provider, **arrival.context}
    request.session[CROWD_SESSION_KEY] = crowd
    response = then(request, campaign, worker)
    if new or key not in _bound_identities(request):
        _bind_identity(request, response, key)
    return response
