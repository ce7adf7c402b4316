from django.urls import path

app_name = "metrics_service"


def dashboard(request, *args, **kwargs):
    # The dashboard's module pulls in the report's statistics and plotting libraries: imported on the
    # first dashboard request, not when a manage.py command loads the URLs.
    from . import views

    return views.dashboard(request, *args, **kwargs)


def refit_labels(request, *args, **kwargs):
    from . import views

    return views.refit_labels(request, *args, **kwargs)


urlpatterns = [
    path("campaigns/<slug:slug>/dashboard/", dashboard, name="dashboard"),
    path("campaigns/<slug:slug>/labels/refit/", refit_labels, name="refit-labels"),
]
