from django.urls import path

from . import views

app_name = "metrics_service"

urlpatterns = [
    path("campaigns/<slug:slug>/dashboard/", views.dashboard, name="dashboard"),
]
