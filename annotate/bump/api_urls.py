"""BUMP's REST routes (namespace ``api``), included by ``annotate/api/urls.py`` through ``BumpProtocol.api_urls_module``."""
from django.urls import path

from annotate.bump.api import EditList

urlpatterns = [
    path("campaigns/<slug:slug>/edits/", EditList.as_view(), name="campaign-edits"),
]
