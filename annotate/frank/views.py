"""FRANK pages: tutorial (with per-answer feedback), qualification test, preview, annotation task."""
from __future__ import annotations

import json
import random
import uuid

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotate.frank import content as frank_content
from annotate.frank.typology import CATEGORIES
from annotate.models import Assignment, Campaign, CampaignKind, CampaignStatus, QualificationStatus
from annotate.frank.protocol import (
    build_layout,
    check_entity_answer,
    qualification_exercise,
    score_qualification,
    task_page_data,
    tutorial_feedback,
)
from annotate.services.assignments import submit_assignment
from annotate.services.errors import InvalidSubmission, WorkflowError
from annotate.services.participation import (
    eligibility_problem,
    get_participation,
    mark_tutorial_done,
    client_address,
    qualification_attempts_left,
    record_qualification,
)

from annotate.views.common import claim_assignment, worker_for_user

TUTORIAL_SESSION_KEY = "frank_tutorial_answered"


def _campaign(slug: str) -> Campaign:
    return get_object_or_404(Campaign, slug=slug, kind=CampaignKind.FRANK)


def _json_body(request: HttpRequest) -> dict:
    try:
        body = json.loads(request.body or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InvalidSubmission(f"The request body is not valid JSON ({exc}).") from exc
    if not isinstance(body, dict):
        raise InvalidSubmission("The request body must be a JSON object.")
    return body


def _error(exc: WorkflowError) -> JsonResponse:
    return JsonResponse(exc.as_dict(), status=exc.status_code)


# ---------------------------------------------------------------- tutorial

@login_required
def tutorial(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = _campaign(slug)
    participation = get_participation(worker_for_user(request.user), campaign)
    problem = eligibility_problem(participation, for_main_task=False)
    if problem:
        return redirect("annotate:campaign", slug)
    return render(request, "annotate/frank/tutorial.html", {
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
        body = _json_body(request)
        summary, index = body.get("summary"), body.get("index")
        if not isinstance(summary, int) or not isinstance(index, int):
            raise InvalidSubmission("summary and index must be integers")
        from annotate.frank.protocol import parse_answer

        factual, categories, _ = parse_answer(body, "answer")
        try:
            feedback = tutorial_feedback(summary, index, factual, categories, exercise)
        except IndexError as exc:
            raise InvalidSubmission(str(exc)) from exc
    except WorkflowError as exc:
        return _error(exc)
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


# ---------------------------------------------------------------- qualification

def _qualification_rows(exercise: frank_content.Exercise, post=None) -> list[dict]:
    """The test's sentences with the worker's current form values (for re-display after an error)."""
    rows = []
    for s, summary in enumerate(frank_content.public_view(exercise)["summaries"]):
        sentences = []
        for i, text in enumerate(summary):
            name = f"s{s}_{i}"
            sentences.append({
                "name": name, "text": text, "number": i + 1,
                "factual": post.get(f"{name}_factual", "") if post else "",
                "categories": post.getlist(f"{name}_cat") if post else [],
            })
        rows.append({"number": s + 1, "sentences": sentences})
    return rows


def _parse_qualification_form(exercise: frank_content.Exercise, post) -> dict:
    """Form fields ``s<S>_<I>_factual`` (yes/no) and ``s<S>_<I>_cat`` (codes) -> the scoring structure."""
    summaries = []
    for s, summary in enumerate(exercise.summaries):
        answers = []
        for i in range(len(summary)):
            value = post.get(f"s{s}_{i}_factual")
            if value not in ("yes", "no"):
                raise InvalidSubmission(f"Summary {s + 1}, sentence {i + 1}: answer Yes or No.")
            factual = value == "yes"
            answers.append({"factual": factual, "categories": [] if factual else post.getlist(f"s{s}_{i}_cat")})
        summaries.append(answers)
    return {"summaries": summaries}


@login_required
def qualification(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = _campaign(slug)
    participation = get_participation(worker_for_user(request.user), campaign)
    problem = eligibility_problem(participation, for_main_task=False)
    if problem:
        return redirect("annotate:campaign", slug)
    if campaign.tutorial_required and not participation.tutorial_done:
        return redirect("annotate:frank-tutorial", slug)
    # Each worker and attempt gets its own random subset of the pool; only pass or fail is ever shown.
    exercise = qualification_exercise(participation)
    context = {
        "campaign": campaign, "participation": participation, "pass_score": campaign.qualification_pass_score,
        "exercise": frank_content.public_view(exercise), "categories": CATEGORIES,
    }
    if participation.qualification_status == QualificationStatus.PASSED and request.method == "GET":
        return render(request, "annotate/frank/qualification_result.html", {**context, "passed": True})
    if request.method == "POST":
        try:
            answers = _parse_qualification_form(exercise, request.POST)
            score, _ = score_qualification(answers, exercise)
            passed = score >= campaign.qualification_pass_score
            record_qualification(participation, score=score, passed=passed, answers=answers, address=client_address(request))
        except WorkflowError as exc:
            return render(request, "annotate/frank/qualification.html", {
                **context, "rows": _qualification_rows(exercise, request.POST), "error": exc.message,
                "attempts_left": qualification_attempts_left(participation),
            }, status=exc.status_code)
        return render(request, "annotate/frank/qualification_result.html", {
            **context, "passed": passed, "attempts_left": qualification_attempts_left(participation),
        })
    if participation.qualification_status == QualificationStatus.FAILED or qualification_attempts_left(participation) <= 0:
        return render(request, "annotate/frank/qualification_result.html", {**context, "passed": False, "attempts_left": 0})
    return render(request, "annotate/frank/qualification.html", {
        **context, "rows": _qualification_rows(exercise), "attempts_left": qualification_attempts_left(participation),
    })


# ---------------------------------------------------------------- task

def _render_task(
    request: HttpRequest, campaign: Campaign, data: dict, *, preview: bool, submission_key: str = "", assignment: Assignment | None = None,
) -> HttpResponse:
    data = {
        **data,
        "preview": preview,
        "submission_key": submission_key,
        "urls": {} if preview else {
            "entity": reverse("annotate:frank-entity", args=[campaign.slug, data["assignment"]]),
            "submit": reverse("annotate:frank-submit", args=[campaign.slug, data["assignment"]]),
            "done": reverse("annotate:campaign-done", args=[campaign.slug]) + "?submitted=1",
        },
    }
    return render(request, "annotate/frank/task.html", {
        "campaign": campaign, "data": data, "categories": CATEGORIES, "preview": preview, "assignment": assignment,
    })


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
    data = task_page_data(assignment, campaign.relevant_sentences_k)
    return _render_task(request, campaign, {**data, "assignment": 0, "entity_options": [], "entity_done": True}, preview=True)


@login_required
def task(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = _campaign(slug)
    assignment, response = claim_assignment(request, campaign, nothing_left="There is no article left for you in this campaign.")
    if response is not None:
        return response
    data = task_page_data(assignment, campaign.relevant_sentences_k)
    return _render_task(request, campaign, data, preview=False, submission_key=uuid.uuid4().hex, assignment=assignment)


@login_required
@require_POST
def entity_answer(request: HttpRequest, slug: str, assignment_id: int) -> JsonResponse:
    campaign = _campaign(slug)
    try:
        outcome = check_entity_answer(assignment_id, worker_for_user(request.user), _json_body(request).get("choice"), campaign)
    except WorkflowError as exc:
        return _error(exc)
    return JsonResponse({
        "correct": outcome["correct"],
        "blocked": bool(outcome["blocked_reason"]),
        "detail": (f"You have been blocked from this campaign: {outcome['blocked_reason']}." if outcome["blocked_reason"] else ""),
        "next": reverse("annotate:campaign", args=[slug]),
    })


@login_required
@require_POST
def submit(request: HttpRequest, slug: str, assignment_id: int) -> JsonResponse:
    campaign = _campaign(slug)
    try:
        body = _json_body(request)
        key = body.get("submission_key") or ""
        if not isinstance(key, str):
            raise InvalidSubmission("submission_key must be a string")
        outcome = submit_assignment(assignment_id, worker_for_user(request.user), body, submission_key=key, campaign=campaign)
    except WorkflowError as exc:
        return _error(exc)
    return JsonResponse({
        "ok": True,
        "duplicate": outcome.duplicate,
        "blocked": bool(outcome.blocked_reason),
        "detail": f"You have been blocked from this campaign: {outcome.blocked_reason}." if outcome.blocked_reason else "",
        "next": reverse("annotate:campaign-done", args=[campaign.slug]) + "?submitted=1",
    })


