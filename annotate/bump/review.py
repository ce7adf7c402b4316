"""Expert review of BUMP edits: confirm or correct the error type, reject, and complete N/A items.

Reviewers are staff users, members of the ``reviewers`` group, and the users a campaign lists as its
reviewers (``annotate.roles.can_review``). Only reviewed (accepted or corrected) edits enter exports
(``annotate.bump.selectors.exportable_pairs``).
"""
from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from annotate.bump import edits
from annotate.bump.models import Edit
from annotate.bump.pay import settle_edit_bonus, settle_edit_pay
from annotate.bump.protocol import (
    create_edited_summary,
    edit_problems,
    schedule_auto_scoring,
    shown_reference,
)
from annotate.models import (
    Assignment,
    AssignmentStatus,
    Item,
    ReviewStatus,
    Worker,
)
from annotate.roles import REVIEWER_GROUP, can_review, make_reviewer
from annotate.services.errors import AssignmentClosed, InvalidSubmission, NotEligible
from taxonomies import bump as bump_taxonomy

REVIEW_ACTIONS = ("accept", "correct", "reject")
__all__ = ["REVIEWER_GROUP", "REVIEW_ACTIONS", "complete_expert_item", "is_reviewer", "make_reviewer", "review_edit", "undo_review"]


def is_reviewer(user, campaign_id: int | None = None) -> bool:
    return can_review(user, campaign_id)


def _require_reviewer(user, campaign_id: int | None) -> None:
    if not can_review(user, campaign_id):
        raise NotEligible("Only reviewers of this campaign (staff, the 'reviewers' group, or invited for it) may review its edits.")


def _lock_edit_for_review(edit_id: int, reviewer, campaign_id: int) -> Edit:
    """The edit, locked, if ``reviewer`` may decide it here: an edit of this campaign, not their own."""
    edit = (
        Edit.objects.select_for_update(of=("self",)).select_related("edited_summary", "worker")
        .filter(pk=edit_id, source_summary__document__campaign_id=campaign_id).first()
    )
    if edit is None:
        raise AssignmentClosed("This edit does not exist in this campaign.")
    if edit.worker is not None and edit.worker.user_id is not None and edit.worker.user_id == reviewer.pk:
        raise NotEligible("You cannot review your own edit; another reviewer must decide it.")
    if edit.is_not_applicable or edit.edited_summary is None:
        raise InvalidSubmission("An N/A answer has no edit to review; complete its expert item instead.")
    return edit


def undo_review(edit_id: int, reviewer, *, campaign_id: int) -> Edit:
    """Take back the decision on an edit: it is pending again and any bonus it earned is reversed."""
    _require_reviewer(reviewer, campaign_id)
    with transaction.atomic():
        edit = _lock_edit_for_review(edit_id, reviewer, campaign_id)
        edit.review_status = ReviewStatus.PENDING
        edit.corrected_error_type = ""
        edit.reviewer = None
        edit.review_comment = ""
        edit.reviewed_at = None
        edit.save(update_fields=["review_status", "corrected_error_type", "reviewer", "review_comment", "reviewed_at"])
        summary = edit.edited_summary
        summary.corrected_error_type = ""
        summary.save(update_fields=["corrected_error_type"])
        settle_edit_bonus(edit)
        settle_edit_pay(edit)  # its pay per item, when it waited for this review
    return edit


def review_edit(edit_id: int, reviewer, action: str, *, campaign_id: int, corrected_type: str = "", comment: str = "") -> Edit:
    """Record a reviewer's decision on an edit.

    * ``accept``: the edit has the requested type (``corrected_error_type`` = requested type);
    * ``correct``: the edit has another type, ``corrected_type`` (any taxonomy code, "other" included);
      free-style (Task 2) edits are typed this way;
    * ``reject``: not a valid minimal edit; it never enters exports.

    The edited summary's ``corrected_error_type`` follows, so exports and statistics see the reviewed type.
    A decision may be changed or undone later (the last one counts); the edit's bonus follows it
    (:func:`annotate.bump.pay.settle_edit_bonus`). Only an edit of ``campaign_id`` is decided, and
    never by the worker who made it. N/A records cannot be reviewed this way: their expert item is
    completed with :func:`complete_expert_item`.
    """
    _require_reviewer(reviewer, campaign_id)
    if action not in REVIEW_ACTIONS:
        raise InvalidSubmission(f"unknown review action {action!r}; expected one of {', '.join(REVIEW_ACTIONS)}")
    with transaction.atomic():
        edit = _lock_edit_for_review(edit_id, reviewer, campaign_id)
        if action == "accept":
            if not edit.requested_error_type:
                raise InvalidSubmission("A free-style edit has no requested type to confirm: choose its error type.", field_errors={"corrected_type": "required"})
            corrected, status = edit.requested_error_type, ReviewStatus.ACCEPTED
        elif action == "correct":
            if corrected_type not in bump_taxonomy.CODES:
                raise InvalidSubmission(
                    "Choose the edit's error type (one of: " + ", ".join(t.name for t in bump_taxonomy.TYPES) + ").",
                    field_errors={"corrected_type": "required"},
                )
            corrected = corrected_type
            status = ReviewStatus.ACCEPTED if corrected == edit.requested_error_type else ReviewStatus.CORRECTED
        else:
            corrected, status = "", ReviewStatus.REJECTED
        edit.review_status = status
        edit.corrected_error_type = corrected
        edit.reviewer = reviewer
        edit.review_comment = (comment or "")[:2000]
        edit.reviewed_at = timezone.now()
        edit.save(update_fields=["review_status", "corrected_error_type", "reviewer", "review_comment", "reviewed_at"])
        summary = edit.edited_summary
        summary.corrected_error_type = corrected
        summary.save(update_fields=["corrected_error_type"])
        settle_edit_bonus(edit)
        settle_edit_pay(edit)  # its pay per item, when it waited for this review
    return edit


def complete_expert_item(item_id: int, reviewer, *, edited_text: str = "", not_applicable: bool = False) -> Edit:
    """An expert's edit for a re-queued N/A item (or the expert's confirmation that the type is N/A).

    The same minimality rules as for workers apply. The expert edit is accepted at once (it is a review).
    The item is closed by a submitted assignment of the reviewer, so it is completed only once.
    """
    _require_reviewer(reviewer, Item.objects.filter(pk=item_id).values_list("campaign_id", flat=True).first())
    worker, _ = Worker.objects.get_or_create(user=reviewer)
    with transaction.atomic():
        item = Item.objects.select_for_update(of=("self",)).select_related("campaign", "summary", "document").filter(pk=item_id, for_experts=True).first()
        if item is None:
            raise AssignmentClosed("This expert item does not exist.")
        if item.assignments.filter(status=AssignmentStatus.SUBMITTED).exists():
            raise AssignmentClosed("This expert item was already completed.")
        now = timezone.now()
        assignment = Assignment.objects.create(
            item=item, worker=worker, status=AssignmentStatus.SUBMITTED, expires_at=now, submitted_at=now,
        )
        common = {
            "assignment": assignment, "worker": worker, "source_summary": item.summary,
            "requested_error_type": item.requested_error_type, "review_status": ReviewStatus.ACCEPTED,
            "reviewer": reviewer, "reviewed_at": now, "review_comment": "expert edit",
        }
        if not_applicable:
            return Edit.objects.create(is_not_applicable=True, **common)
        reference = shown_reference(item.summary)
        problems = edit_problems(item, reference, edited_text or "")
        if problems:
            raise InvalidSubmission(problems["edited"], field_errors=problems)
        text = edits.clean_edit(edited_text)
        summary = create_edited_summary(item.summary, text, requested_error_type=item.requested_error_type, external_id=f"expert:{assignment.pk}")
        summary.corrected_error_type = item.requested_error_type
        summary.save(update_fields=["corrected_error_type"])
        inserted = edits.inserted_words(reference, text)
        hints = edits.edit_hints(inserted, item.document.text, item.requested_error_type)
        edit = Edit.objects.create(
            edited_summary=summary, text=text, word_distance=edits.word_edit_distance(reference, text),
            inserted_words=inserted, hint_inserted_in_article=hints.inserted_in_article,
            hint_likely_kind=hints.likely_kind, hint_disagrees=hints.disagrees,
            corrected_error_type=item.requested_error_type, **common,
        )
        schedule_auto_scoring(item.campaign, [summary.pk])
    return edit
