"""Pages shared by every campaign kind: home, the campaign entry (next step), crowd arrival, completion.

``/c/<slug>/`` decides where a worker goes next using the campaign protocol's URL names, so FRANK and
BUMP campaigns share one entry flow. Crowd platform details (MTurk assignment, Prolific session) are
kept in the session under ``crowd`` -> campaign slug, for the completion page.

A crowd arrival is accepted only when (in this order): the link carries the campaign's study token; the
platform ids are well formed; the browser is not signed in with a non-crowd account (staff, researcher,
reviewer, local annotator: never replaced) nor as another crowd identity (an identity never changes inside a
session: both get a page that offers to sign out and come back to the link); a known id comes back in the browser that created it (signed
cookie ``CROWD_COOKIE``), else it is refused and logged for the admin; a new id stays within the per-address
rate and the campaign's hourly cap (429 otherwise).

Over 400 lines on purpose: the entry flow, crowd arrival, exits and heartbeat are one path a worker walks;
splitting it would scatter the order of the checks above.
"""
from __future__ import annotations

from django.conf import settings
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.core import signing
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST
from django_ratelimit import ALL
from django_ratelimit.core import get_usage

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
from annotate.providers import (
    Arrival,
    ArrivalError,
    Completion,
    CrowdProgress,
    detect_provider,
    has_study_token,
    provider_named,
    worker_for_arrival,
)
from annotate.ratelimits import ip_key
from annotate.services.assignments import (
    current_assignment,
    record_external_assignment_id,
    request_assignment,
)
from annotate.services.crowd import (
    CampaignCapReached,
    create_identity_within_cap,
    record_crowd_event,
)
from annotate.services.errors import WorkflowError
from annotate.services.participation import (
    client_address,
    eligibility_problem,
    get_participation,
    is_screened_out,
    items_under_external_assignment,
    qualification_attempts_left,
)

CROWD_SESSION_KEY = "crowd"
#: Signed cookie listing the crowd identities ("provider:id") this browser created.
CROWD_COOKIE = "factlab_crowd"
CROWD_COOKIE_SALT = "factlab.crowd-identity"
CROWD_COOKIE_MAX_IDS = 20
CROWD_COOKIE_MAX_AGE = 90 * 24 * 3600


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
    return _refuse(request, "This study is not yours", (
        "You are taking part through a crowd-platform study, and this page belongs to another study. "
        "Please go back to your own study; to take part in another one, use that study's own link on the platform."
    ), 403, **_own_study_link(request))


def _own_study_link(request: HttpRequest) -> dict[str, str]:
    slugs = crowd_campaign_slugs(request)
    return {"next_url": reverse("annotate:campaign", args=[slugs[0]])} if len(slugs) == 1 else {}


def claim_assignment(request: HttpRequest, campaign: Campaign, *, nothing_left: str) -> tuple[Assignment | None, HttpResponse | None]:
    """The worker's current or next assignment for a task page, or the response to show instead.

    A worker who may not work now goes back to the campaign entry (which explains why); when no work is
    left the page says ``nothing_left`` and links to the end of the campaign. A worker who arrived from a
    crowd platform has its assignment (MTurk) or session (Prolific) id recorded on the assignment.
    """
    worker = worker_for_user(request.user)
    arrival = crowd_context(request, campaign)
    participation = get_participation(worker, campaign)
    hit_full = _mturk_assignment_full(participation, arrival)
    if hit_full is not None:
        return None, hit_full
    try:
        assignment = request_assignment(worker, campaign, participation, network=client_address(request))
    except WorkflowError:
        return None, redirect("annotate:campaign", campaign.slug)
    if assignment is None:
        return None, render(request, "annotate/message.html", {
            "title": "Nothing left to do", "message": nothing_left + " Thank you!",
            "next_url": reverse("annotate:campaign-done", args=[campaign.slug]),
            **exit_context(request, participation, no_work=True),
        })
    record_external_assignment_id(assignment, arrival.get("assignment_id") or arrival.get("session_id") or "")
    return assignment, None


def _mturk_assignment_full(participation: Participation, arrival: dict[str, str]) -> HttpResponse | None:
    """The page to show when the worker's MTurk assignment already covers its items (None: go on).

    An unfinished item under it is still given back (it counts as one of them); no new one is claimed, as
    the HIT's reward would not pay for it.
    """
    if arrival.get("provider") != "mturk":
        return None
    covered = items_under_external_assignment(participation, arrival.get("assignment_id", ""), live=True)
    if covered < participation.campaign.mturk_items_per_assignment:
        return None
    if current_assignment(participation.worker, participation.campaign) is not None:
        return None
    return redirect(reverse("annotate:campaign-done", args=[participation.campaign.slug]))


def items_at_minimum_time(participation: Participation) -> int:
    """Items that count towards the completion code: submitted, and not faster than the campaign's minimum
    time per sentence on the server's clock (an item clicked through in a second is no work done)."""
    return participation.items_submitted - participation.too_fast_items


def crowd_completion(request: HttpRequest, participation: Participation, *, no_work: bool = False) -> Completion | None:
    """Where the crowd worker may go back to the platform now (completion or screen-out), if anywhere;
    ``no_work``: the campaign has nothing left for them."""
    context = crowd_context(request, participation.campaign)
    provider = provider_named(context.get("provider", ""))
    if provider is None:
        return None
    if provider.name == "mturk":
        items_done = items_under_external_assignment(participation, context.get("assignment_id", ""))
    else:
        items_done = items_at_minimum_time(participation)
    try:
        progress = CrowdProgress(items_done=items_done, screened_out=is_screened_out(participation), no_work=no_work)
        return provider.completion(context, participation.campaign, progress)
    except ArrivalError:
        return None


def exit_context(request: HttpRequest, participation: Participation, *, no_work: bool = False) -> dict:
    """What ``annotate/_exit.html`` shows on a page where the worker may leave: the platform exit (code
    and return link) and whether they came from a crowd platform at all (``crowd_provider``)."""
    return {
        "completion": crowd_completion(request, participation, no_work=no_work),
        "crowd_provider": crowd_context(request, participation.campaign).get("provider", ""),
    }


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


def _client_ip(request: HttpRequest) -> str:
    return request.META.get("REMOTE_ADDR", "") or ""


def _refuse(request: HttpRequest, title: str, message: str, status: int, **extra) -> HttpResponse:
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
    response = _refuse(request, "Too many new participants", message, 429)
    response["Retry-After"] = str(retry_after)
    return response


def _offer_sign_out(request: HttpRequest, title: str, message: str, status: int, *, signed_in_as: str, arrival: Arrival) -> HttpResponse:
    """The page of a link that names someone other than the account signed in: who is signed in, whom the link
    names, and a sign-out form (POST with the CSRF token) that comes back to the link."""
    return render(request, "annotate/identity_conflict.html", {
        "title": title, "message": message, "signed_in_as": signed_in_as,
        "link_names": f"{arrival.provider} {arrival.worker_id}", "link": request.get_full_path(),
    }, status=status)


def crowd_arrival(request: HttpRequest, campaign: Campaign, arrival: Arrival) -> HttpResponse:
    """Sign in the worker a platform link names, or answer why not (see the module docstring)."""
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
    ip = _client_ip(request) or None
    worker = Worker.objects.select_related("user").filter(provider=arrival.provider, external_id=arrival.worker_id).first()
    new = worker is None
    if worker is not None and user.pk != worker.user_id and key not in _bound_identities(request):
        record_crowd_event(
            campaign, CrowdEventKind.IDENTITY_REUSED, provider=arrival.provider, external_id=arrival.worker_id, worker=worker, ip=ip,
            detail=request.META.get("HTTP_USER_AGENT", "")[:300],
        )
        return _refuse(request, "This participant id is in use in another browser", (
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
    response = next_step(request, campaign, worker)
    if new or key not in _bound_identities(request):
        _bind_identity(request, response, key)
    return response


def campaign_entry(request: HttpRequest, slug: str) -> HttpResponse:
    """Entry point of a campaign, for signed-in users and for workers arriving from a crowd platform."""
    campaign = get_object_or_404(Campaign, slug=slug)
    provider = detect_provider(request)
    if provider is not None:
        if not has_study_token(request, campaign):
            record_crowd_event(campaign, CrowdEventKind.BAD_LINK, provider=provider.name, ip=_client_ip(request) or None)
            return _refuse(request, "This study link is not valid", (
                "The link you followed lacks this study's access token, or carries a wrong one. Please use the link "
                "given on the crowd platform's study page; if it still fails, contact the researcher."
            ), 403)
        try:
            arrival = provider.worker_identity(request)
        except ArrivalError as exc:
            return _refuse(request, "This link is incomplete", f"The platform link cannot be used: {exc}.", 400)
        if arrival.preview:
            preview = protocol_url(protocol_for(campaign.kind), "preview_url_name", campaign)
            if preview:
                return redirect(preview)
            return render(request, "annotate/preview.html", {"campaign": campaign})
        return crowd_arrival(request, campaign, arrival)
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    return next_step(request, campaign, worker_for_user(request.user))


@login_required
def campaign_done(request: HttpRequest, slug: str) -> HttpResponse:
    """After a submitted item: continue with another one, or finish (back to the crowd platform)."""
    campaign = get_object_or_404(Campaign, slug=slug)
    context = crowd_context(request, campaign)
    worker = worker_for_user(request.user)
    participation = get_participation(worker, campaign)
    # MTurk: an assignment covers mturk_items_per_assignment items, then the HIT is submitted.
    hit_full = _mturk_assignment_full(participation, context) is not None
    exit = exit_context(request, participation)
    completion = exit["completion"]
    items_needed = max(0, campaign.completion_min_items - items_at_minimum_time(participation)) if context.get("provider") == "prolific" else 0
    return render(request, "annotate/done.html", {
        "campaign": campaign,
        "items_done_term": protocol_for(campaign.kind).terms["items_done"],
        # Workers who do not label sentences edit summaries (BUMP): the next-item link says so.
        "edits_summaries": not protocol_for(campaign.kind).labels_sentences,
        **exit,
        "items_needed": items_needed if completion is None else 0,
        "can_continue": not hit_full and eligibility_problem(participation) is None,
        "participation": participation,
        "blocked": participation.is_blocked,
        "just_submitted": request.GET.get("submitted") == "1",
        "has_current": current_assignment(worker, campaign) is not None,
    })


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
            return _refuse(request, "Open your study link", (
                "Your session has ended. Please open the study link again from the crowd platform's study page."
            ), 200)
    campaigns = Campaign.objects.order_by("name") if request.user.is_staff else Campaign.objects.filter(status=CampaignStatus.RUNNING).order_by("name")
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
    touched = Assignment.objects.filter(
        pk=assignment_id, item__campaign__slug=slug, worker__user=request.user, status=AssignmentStatus.ACTIVE,
    ).update(last_seen_at=timezone.now())
    if not touched:
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
