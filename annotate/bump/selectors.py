"""Read-only queries of BUMP campaigns: exportable pairs, the review queue, open expert items."""
from __future__ import annotations

from django.db.models import Count, Exists, OuterRef, Q, QuerySet

from annotate.bump.models import Edit
from annotate.models import (
    Assignment,
    AssignmentStatus,
    Campaign,
    Item,
    ReviewStatus,
    Summary,
)

EXPORTABLE_REVIEW = (ReviewStatus.ACCEPTED, ReviewStatus.CORRECTED)


def exportable_pairs(campaign: Campaign) -> QuerySet[Summary]:
    """Edited summaries of the campaign that may be exported, oldest first.

    Reviewed edits (accepted or type-corrected) and imported pairs (edited summaries without an ``Edit``
    row, already reviewed by their source); pending and rejected edits are left out.
    """
    has_edit = Exists(Edit.objects.filter(edited_summary=OuterRef("pk")))
    reviewed = Exists(Edit.objects.filter(edited_summary=OuterRef("pk"), review_status__in=EXPORTABLE_REVIEW))
    return (
        Summary.objects.filter(document__campaign=campaign, edited_from__isnull=False)
        .annotate(has_edit=has_edit, reviewed=reviewed)
        .filter(Q(has_edit=False) | Q(reviewed=True))
        .select_related("document", "edited_from")
        .order_by("document_id", "edited_from_id", "id")
    )


def review_queue(campaign: Campaign, *, status: str = ReviewStatus.PENDING, reviewer=None) -> QuerySet[Edit]:
    """Edits of the campaign with a given review status (N/A answers excluded), oldest first.

    With ``reviewer``, the reviewer's own edits are left out (nobody reviews their own work).
    """
    edits = Edit.objects.filter(source_summary__document__campaign=campaign, is_not_applicable=False, review_status=status)
    if reviewer is not None:
        edits = edits.exclude(worker__user_id=reviewer.pk)
    return edits.select_related("source_summary__document", "edited_summary", "worker__user", "reviewer").order_by("created_at", "id")


def review_history(campaign: Campaign, worker_ids: list[int]) -> dict[int, dict[str, int]]:
    """Per worker: how many of their edits in the campaign are pending, accepted, corrected, rejected."""
    history: dict[int, dict[str, int]] = {w: dict.fromkeys(ReviewStatus.values, 0) for w in worker_ids}
    rows = (
        Edit.objects.filter(source_summary__document__campaign=campaign, is_not_applicable=False, worker_id__in=worker_ids)
        .values("worker_id", "review_status").annotate(n=Count("id"))
    )
    for row in rows:
        history[row["worker_id"]][row["review_status"]] = row["n"]
    return history


def reviewed_edits(campaign: Campaign) -> QuerySet[Edit]:
    """Edits of the campaign a reviewer has decided on (accepted, corrected or rejected), latest decision first."""
    return (
        Edit.objects.filter(source_summary__document__campaign=campaign, is_not_applicable=False)
        .exclude(review_status=ReviewStatus.PENDING)
        .select_related("source_summary__document", "edited_summary", "worker__user", "reviewer")
        .order_by("-reviewed_at", "-id")
    )


def open_expert_items(campaign: Campaign) -> QuerySet[Item]:
    """Re-queued N/A items that no expert has completed yet."""
    done = Exists(Assignment.objects.filter(item=OuterRef("pk"), status=AssignmentStatus.SUBMITTED))
    return (
        Item.objects.filter(campaign=campaign, for_experts=True)
        .annotate(done=done)
        .filter(done=False)
        .select_related("summary", "document")
        .order_by("position", "id")
    )
