from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include("factlab.api_urls")),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", include("annotate.urls")),
    path("", include("metrics_service.urls")),
]

handler400 = "factlab.errors.bad_request"
handler404 = "factlab.errors.not_found"
handler500 = "factlab.errors.server_error"
