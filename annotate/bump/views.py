"""BUMP pages: the editing task and expert review (submit and qualification are the shared views of
``annotate.views.tasks``; BUMP's qualification form is ``annotate.bump.qualification``).

Thin views: scoring lives in ``annotate.bump.content``, storing in the shared workflow and
``annotate.bump.protocol``, review in ``annotate.bump.review``.
"""
from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotate.bump import edits
from annotate.bump import kinds as bump_kinds
from annotate.bump.protocol import shown_reference
from annotate.bump.review import complete_expert_item, is_reviewer, review_edit, undo_review
from annotate.bump.selectors import open_expert_items, review_history, review_queue, reviewed_edits
from annotate.exporters.pseudonyms import worker_pseudonym
from annotate.models import Campaign
from annotate.services.errors import WorkflowError
from annotate.views.tasks import family_campaign
from taxonomies import bump as bump_taxonomy

REVIEW_PAGE_SIZE = 25


def _campaign(slug: str) -> Campaign:
    return family_campaign(slug, "bump")


def _is_taxonomy(campaign: Campaign) -> bool:
    return campaign.kind == bump_kinds.TAXONOMY


# ---------------------------------------------------------------- review

def _forbidden(request: HttpRequest) -> HttpResponse:
    return render(request, "annotate/message.html", {
        "title": "Reviewers only", "message": "This page is for the campaign's reviewers (staff, the 'reviewers' group, or invited for this campaign).",
    }, status=403)


@login_required
def review(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = _campaign(slug)
    if not is_reviewer(request.user, campaign.pk):
        return _forbidden(request)
    # Two independent pagers: the queue oldest first, decisions latest first.
    pending_page = Paginator(review_queue(campaign, reviewer=request.user), REVIEW_PAGE_SIZE).get_page(request.GET.get("page"))
    reviewed_page = Paginator(reviewed_edits(campaign), REVIEW_PAGE_SIZE).get_page(request.GET.get("reviewed_page"))
    history = review_history(campaign, sorted({e.worker_id for e in pending_page if e.worker_id}))
    pending = [{
        "edit": e, "diff": edits.word_diff(shown_reference(e.source_summary), e.text),
        "requested": bump_taxonomy.BY_CODE.get(e.requested_error_type),
        "article": edits.highlight_inserted(e.source_summary.document.text, e.inserted_words or []),
        "worker": worker_pseudonym(campaign.pk, e.worker_id) if e.worker_id else "unknown",
        "history": history.get(e.worker_id, {}),
    } for e in pending_page]
    reviewed = [{"edit": e, "diff": edits.word_diff(shown_reference(e.source_summary), e.text),
                 "corrected": bump_taxonomy.BY_CODE.get(e.corrected_error_type)} for e in reviewed_page]
    experts = [{"item": i, "requested": bump_taxonomy.BY_CODE.get(i.requested_error_type)} for i in open_expert_items(campaign)]
    return render(request, "bump/review.html", {
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
    if not is_reviewer(request.user, campaign.pk):
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
    campaign = _campaign(slug)
    if not is_reviewer(request.user, campaign.pk):
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
