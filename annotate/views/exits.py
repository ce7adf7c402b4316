"""Where a worker may leave: the page after an item (continue or finish), and the crowd platform's exit on it
(completion or screen-out code, return link) that every page a worker may leave from shows.
"""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from annotate.models import Participation
from annotate.protocols import protocol_for
from annotate.providers import ArrivalError, Completion, CrowdProgress, provider_named
from annotate.services.assignments import current_assignment
from annotate.services.participation import (
    eligibility_problem,
    get_participation,
    is_screened_out,
    items_under_external_assignment,
)

from .arrival import campaign_or_404, crowd_context, worker_for_user


def mturk_assignment_full(participation: Participation, arrival: dict[str, str]) -> HttpResponse | None:
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


@login_required
def campaign_done(request: HttpRequest, slug: str) -> HttpResponse:
    """After a submitted item: continue with another one, or finish (back to the crowd platform)."""
    campaign = campaign_or_404(slug)
    context = crowd_context(request, campaign)
    worker = worker_for_user(request.user)
    participation = get_participation(worker, campaign)
    # MTurk: an assignment covers mturk_items_per_assignment items, then the HIT is submitted.
    hit_full = mturk_assignment_full(participation, context) is not None
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
        # Said by the submit that carried the reading check's answer (a forged flag only shows this notice).
        "reading_check_missed": request.GET.get("reading_check") == "missed",
        "has_current": current_assignment(worker, campaign) is not None,
    })
