"""BUMP pages: qualification (Task 1 types / Task 2 accuracy), the editing task, and expert review.

Thin views: scoring lives in ``annotate.bump.content``, storing in the shared workflow and
``annotate.bump.protocol``, review in ``annotate.bump.review``.
"""
from __future__ import annotations

import json
import uuid
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotate.bump import content as bump_content
from annotate.bump import taxonomy as bump_taxonomy
from annotate.bump import edits
from annotate.models import Campaign, CampaignKind, QualificationStatus
from annotate.bump.protocol import task_page_data
from annotate.bump.selectors import open_expert_items, review_history, review_queue, reviewed_edits
from annotate.exporters.pseudonyms import worker_pseudonym
from annotate.services.assignments import submit_assignment
from annotate.services.errors import InvalidSubmission, WorkflowError
from annotate.services.participation import (
    eligibility_problem,
    client_address,
    get_participation,
    qualification_attempts_left,
    record_qualification,
)
from annotate.bump.review import complete_expert_item, is_reviewer, review_edit, undo_review

from annotate.views.common import claim_assignment, worker_for_user

BUMP_KINDS = (CampaignKind.BUMP_TAXONOMY, CampaignKind.BUMP_FREE)
REVIEW_PAGE_SIZE = 25


def _campaign(slug: str) -> Campaign:
    return get_object_or_404(Campaign, slug=slug, kind__in=BUMP_KINDS)


def _is_taxonomy(campaign: Campaign) -> bool:
    return campaign.kind == CampaignKind.BUMP_TAXONOMY


# ---------------------------------------------------------------- qualification

def _qualification_context(campaign: Campaign, post=None) -> dict:
    if _is_taxonomy(campaign):
        view = bump_content.taxonomy_public_view()
        for number, edit in enumerate(view["edits"], start=1):
            edit["number"] = number
            edit["chosen"] = post.get(edit["id"], "") if post else ""
            edit["diff"] = edits.word_diff(view["reference"], edit["edited"])
        return {"exercise": view, "types": bump_taxonomy.REQUESTABLE, "template": "annotate/bump/qualification_taxonomy.html"}
    view = bump_content.accuracy_public_view()
    for number, pair in enumerate(view["pairs"], start=1):
        pair["number"] = number
        pair["chosen"] = post.get(pair["id"], "") if post else ""
    return {"exercise": view, "template": "annotate/bump/qualification_accuracy.html"}


@login_required
def qualification(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = _campaign(slug)
    participation = get_participation(worker_for_user(request.user), campaign)
    if eligibility_problem(participation, for_main_task=False):
        return redirect("annotate:campaign", slug)
    context = {"campaign": campaign, "participation": participation, "taxonomy": _is_taxonomy(campaign),
               "pass_score": campaign.qualification_pass_score}
    result_template = "annotate/bump/qualification_result.html"
    if participation.qualification_status == QualificationStatus.PASSED and request.method == "GET":
        return render(request, result_template, {**context, "passed": True})
    if request.method == "POST":
        try:
            scorer = bump_content.score_taxonomy if _is_taxonomy(campaign) else bump_content.score_accuracy
            answers = {k: v for k, v in request.POST.items() if k != "csrfmiddlewaretoken"}
            try:
                score, _ = scorer(answers)
            except bump_content.QualificationAnswerError as exc:
                raise InvalidSubmission(str(exc)) from exc
            passed = score >= campaign.qualification_pass_score
            record_qualification(participation, score=score, passed=passed, answers=answers, address=client_address(request))
        except WorkflowError as exc:
            extra = _qualification_context(campaign, request.POST)
            return render(request, extra["template"], {**context, **extra, "error": exc.message,
                                                       "attempts_left": qualification_attempts_left(participation)}, status=exc.status_code)
        return render(request, result_template, {**context, "passed": passed,
                                                 "attempts_left": qualification_attempts_left(participation)})
    if participation.qualification_status == QualificationStatus.FAILED or qualification_attempts_left(participation) <= 0:
        return render(request, result_template, {**context, "passed": False, "attempts_left": 0})
    extra = _qualification_context(campaign)
    return render(request, extra["template"], {**context, **extra, "attempts_left": qualification_attempts_left(participation)})


# ---------------------------------------------------------------- task

@login_required
def task(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = _campaign(slug)
    assignment, response = claim_assignment(request, campaign, nothing_left="There is no summary left for you to edit in this campaign.")
    if response is not None:
        return response
    data = {
        **task_page_data(assignment),
        "taxonomy": _is_taxonomy(campaign),
        "submission_key": uuid.uuid4().hex,
        "urls": {
            "submit": reverse("annotate:bump-submit", args=[slug, assignment.pk]),
            "done": reverse("annotate:campaign-done", args=[slug]) + "?submitted=1",
        },
    }
    return render(request, "annotate/bump/task.html", {
        "campaign": campaign, "data": data, "taxonomy": _is_taxonomy(campaign), "types": bump_taxonomy.REQUESTABLE,
        "assignment": assignment,
        "example_article": bump_taxonomy.EXAMPLE_ARTICLE, "example_reference": bump_taxonomy.EXAMPLE_REFERENCE,
    })


@login_required
@require_POST
def submit(request: HttpRequest, slug: str, assignment_id: int) -> JsonResponse:
    campaign = _campaign(slug)
    try:
        try:
            body = json.loads(request.body or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InvalidSubmission(f"The request body is not valid JSON ({exc}).") from exc
        if not isinstance(body, dict):
            raise InvalidSubmission("The request body must be a JSON object.")
        key = body.get("submission_key") or ""
        if not isinstance(key, str):
            raise InvalidSubmission("submission_key must be a string")
        outcome = submit_assignment(assignment_id, worker_for_user(request.user), body, submission_key=key, campaign=campaign)
    except WorkflowError as exc:
        return JsonResponse(exc.as_dict(), status=exc.status_code)
    return JsonResponse({
        "ok": True, "duplicate": outcome.duplicate,
        "next": reverse("annotate:campaign-done", args=[campaign.slug]) + "?submitted=1",
    })


# ---------------------------------------------------------------- review

def _forbidden(request: HttpRequest) -> HttpResponse:
    return render(request, "annotate/message.html", {
        "title": "Reviewers only", "message": "This page is for reviewers (staff or members of the 'reviewers' group).",
    }, status=403)


@login_required
def review(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = _campaign(slug)
    if not is_reviewer(request.user):
        return _forbidden(request)
    # Two independent pagers: the queue oldest first, decisions latest first.
    pending_page = Paginator(review_queue(campaign, reviewer=request.user), REVIEW_PAGE_SIZE).get_page(request.GET.get("page"))
    reviewed_page = Paginator(reviewed_edits(campaign), REVIEW_PAGE_SIZE).get_page(request.GET.get("reviewed_page"))
    history = review_history(campaign, sorted({e.worker_id for e in pending_page if e.worker_id}))
    pending = [{
        "edit": e, "diff": edits.word_diff(e.source_summary.text, e.text),
        "requested": bump_taxonomy.BY_CODE.get(e.requested_error_type),
        "article": edits.highlight_inserted(e.source_summary.document.text, e.inserted_words or []),
        "worker": worker_pseudonym(campaign.pk, e.worker_id) if e.worker_id else "unknown",
        "history": history.get(e.worker_id, {}),
    } for e in pending_page]
    reviewed = [{"edit": e, "diff": edits.word_diff(e.source_summary.text, e.text),
                 "corrected": bump_taxonomy.BY_CODE.get(e.corrected_error_type)} for e in reviewed_page]
    experts = [{"item": i, "requested": bump_taxonomy.BY_CODE.get(i.requested_error_type)} for i in open_expert_items(campaign)]
    return render(request, "annotate/bump/review.html", {
        "campaign": campaign, "pending": pending, "reviewed": reviewed, "experts": experts,
        "pending_page": pending_page, "reviewed_page": reviewed_page,
        "types": bump_taxonomy.TYPES, "taxonomy": _is_taxonomy(campaign),
    })


def _back_to_review(request: HttpRequest, slug: str, anchor: str = "") -> HttpResponse:
    """Return to the review page the reviewer decided on (same pages), where they were on it: ``anchor`` is
    the queue position decided on (the next edit now sits there) or the decisions table."""
    url = reverse("annotate:bump-review", args=[slug])
    query = urlencode({key: request.POST[key] for key in ("page", "reviewed_page") if request.POST.get(key, "").isdigit()})
    return redirect((f"{url}?{query}" if query else url) + (f"#{anchor}" if anchor else ""))


@login_required
@require_POST
def review_decide(request: HttpRequest, slug: str, edit_id: int) -> HttpResponse:
    campaign = _campaign(slug)
    if not is_reviewer(request.user):
        return _forbidden(request)
    action = request.POST.get("action", "")
    position = request.POST.get("position", "")
    anchor = f"queue-{position}" if position.isdigit() else "reviewed"
    try:
        if action == "undo":
            edit = undo_review(edit_id, request.user, campaign_id=campaign.pk)
        else:
            edit = review_edit(
                edit_id, request.user, action, campaign_id=campaign.pk,
                corrected_type=request.POST.get("corrected_type", ""), comment=request.POST.get("comment", ""),
            )
    except WorkflowError as exc:
        messages.error(request, f"Edit {edit_id}: {exc.message}")
    else:
        if action == "undo":
            messages.success(request, f"Edit {edit.pk}: decision undone, back in the queue.")
        else:
            messages.success(request, f"Edit {edit.pk}: {edit.get_review_status_display().lower()}. (Undo it in the decisions table.)")
    return _back_to_review(request, slug, anchor)


@login_required
@require_POST
def expert_complete(request: HttpRequest, slug: str, item_id: int) -> HttpResponse:
    _campaign(slug)
    if not is_reviewer(request.user):
        return _forbidden(request)
    try:
        complete_expert_item(
            item_id, request.user, edited_text=request.POST.get("edited", ""),
            not_applicable=request.POST.get("action") == "not_applicable",
        )
    except WorkflowError as exc:
        messages.error(request, f"Expert item {item_id}: {exc.message}")
    else:
        messages.success(request, f"Expert item {item_id} completed.")
    return _back_to_review(request, slug)
