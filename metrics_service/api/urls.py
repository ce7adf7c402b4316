"""The metrics service's routes under ``/api/``: scoring jobs, the report, its paper tables and figures.

``factlab/api_urls.py`` composes them with the crowd side's (``annotate/api/urls.py``) in the ``api`` namespace.
"""
from django.urls import include, path
from rest_framework.routers import DefaultRouter

# schema: the metric names it states as enums register on import, before any schema is generated.
from . import report_outputs, schema, views  # noqa: F401

campaign_router = DefaultRouter(trailing_slash=True)
campaign_router.include_root_view = False
campaign_router.register("scoring-jobs", views.ScoringJobViewSet, basename="campaign-scoring-job")

urlpatterns = [
    path("campaigns/<slug:slug>/report/", views.ReportView.as_view(), name="campaign-report"),
    path("campaigns/<slug:slug>/labels/", views.LabelRefitView.as_view(), name="campaign-labels"),
    path("campaigns/<slug:slug>/report/outputs/", report_outputs.ReportOutputListView.as_view(), name="campaign-report-outputs"),
    path("campaigns/<slug:slug>/report/outputs/<str:filename>", report_outputs.ReportOutputView.as_view(), name="campaign-report-output"),
    path("campaigns/<slug:slug>/", include(campaign_router.urls)),
]
