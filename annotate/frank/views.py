"""FRANK pages: tutorial (with per-answer feedback), preview, annotation task and its reading check.

The submit endpoint and the qualification test are the shared ones (``annotate.views.tasks``).
"""
from __future__ import annotations

import random

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotate.frank import content as frank_content
from annotate.frank.protocol import (
    build_layout,
    task_page_data,
    tutorial_feedback,
)
from annotate.frank.services import check_entity_answer
from annotate.models import Assignment, Campaign, CampaignStatus
from annotate.services.errors import InvalidSubmission, WorkflowError
from annotate.services.participation import (
    eligibility_problem,
    get_participation,
    mark_tutorial_done,
)
from annotate.views.arrival import worker_for_user
from annotate.views.tasks import error_response, family_campaign, family_campaign_reference, json_body
from taxonomies.frank import CATEGORIES

TUTORIAL_SESSION_KEY = "frank_tutorial_answered"


def _campaign(slug: str) -> Campaign:
    return family_campaign(slug, "frank")


# ---------------------------------------------------------------- tutorial

@login_required
def tutorial(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = _campaign(slug)
    participation = get_participation(worker_for_user(request.user), campaign)
    problem = eligibility_problem(participation, for_main_task=False)
    if problem:
        return redirect("annotate:campaign", slug)
    return render(request, "frank/tutorial.html", {
        "campaign": campaign,
        "exercise": frank_content.public_view(frank_content.campaign_tutorial(campaign.training_material)),
        "categories": CATEGORIES,
        "done": participation.tutorial_done,
    })


@login_required
@require_POST
def tutorial_check(request: HttpRequest, slug: str) -> JsonResponse:
    """Feedback on one tutorial answer; the key stays on the server."""
    exercise = frank_content.campaign_tutorial(_campaign(slug).training_material)
    try:
        body = json_body(request)
        summary, index = body.get("summary"), body.get("index")
        if not isinstance(summary, int) or not isinstance(index, int):
            raise InvalidSubmission("summary and index must be integers")
        from annotate.frank.protocol import parse_answer

        factual, categories, _ = parse_answer(body, "answer", max_categories=None)
        try:
            feedback = tutorial_feedback(summary, index, factual, categories, exercise)
        except IndexError as exc:
            raise InvalidSubmission(str(exc)) from exc
    except WorkflowError as exc:
        return error_response(exc)
    answered = set(request.session.get(TUTORIAL_SESSION_KEY, {}).get(slug, []))
    answered.add(f"{summary}:{index}")
    store = request.session.get(TUTORIAL_SESSION_KEY, {})
    store[slug] = sorted(answered)
    request.session[TUTORIAL_SESSION_KEY] = store
    return JsonResponse({**feedback, "answered": len(answered), "total": exercise.size})


@login_required
@require_POST
def tutorial_done(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = _campaign(slug)
    answered = request.session.get(TUTORIAL_SESSION_KEY, {}).get(slug, [])
    size = frank_content.campaign_tutorial(campaign.training_material).size
    if len(answered) < size:
        messages.error(request, f"Please answer every tutorial sentence first ({len(answered)} of {size} answered).")
        return redirect("annotate:frank-tutorial", slug)
    mark_tutorial_done(get_participation(worker_for_user(request.user), campaign))
    return redirect("annotate:campaign", slug)


# ---------------------------------------------------------------- task

def preview(request: HttpRequest, slug: str) -> HttpResponse:
    """MTurk preview: an item read-only, without traps or entity question, and no worker created.

    Only a running campaign has a public preview (staff may preview drafts); others answer 404 like a missing one.
    """
    campaign = _campaign(slug)
    if campaign.status != CampaignStatus.RUNNING and not request.user.is_staff:
        raise Http404("No such campaign.")
    item = campaign.items.filter(for_experts=False).select_related("document").first()
    if item is None:
        raise Http404("This campaign has no items.")
    assignment = Assignment(item=item, layout=build_layout(item.document, 0.0, random.Random(0)))
    # The task page's template and data (annotate.views.tasks.task), with nothing to submit to.
    data = {
        **task_page_data(assignment, campaign.relevant_sentences_k), "assignment": 0, "entity_options": [], "entity_done": True,
        "preview": True, "submission_key": "", "urls": {},
    }
    return render(request, "frank/task.html", {"campaign": campaign, "data": data, "categories": CATEGORIES, "preview": True, "assignment": None})


@login_required
@require_POST
def entity_answer(request: HttpRequest, slug: str, assignment_id: int) -> JsonResponse:
    campaign = family_campaign_reference(slug, "frank")  # the check locks and reads the campaign itself
    try:
        outcome = check_entity_answer(assignment_id, worker_for_user(request.user), json_body(request).get("choice"), campaign)
    except WorkflowError as exc:
        return error_response(exc)
    if outcome["blocked_reason"]:
        detail = f"You cannot take more items in this campaign: {outcome['blocked_reason']}."
    elif not outcome["correct"]:
        detail = ("That was not the option missing from the article. You can go on with this item; a second wrong "
                  "answer to a reading check ends your participation (the items you submitted are paid).")
    else:
        detail = ""
    return JsonResponse({
        "correct": outcome["correct"],
        "blocked": bool(outcome["blocked_reason"]),
        "detail": detail,
        "next": reverse("annotate:campaign", args=[slug]),
    })
