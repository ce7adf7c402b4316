"""The interface a campaign kind implements on top of the shared workflow."""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

from annotate.models import Assignment, Campaign


@dataclass
class SubmissionResult:
    """What a protocol reports after storing a submission (inside the submit transaction)."""

    #: Rows stored (judgements, edits...), for the response and the logs.
    stored_rows: int = 0
    #: Trap answers seen in this submission: (correct count, total count), added to the participation.
    traps_correct: int = 0
    traps_total: int = 0
    #: The item was answered faster than the campaign's minimum time per sentence (counted on the participation).
    too_fast: bool = False
    #: Summary ids created by the submission (BUMP edits), for automatic scoring.
    new_summary_ids: list[int] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


class Protocol(ABC):
    kind: str
    #: URL names (namespace ``annotate``, taking the campaign ``slug``) of this protocol's pages; the shared
    #: campaign entry page redirects a worker to the step they are at.
    tutorial_url_name: str | None = None
    qualification_url_name: str | None = None
    task_url_name: str = ""
    #: Optional pages: the read-only preview for crowd platforms, and the expert review queue (linked from
    #: the admin campaign page).
    preview_url_name: str | None = None
    review_url_name: str | None = None
    #: The protocol's words on admin pages and CSVs; None hides a figure the protocol does not have.
    terms: ClassVar[dict[str, str | None]] = {
        "items": "Items", "items_csv": "items", "trap_score": "Trap score", "entity": "Reading check",
        "too_fast": "Too fast", "judgements_csv": "sentence judgements with lead times (CSV)",
    }

    def prepare_campaign(self, campaign: Campaign, *, only_missing: bool = True, progress=None) -> int:
        """Compute once, after an import, what task pages need from the campaign's documents (a background
        job: ``annotate.prepare_campaign_pages``); returns how many documents were prepared. ``only_missing``:
        skip documents already prepared by the current code; ``progress(done, total)`` is called as it goes."""
        return 0

    def prepare_assignment(self, assignment: Assignment) -> None:
        """Fill ``assignment.layout`` / ``checkpoint_code`` when the assignment is created (server-side only)."""

    @abstractmethod
    def store_submission(self, assignment: Assignment, payload: dict[str, Any]) -> SubmissionResult:
        """Validate ``payload`` and store it. Raise ``InvalidSubmission`` to refuse (the transaction rolls back)."""

    def qualification_passed(self, campaign: Campaign, score: float) -> bool:
        return score >= campaign.qualification_pass_score

