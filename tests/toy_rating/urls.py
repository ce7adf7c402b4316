"""The rating task's routes (namespace ``annotate``): the page, and the shared submit view."""
from django.urls import path

from annotate.views import tasks

from . import views

urlpatterns = [
    path("c/<slug:slug>/rating/task/", views.task, name="rating-task"),
    path("c/<slug:slug>/rating/task/<int:assignment_id>/submit/", tasks.submit, {"family": "rating"}, name="rating-submit"),
]
