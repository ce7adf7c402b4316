from django.urls import include, path

from .protocols import protocol_url_modules
from .views import entry, exits, researchers

app_name = "annotate"

urlpatterns = [
    path("", entry.home, name="home"),
    # Shared entry flow (every campaign kind).
    path("c/<slug:slug>/", entry.campaign_entry, name="campaign"),
    path("c/<slug:slug>/start/", entry.campaign_entry, name="campaign-start"),
    path("c/<slug:slug>/done/", exits.campaign_done, name="campaign-done"),
    path("c/<slug:slug>/assignments/<int:assignment_id>/heartbeat/", entry.assignment_heartbeat, name="assignment-heartbeat"),
    # Researcher accounts: the admins' invitation page and the invitee's one-time password page.
    path("researchers/", researchers.researchers_page, name="researchers"),
    path("accounts/invite/<str:uidb64>/<str:token>/", researchers.accept_invitation_page, name="accept-invitation"),
    # Each protocol's and the admin pages' routes live in their own module (names stay in this namespace).
    # Each registered protocol's pages (one URL module per family, e.g. both BUMP tasks under bump).
    *(path("", include(module)) for module in protocol_url_modules()),
    path("", include("annotate.urls_manage")),
]
