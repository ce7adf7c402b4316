from django.urls import include, path

from .views import common

app_name = "annotate"

urlpatterns = [
    path("", common.home, name="home"),
    # Each protocol's and the admin pages' routes live in their own module (names stay in this namespace).
    path("", include("annotate.urls_frank")),
    path("", include("annotate.urls_bump")),
    path("", include("annotate.urls_manage")),
]
