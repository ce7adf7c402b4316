"""The crowdsourcing domain: datasets, campaigns, workers, assignments and what workers produce.

Models hold data and invariants (constraints), not workflow: the rules live in ``annotate.services``.
Gold answers (trap labels, the negative entity, qualification keys) are stored here and only ever read
by services that score a submission; views never serialise them for an annotator.

One module per concept: campaigns, documents (and items), workers, work (assignments and what
workers produce), pay (the ledger) and jobs; everything is re-exported here, so ``annotate.models.X``
is where every shared model is found. A protocol app's models (BUMP's edits and checkpoints, FRANK's
reading-check answers...) live in its own package, and shared code reaches them only through the protocol
(``annotate.protocols.Protocol``), never by name.
"""
from .campaigns import (
    Campaign,
    CampaignStatus,
    Dataset,
    Split,
)
from .checks import CheckedAnswerCounts
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
from .independence import CopyFlag, PairTally
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
    "CampaignStatus",
    "CheckedAnswerCounts",
    "CopyFlag",
    "PairTally",
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
