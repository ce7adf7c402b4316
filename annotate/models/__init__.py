"""The crowdsourcing domain: datasets, campaigns, workers, assignments and what workers produce.

Models hold data and invariants (constraints), not workflow: the rules live in ``annotate.services``.
Gold answers (trap labels, the negative entity, qualification keys) are stored here and only ever read
by services that score a submission; views never serialise them for an annotator.

One module per concept: campaigns, documents (and items), workers, work (assignments and what
workers produce), pay (the ledger) and jobs; everything is re-exported here, so ``annotate.models.X``
is where every model is found, except the models protocol apps keep in their own packages.
"""
from .campaigns import (
    Campaign,
    CampaignKind,
    CampaignStatus,
    Dataset,
    Split,
)
from .documents import (
    BUMP_EDIT_TRAP_CODE,
    TRAP_SOURCE_WEIGHTS,
    Document,
    DocumentPage,
    Item,
    Summary,
    Trap,
    TrapSource,
    trap_weight,
)
from .independence import CopyFlag
from .jobs import (
    ImportJob,
    ImportStatus,
    PagePreparation,
)
from .pay import (
    BonusEntry,
    PayDecision,
    PayDecisionKind,
)
from .work import (
    LIVE_ASSIGNMENT_STATUSES,
    Assignment,
    AssignmentStatus,
    ExpertLabel,
    GoldLabel,
    GoldSource,
    JudgementSource,
    MetricScore,
    MetricSource,
    ReviewStatus,
    SentenceJudgement,
    SentenceLabel,
    TrapAnswer,
)
from .workers import (
    CrowdEvent,
    CrowdEventKind,
    Participation,
    QualificationAttempt,
    QualificationStatus,
    Worker,
)

__all__ = [
    "BUMP_EDIT_TRAP_CODE",
    "LIVE_ASSIGNMENT_STATUSES",
    "TRAP_SOURCE_WEIGHTS",
    "Assignment",
    "AssignmentStatus",
    "BonusEntry",
    "Campaign",
    "CampaignKind",
    "CampaignStatus",
    "CopyFlag",
    "CrowdEvent",
    "CrowdEventKind",
    "Dataset",
    "Document",
    "DocumentPage",
    "ExpertLabel",
    "GoldLabel",
    "GoldSource",
    "ImportJob",
    "ImportStatus",
    "Item",
    "JudgementSource",
    "MetricScore",
    "MetricSource",
    "PagePreparation",
    "Participation",
    "PayDecision",
    "PayDecisionKind",
    "QualificationAttempt",
    "QualificationStatus",
    "ReviewStatus",
    "SentenceJudgement",
    "SentenceLabel",
    "Split",
    "Summary",
    "Trap",
    "TrapAnswer",
    "TrapSource",
    "Worker",
    "trap_weight",
]


def __getattr__(name: str):
    # BUMP's Edit lives in the BUMP app (annotate.bump.models); the shared code that still reads edits by name
    # (the edit rows of the exports, the API's edits list, the report's counts, settling an edit's bonus) reaches
    # it here through the app registry, which imports nothing of the protocol.
    if name == "Edit":
        from django.apps import apps

        return apps.get_model("bump", "Edit")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
