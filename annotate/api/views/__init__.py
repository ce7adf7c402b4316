"""API views by resource: thin wrappers that check the role, read the campaign, call a service or selector, serialise.

Every campaign-scoped endpoint lives under ``/api/campaigns/<slug>/`` and first resolves the campaign
among those the caller may read (404 otherwise). Annotators are refused everywhere (403).
"""
from .auth import TokenView
from .base import CampaignScoped, WorkerRowsList
from .campaign_data import DocumentViewSet, JudgementList, ScoreList, SummaryViewSet
from .campaigns import CampaignViewSet
from .exports import ExportView
from .imports import ImportJobViewSet
from .items import AssignmentList, ItemViewSet
from .page_preparations import PagePreparationViewSet
from .participations import ParticipationViewSet
from .researchers import InvitationAcceptView, ResearcherListView
from .workers import WorkerViewSet

__all__ = [
    "AssignmentList",
    "CampaignScoped",
    "CampaignViewSet",
    "DocumentViewSet",
    "ExportView",
    "ImportJobViewSet",
    "InvitationAcceptView",
    "ItemViewSet",
    "JudgementList",
    "PagePreparationViewSet",
    "ParticipationViewSet",
    "ResearcherListView",
    "ScoreList",
    "SummaryViewSet",
    "TokenView",
    "WorkerRowsList",
    "WorkerViewSet",
]
