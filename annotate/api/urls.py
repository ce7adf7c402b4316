"""The crowd side's routes under ``/api/`` (schema at ``/api/schema/``, docs at ``/api/docs/`` and ``/api/redoc/``).

``factlab/api_urls.py`` composes them with the metrics service's (``metrics_service/api/urls.py``) in the ``api`` namespace.
"""
from django.urls import include, path
from drf_spectacular.views import (
    SpectacularAPIView,
    SpectacularRedocView,
    SpectacularSwaggerSplitView,
)
from rest_framework.routers import DefaultRouter

from annotate.protocols import protocol_api_url_modules

# schema: its field extensions register on import, before any schema is generated.
from . import control, schema, views  # noqa: F401

router = DefaultRouter()
router.register("campaigns", views.CampaignViewSet, basename="campaign")
router.register("workers", views.WorkerViewSet, basename="worker")
router.register("imports", views.ImportJobViewSet, basename="import")

# Campaign-scoped resources: /api/campaigns/<slug>/<resource>/
campaign_router = DefaultRouter(trailing_slash=True)
campaign_router.include_root_view = False
campaign_router.register("documents", views.DocumentViewSet, basename="campaign-document")
campaign_router.register("summaries", views.SummaryViewSet, basename="campaign-summary")
campaign_router.register("items", views.ItemViewSet, basename="campaign-item")
campaign_router.register("participations", views.ParticipationViewSet, basename="campaign-participation")
campaign_router.register("page-preparations", views.PagePreparationViewSet, basename="campaign-page-preparation")

urlpatterns = [
    path("auth/token/", views.TokenView.as_view(), name="token"),
    path("auth/invitation/", views.InvitationAcceptView.as_view(), name="invitation-accept"),
    path("researchers/", views.ResearcherListView.as_view(), name="researchers"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves Swagger UI's start-up script as a file (?script): the CSP runs no inline script.
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api:schema"), name="docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="api:schema"), name="redoc"),
    path("campaigns/<slug:slug>/judgements/", views.JudgementList.as_view(), name="campaign-judgements"),
    # Each registered protocol's own resources (e.g. BUMP's edits), before the campaign routers' catch-alls.
    *(path("", include(module)) for module in protocol_api_url_modules()),
    path("campaigns/<slug:slug>/scores/", views.ScoreList.as_view(), name="campaign-scores"),
    path("campaigns/<slug:slug>/assignments/", views.AssignmentList.as_view(), name="campaign-assignments"),
    path("campaigns/<slug:slug>/export/", views.ExportView.as_view(), name="campaign-export"),
    path("campaigns/<slug:slug>/gold/", control.GoldLabelList.as_view(), name="campaign-gold"),
    path("campaigns/<slug:slug>/gold/<int:pk>/", control.GoldLabelDetail.as_view(), name="campaign-gold-detail"),
    path("campaigns/<slug:slug>/participations/<int:pk>/release-pay/", control.ReleaseHeldPay.as_view(), name="campaign-release-pay"),
    path("campaigns/<slug:slug>/", include(campaign_router.urls)),
    path("", include(router.urls)),
]
