"""Worker pages every protocol shares: the task page, the submit endpoint and the qualification test with its result.

The protocol's URLs route here with their ``family``; what differs (the form, its parse, the score and the
pass rule) comes from the campaign's :class:`~annotate.protocols.Protocol`.
"""
from __future__ import annotations

import uuid

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotate import json_input
from annotate.models import Campaign, QualificationStatus
from annotate.protocols import kinds_of_family, protocol_for
from annotate.rows import CompiledQueries, CompiledQuery
from annotate.services.assignments import submit_assignment
from annotate.services.attention import clean_signals
from annotate.services.campaign_refs import campaign_reference
from annotate.services.errors import InvalidSubmission, WorkflowError
from annotate.services.participation import (
    client_address,
    eligibility_problem,
    get_participation,
    qualification_attempts_left,
    record_qualification,
    task_page_participation,
)
from annotate.views.arrival import worker_for_user
from annotate.views.entry import claim_assignment, protocol_url

RESULT_TEMPLATE = "annotate/qualification_result.html"


def family_campaign(slug: str, family: str) -> Campaign:
    """The campaign behind a protocol page; a campaign of another protocol is 404 there, like a missing one."""
    # Compiled once per protocol family: every task page reads its campaign.
    campaign = _FAMILY_CAMPAIGN.get(family, lambda: _campaign_of_kinds(kinds_of_family(family))).row(slug=slug)
    if campaign is None:
        raise Http404("No such campaign.")
    return campaign


_FAMILY_CAMPAIGN = CompiledQueries()


def _campaign_of_kinds(kinds: list[str]) -> CompiledQuery:
    return CompiledQuery(lambda slug: Campaign.objects.filter(slug=slug, kind__in=kinds)[:1], slug=str)


def family_campaign_reference(slug: str, family: str) -> Campaign:
    """The id, slug and kind of the campaign behind a protocol endpoint, from the cache
    (:func:`~annotate.services.campaign_refs.campaign_reference`): for endpoints whose locked rows bring the
    campaign itself. 404 as :func:`family_campaign`."""
    campaign = campaign_reference(slug)
    if campaign is None or campaign.kind not in kinds_of_family(family):
        raise Http404("No such campaign.")
    return campaign


def json_body(request: HttpRequest) -> dict:
    """The request's JSON object, or ``InvalidSubmission`` saying why it is not one."""
    try:
        body = json_input.loads(request.body or b"{}")
    except (ValueError, UnicodeDecodeError) as exc:  # malformed JSON, an over-long number, NaN
        raise InvalidSubmission(f"The request body is not valid JSON ({exc}).") from exc
    if not isinstance(body, dict):
        raise InvalidSubmission("The request body must be a JSON object.")
    return body


def error_response(exc: WorkflowError) -> JsonResponse:
    return JsonResponse(exc.as_dict(), status=exc.status_code)


@login_required
def task(request: HttpRequest, slug: str, family: str) -> HttpResponse:
    """The worker's current or next item, as the protocol's page shows it (``Protocol.task_page``), with a fresh
    submission key (a resubmitted page is recognised) and the URLs to submit to and to go to afterwards."""
    # The campaign comes with the worker's participation, once there is one (one query where two were).
    known = task_page_participation(worker_for_user(request.user), slug, kinds_of_family(family))
    campaign = known.campaign if known is not None else family_campaign(slug, family)
    protocol = protocol_for(campaign.kind)
    assignment, participation, response = claim_assignment(request, campaign, nothing_left=protocol.nothing_left, participation=known)
    if response is not None:
        return response
    page = protocol.task_page(campaign, assignment)
    data = {
        **page.data,
        "submission_key": uuid.uuid4().hex,
        "urls": {
            **page.urls,
            "submit": reverse(f"annotate:{protocol.family}-submit", args=[slug, assignment.pk]),
            "done": reverse("annotate:campaign-done", args=[slug]) + "?submitted=1",
        },
    }
    return render(request, page.template, {
        "campaign": campaign, "data": data, "assignment": assignment, "participation": participation, **page.context,
    })


@login_required
@require_POST
def submit(request: HttpRequest, slug: str, assignment_id: int, family: str) -> JsonResponse:
    """Store one item's answers (the protocol validates them); says whether the worker is now blocked."""
    campaign = family_campaign_reference(slug, family)  # the submission locks and reads the campaign itself
    try:
        body = json_body(request)
        key = body.get("submission_key") or ""
        if not isinstance(key, str):
            raise InvalidSubmission("submission_key must be a string")
        worker = worker_for_user(request.user)
        outcome = submit_assignment(assignment_id, worker, body, submission_key=key, campaign=campaign,
                                     signals=clean_signals(body.get("signals")))  # hints for the admin only
    except WorkflowError as exc:
        return error_response(exc)
    missed = bool(outcome.result and outcome.result.reading_check_failures) and not outcome.blocked_reason
    return JsonResponse({
        "ok": True,
        "duplicate": outcome.duplicate,
        "blocked": bool(outcome.blocked_reason),
        "reading_check_missed": missed,
        "detail": f"You have been blocked from this campaign: {outcome.blocked_reason}." if outcome.blocked_reason else "",
        "next": reverse("annotate:campaign-done", args=[campaign.slug]) + "?submitted=1" + ("&reading_check=missed" if missed else ""),
    })


@login_required
def qualification(request: HttpRequest, slug: str, family: str) -> HttpResponse:
    """The qualification test: shown, parsed and scored by the protocol; only pass or fail is ever shown."""
    campaign = family_campaign(slug, family)
    protocol = protocol_for(campaign.kind)
    participation = get_participation(worker_for_user(request.user), campaign)
    if eligibility_problem(participation, for_main_task=False):
        return redirect("annotate:campaign", slug)
    tutorial = protocol_url(protocol, "tutorial_url_name", campaign)
    if tutorial and protocol.needs_tutorial(campaign) and not participation.tutorial_done:
        return redirect(tutorial)
    context = {
        "campaign": campaign, "participation": participation, "pass_score": campaign.qualification_pass_score,
        "tutorial_url": tutorial, "retry_url": protocol_url(protocol, "qualification_url_name", campaign),
    }
    if participation.qualification_status == QualificationStatus.PASSED and request.method == "GET":
        return render(request, RESULT_TEMPLATE, {**context, "passed": True})
    if (protocol.qualification_source(campaign) == "shipped" and not campaign.shipped_qualification_accepted
            and participation.qualification_status != QualificationStatus.FAILED and qualification_attempts_left(participation) > 0):
        # The shipped pool's keys are in the source: offered only once an admin accepts that; nothing is counted.
        return render(request, "annotate/qualification_unavailable.html", context, status=503)
    if request.method == "POST":
        try:
            answers = protocol.parse_qualification(campaign, participation, request.POST)
            score = protocol.score_qualification(campaign, participation, answers)
            passed = protocol.qualification_passed(campaign, score)
            record_qualification(participation, score=score, passed=passed, answers=answers, address=client_address(request))
        except WorkflowError as exc:
            form = protocol.qualification_form(campaign, participation, request.POST)
            return render(request, form.template, {
                **context, **form.context, "error": exc.message, "attempts_left": qualification_attempts_left(participation),
            }, status=exc.status_code)
        return render(request, RESULT_TEMPLATE, {**context, "passed": passed, "attempts_left": qualification_attempts_left(participation)})
    if participation.qualification_status == QualificationStatus.FAILED or qualification_attempts_left(participation) <= 0:
        return render(request, RESULT_TEMPLATE, {**context, "passed": False, "attempts_left": 0})
    form = protocol.qualification_form(campaign, participation)
    return render(request, form.template, {**context, **form.context, "attempts_left": qualification_attempts_left(participation)})
