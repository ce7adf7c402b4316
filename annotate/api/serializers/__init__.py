"""Serializers by resource: plain field lists; gold fields (negative entity, trap labels) only in the admin variants."""
from .auth import (
    InvitationAcceptSerializer,
    InvitationSerializer,
    ResearcherCreateSerializer,
    ResearcherSerializer,
    TokenRequestSerializer,
    TokenSerializer,
)
from .campaign_data import (
    AdminDocumentSerializer,
    DocumentSerializer,
    JudgementSerializer,
    NestedScoreSerializer,
    PseudonymousWorkerField,
    ScoreSerializer,
    SummarySerializer,
    TrapSerializer,
)
from .campaigns import CampaignSerializer, CampaignStatusSerializer
from .exports import ExportQuerySerializer
from .imports import ImportJobCreateSerializer, ImportJobSerializer
from .items import AssignmentSerializer, ItemSerializer
from .workers import BlockSerializer, ParticipationSerializer, WorkerDetailSerializer, WorkerSerializer

__all__ = [
    "AdminDocumentSerializer",
    "AssignmentSerializer",
    "BlockSerializer",
    "CampaignSerializer",
    "CampaignStatusSerializer",
    "DocumentSerializer",
    "ExportQuerySerializer",
    "ImportJobCreateSerializer",
    "ImportJobSerializer",
    "InvitationAcceptSerializer",
    "InvitationSerializer",
    "ItemSerializer",
    "JudgementSerializer",
    "NestedScoreSerializer",
    "ParticipationSerializer",
    "PseudonymousWorkerField",
    "ResearcherCreateSerializer",
    "ResearcherSerializer",
    "ScoreSerializer",
    "SummarySerializer",
    "TokenRequestSerializer",
    "TokenSerializer",
    "TrapSerializer",
    "WorkerDetailSerializer",
    "WorkerSerializer",
]
